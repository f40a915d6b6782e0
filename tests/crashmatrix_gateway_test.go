package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// The crash matrix's gateway scenario (L1, Z3): the round's one call is
// made through the console's MCP gateway by the MCP Go SDK's client, as a
// reconnecting client makes it: a request that ends without a result (a
// dropped connection, a refused request) is sent again, the same call,
// on a new connection, until one has a result. The scenario's input names
// the round the gateway starts for it (round 1 of run mcp-<run>), so the
// matrix's checks read the client's one result as a round's.

// gatewayCaller is the client of one gateway scenario's run.
type gatewayCaller struct {
	t       *testing.T
	console *consoleProc
	in      round.Input
	run     string

	mu     sync.Mutex
	cancel context.CancelFunc // the request in flight
	sends  int
}

// startGatewayCall starts a console that lists http_request and sends in's
// one call through its gateway; the result comes on the channel as a
// round's result.
func (e *env) startGatewayCall(in round.Input) (<-chan result, *gatewayCaller) {
	e.t.Helper()
	c := e.startConsoles(1, "MCP_GATEWAY_TOOLS=http_request")[0]
	require.Len(e.t, in.Assistant.ToolCalls, 1, "a gateway scenario makes one call")
	tc := in.Assistant.ToolCalls[0]
	var args map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(tc.Function.Arguments), &args))
	run := strings.TrimPrefix(in.RunID, names.GatewayPrefix)
	g := &gatewayCaller{t: e.t, console: c, in: in, run: run}
	ch := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var errs []string
		for {
			rctx, rcancel := context.WithCancel(ctx)
			g.mu.Lock()
			g.cancel = rcancel
			g.sends++
			g.mu.Unlock()
			res, err := sendGatewayCall(rctx, e.t, c, in, run, tc.Function.Name, args)
			rcancel()
			if err == nil {
				res = e.firstOf(ctx, in, res)
				b, _ := json.Marshal(res)
				ch <- result{stdout: string(b)}
				return
			}
			errs = append(errs, err.Error())
			select {
			case <-ctx.Done():
				ch <- result{code: 1, stderr: "no result through the gateway: " + strings.Join(errs, "; ")}
				return
			case <-time.After(100 * time.Millisecond): // the client's back-off before it connects again
			}
		}
	}()
	return ch, g
}

// firstOf is the scenario's call's result for what the client got. A call
// sent again after its round ended (its request dropped just before) is a
// new call of the run, in a later round, where the run's dedupe answers it
// with the first call's result (P1.3) and nothing runs again: then the
// scenario's result is round 1's, when that holds the same content.
func (e *env) firstOf(ctx context.Context, in round.Input, got round.Result) round.Result {
	r := got.Results[0]
	if r.CallID == in.Assistant.ToolCalls[0].ID || r.Status != round.StatusDeduped {
		return got
	}
	out := e.starter(ctx, "", "result", in.WorkflowID())
	var first round.Result
	if out.code != 0 || json.Unmarshal([]byte(out.stdout), &first) != nil {
		return got
	}
	for _, fr := range first.Results {
		if fr.CallID == in.Assistant.ToolCalls[0].ID && fr.Content == r.Content {
			e.t.Logf("the call sent again ran in a later round (%s), deduped: the first call's result", r.CallID)
			return round.Result{Results: []round.CallResult{fr}, Messages: []round.Message{{Role: "tool", ToolCallID: fr.CallID, Content: fr.Content}}}
		}
	}
	return got
}

// goAway drops the request in flight, as a client whose connection broke;
// the client connects again and sends the same call.
func (g *gatewayCaller) goAway() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		g.cancel()
	}
}

// another sends another call, a read-only GET of url, on a new
// connection, and returns its result: the gateway's run still takes
// calls (a round of its own, which needs no approver).
func (g *gatewayCaller) another(ctx context.Context, url string) (round.Result, error) {
	next := g.in
	next.Round++
	id := names.GatewayCallID(next.Round, 0)
	next.Assistant.ToolCalls = []round.ToolCall{call(id, "http_request", map[string]any{"url": url})}
	return sendGatewayCall(ctx, g.t, g.console, next, g.run, "http_request", map[string]any{"url": url})
}

// sent is how many times the client sent the call.
func (g *gatewayCaller) sent() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sends
}

// sendGatewayCall connects and sends the call once: a result that names
// its round and call, as a round's result; an error for anything else.
func sendGatewayCall(ctx context.Context, t *testing.T, c *consoleProc, in round.Input, run, tool string, args map[string]any) (round.Result, error) {
	cs, err := gatewayClient(t, ctx, c, c.agent, in.SessionID, run)
	if err != nil {
		return round.Result{}, fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = cs.Close() }()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return round.Result{}, fmt.Errorf("tools/call: %w", err)
	}
	callID := metaOf(r, "dev.toolround/call_id")
	if callID == "" {
		return round.Result{}, fmt.Errorf("tools/call answered without a round's result: %s", textOf(r))
	}
	if wf := metaOf(r, "dev.toolround/workflow_id"); wf != in.WorkflowID() {
		// Another round ran the call: its result is not the scenario's.
		callID = wf + "/" + callID
	}
	return round.Result{
		Results: []round.CallResult{{CallID: callID, Tool: tool, Status: round.Status(metaOf(r, "dev.toolround/status")),
			Content: textOf(r), OperationID: metaOf(r, "dev.toolround/operation_id")}},
		Messages: []round.Message{{Role: "tool", ToolCallID: callID, Content: textOf(r)}},
	}, nil
}

// roundClosed reports whether the workflow id has closed on the shared
// Temporal server: false while it runs or before it started.
func roundClosed(t *testing.T, id string) bool {
	t.Helper()
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(), Logger: testenv.QuietLogger()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := tc.DescribeWorkflow(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false
	}
	require.NoError(t, err)
	return d.RawResponse.GetWorkflowExecutionInfo().GetCloseTime() != nil
}

// gatewaySettled reports whether a trace has the gateway workflow's task
// after its round's last: two workflow tasks recorded after the round
// published its result.
func gatewaySettled(lines []string) bool {
	n := -1
	for _, l := range lines {
		switch {
		case l == "workflow.round.publish.after":
			n = 0
		case l == "grpc.after:RespondWorkflowTaskCompleted" && n >= 0:
			n++
		}
	}
	return n >= 2
}
