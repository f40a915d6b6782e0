package console

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
)

// Approvals by elicitation (Z3): with MCP_GATEWAY_APPROVE=elicitation, a
// call of a token whose line says approve=elicitation (an operator's
// statement that a person sits at that MCP client) that waits for a plain
// approval is answered with an input request (revision 2026-07-28's
// input_required result): a form of one boolean approve and a string
// reason, the tool and its arguments shown as inert text. The client's
// retry of the same call carries the answer, which decides the wait via
// "elicitation", unverified, by the token's name. It never answers a limit,
// a call that always asks, and never remembers, widens or edits anything;
// a decline or cancel leaves the call waiting for an approver.

// elicitAfter is how long a call runs before the gateway looks whether it
// waits for a decision it may ask the client for.
const elicitAfter = time.Second

// elicitKey names the gateway's one input request.
const elicitKey = "approve"

// elicit applies the answer a retried call carries, then asks for a
// decision when the call waits for one it may ask; nil: go on waiting.
func (g *gateway) elicit(ctx context.Context, req *mcp.CallToolRequest, p principal, t round.GatewayTicket) *mcp.CallToolResult {
	state := req.Params.RequestState
	if r, ok := req.Params.InputResponses[elicitKey].(*mcp.ElicitResult); ok && state != "" {
		g.applyElicited(ctx, p, t, state, r)
	}
	wctx, cancel := context.WithTimeout(ctx, elicitAfter)
	_, err := g.b.Wait(wctx, t.WorkflowID)
	cancel()
	if err == nil || ctx.Err() != nil {
		return nil // done: the caller reads the result
	}
	pend, ok := g.askable(ctx, t)
	if !ok || pend.ApprovalID == state {
		return nil // nothing to ask, or this person answered this wait already
	}
	msg := fmt.Sprintf("toolround asks whether this call may run.\nTool: %s\nArguments (as sent, not instructions): %s\nWhy it asks: %s",
		pend.Tool, visibleArgs(pend.Arguments), pend.Reason)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{elicitKey: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Run this call"},
				"reason":  map[string]any{"type": "string", "title": "Why (recorded with the decision)"},
			},
			"required": []string{"approve"},
		}}},
		RequestState: pend.ApprovalID,
	}
}

// askable is the call's wait when the person at the client may decide it:
// a plain approval (no limit), of a call that does not always ask.
func (g *gateway) askable(ctx context.Context, t round.GatewayTicket) (round.Pending, bool) {
	v, err := g.s.b.Round(ctx, t.WorkflowID)
	if err != nil {
		return round.Pending{}, false
	}
	for _, pend := range v.Pending {
		if pend.CallID == t.CallID && pend.Kind == round.KindConfirm && len(pend.Limits) == 0 && !pend.AlwaysAsks && pend.ApprovalID != "" {
			return pend, true
		}
	}
	return round.Pending{}, false
}

// applyElicited decides the call's wait as the person answered, when the
// wait is still the one they were asked about.
func (g *gateway) applyElicited(ctx context.Context, p principal, t round.GatewayTicket, approvalID string, r *mcp.ElicitResult) {
	if r.Action != "accept" {
		return // declined or cancelled: an approver decides
	}
	approve, ok := r.Content["approve"].(bool)
	if !ok {
		return
	}
	pend, ok := g.askable(ctx, t)
	if !ok || pend.ApprovalID != approvalID {
		return // decided meanwhile, or another wait
	}
	reason, _ := r.Content["reason"].(string)
	if len(reason) > 1000 {
		reason = reason[:1000]
	}
	err := g.s.b.Decide(ctx, Decision{WorkflowID: t.WorkflowID, CallID: t.CallID, ApprovalID: approvalID, WaitID: pend.WaitID,
		Approve: approve, Reason: reason, By: p.Name, Via: "elicitation", Verified: false})
	if err != nil {
		g.s.log.Warn("mcp gateway: an elicited decision was refused", "workflow_id", t.WorkflowID, "call_id", t.CallID, "err", err)
	}
}

// visibleArgs shows arguments as inert text (T14), cut.
func visibleArgs(s string) string {
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return text.Visible(s)
}

// multiRoundTrip reports a request of revision 2026-07-28 or later, whose
// client takes input requests in a result; an older client would need a
// request from server to client, which a stateless gateway cannot send.
func multiRoundTrip(req *mcp.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	ip := req.Session.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= extensionRevision
}
