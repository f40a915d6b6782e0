package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
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
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{elicitKey: &mcp.ElicitParams{Mode: "form", Message: elicitMessage(pend), RequestedSchema: elicitSchema}},
		RequestState:  pend.ApprovalID,
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

// clientRecords keeps what a run's client declared (the Temporal backend,
// in Redis).
type clientRecords interface {
	SetClientElicits(ctx context.Context, session, run string, form bool) error
	ClientElicits(ctx context.Context, session, run string) bool
}

// elicitIDPrefix starts the id of the gateway's elicitation/create
// requests (2025-11-25): the rest names the round, the call and the wait.
const elicitIDPrefix = "toolround-elicit:"

// noteInitialize records whether a 2025-11-25 client declares form
// elicitation (an elicitation capability without modes, or with form).
func (g *gateway) noteInitialize(ctx context.Context, session, run string, params json.RawMessage) {
	cr, ok := g.b.(clientRecords)
	if !ok {
		return
	}
	var p struct {
		Capabilities struct {
			Elicitation *struct {
				Form *json.RawMessage `json:"form"`
				URL  *json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	e := p.Capabilities.Elicitation
	form := e != nil && (e.Form != nil || e.URL == nil)
	if err := cr.SetClientElicits(ctx, session, run, form); err != nil {
		g.s.log.Warn("mcp gateway: could not record the client's capabilities", "err", err)
	}
}

// elicitsOld reports whether a 2025-11-25 call of p may be put to its
// client as elicitation/create.
func (g *gateway) elicitsOld(ctx context.Context, p principal, session, run string) bool {
	cr, ok := g.b.(clientRecords)
	return ok && p.Elicit && g.opts.Approve == "elicitation" && cr.ClientElicits(ctx, session, run)
}

// callStreaming runs a 2025-11-25 tools/call in this layer, its answer a
// stream of events: elicitation/create when the call waits for a decision
// the client's person may make, progress when asked for, then the result.
func (g *gateway) callStreaming(ctx context.Context, w http.ResponseWriter, req rpcRequest, p principal, session, run string, ts []gatewayTool) {
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &params)
	t, err := g.take(ctx, session, run, ts, params.Name, params.Arguments)
	if err != nil {
		writeRPC(w, req.ID, nil, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(msg any) {
		b, _ := json.Marshal(msg)
		_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	asked := ""
	lastProgress, n := time.Now(), 0.0
	for {
		wctx, cancel := context.WithTimeout(ctx, elicitAfter)
		res, err := g.b.Wait(wctx, t.WorkflowID)
		cancel()
		// A wait cut short (by its own deadline, or the SDK's shorter
		// one inside it) while the round runs is no failure.
		timedOut := err != nil && ctx.Err() == nil && g.running(ctx, t.WorkflowID)
		if ctx.Err() != nil {
			return // the client went away; the call goes on
		}
		if err == nil {
			if out, ok := g.resultFor(ctx, session, t, res); ok {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": out})
				return
			}
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": &rpcError{Code: -32603, Message: "the round has no result for the call"}})
			return
		}
		if !timedOut {
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": &rpcError{Code: -32603, Message: err.Error()}})
			return
		}
		if pend, ok := g.askable(ctx, t); ok && pend.ApprovalID != asked {
			asked = pend.ApprovalID
			send(map[string]any{"jsonrpc": "2.0", "id": elicitIDPrefix + t.WorkflowID + "|" + t.CallID + "|" + pend.ApprovalID,
				"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": elicitMessage(pend), "requestedSchema": elicitSchema}})
		}
		if params.Meta.ProgressToken != nil && time.Since(lastProgress) >= g.opts.ProgressEvery {
			lastProgress, n = time.Now(), n+1
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
				"progressToken": params.Meta.ProgressToken, "progress": n, "message": "the call is running or waiting for a person's decision"}})
		}
	}
}

// elicitAnswer takes a client's answer to an elicitation/create (a
// JSON-RPC response POSTed to the gateway): the wait it names is decided
// when the person accepted, it is still that wait, and the call is one of
// this client's run (the URL's session and run).
func (g *gateway) elicitAnswer(ctx context.Context, p principal, session, run, id string, result json.RawMessage) {
	rest, _ := strings.CutPrefix(id, elicitIDPrefix)
	parts := strings.Split(rest, "|")
	if len(parts) != 3 || !p.Elicit || g.opts.Approve != "elicitation" {
		return
	}
	wfID, callID, approvalID := parts[0], parts[1], parts[2]
	if _, _, ok := parseTaskID(wfID+"/"+callID, session); !ok || strings.Split(wfID, "/")[2] != names.GatewayRunID(run) {
		return // only a call of this client's own run
	}
	var r mcp.ElicitResult
	if json.Unmarshal(result, &r) != nil {
		return
	}
	g.applyElicited(ctx, p, round.GatewayTicket{WorkflowID: wfID, CallID: callID}, approvalID, &r)
}

var elicitSchema = tools.Schema(`{"type":"object","properties":{` +
	`"approve":{"type":"boolean","title":"Run this call"},` +
	`"reason":{"type":"string","title":"Why (recorded with the decision)"}},"required":["approve"]}`)

func elicitMessage(pend round.Pending) string {
	return fmt.Sprintf("toolround asks whether this call may run.\nTool: %s\nArguments (as sent, not instructions): %s\nWhy it asks: %s",
		pend.Tool, visibleArgs(pend.Arguments), pend.Reason)
}

// running reports whether a round still runs.
func (g *gateway) running(ctx context.Context, wfID string) bool {
	v, err := g.s.b.Round(ctx, wfID)
	return err == nil && v.Status == "running"
}
