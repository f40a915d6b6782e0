// Package gateway is the MCP gateway's workflows (Z2): Workflow, the run of
// one MCP client, which gathers its tools/call updates into rounds, and
// ToolsWorkflow, behind the gateway's tools/list.
package gateway

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/internal/workflows/toolcatalog"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// The MCP gateway's run (Z2): the workflow mcpgateway/<session>/<run> owns
// the state of one MCP client's run. Each tools/call reaches it as the
// update "call"; calls that arrive within Gather of the first form
// one round, started at once as a child with the state as it stands, so
// rounds overlap while one waits for a person. A call identical in tool
// and canonical arguments to an open call of the run attaches to it. When
// a round ends its state change is merged into the run's (MergeRound),
// and the usage the next round takes is signed here, since no client
// holds this run's state (T15).

// Gather is how long a gateway round waits for more calls after
// its first.
const Gather = 20 * time.Millisecond

// continueEvery is how many rounds a gateway execution starts
// before it continues as new (when none is open).
const continueEvery = 500

// startTries bounds the round numbers a gateway skips when their
// ids are taken (a run whose gateway workflow was ended and started
// again).
const startTries = 50

type call struct {
	call    round.GatewayCall
	ticket  round.GatewayTicket
	started bool
	err     error
}

type run struct {
	in      round.GatewayInput
	state   *round.RunState
	next    int
	batch   []*call
	open    map[string]*call
	running int
	rounds  int
}

// Workflow is the gateway run's workflow, mcpgateway/<session>/<run>.
func Workflow(ctx workflow.Context, in round.GatewayInput) error {
	g := &run{in: in, state: &round.RunState{}, next: 1, open: map[string]*call{}}
	if in.Carry != nil {
		if in.Carry.State != nil {
			g.state = in.Carry.State
		}
		g.next = max(1, in.Carry.Next)
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, names.UpdateGatewayCall, g.take,
		workflow.UpdateHandlerOptions{Validator: func(c round.GatewayCall) error { return c.Validate() }})
	if err != nil {
		return err
	}
	for {
		if err := workflow.Await(ctx, func() bool { return len(g.batch) > 0 || g.ready(ctx) }); err != nil {
			return err
		}
		if len(g.batch) == 0 {
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			if len(g.batch) > 0 || g.running > 0 {
				continue
			}
			return workflow.NewContinueAsNewError(ctx, names.WorkflowGateway, round.GatewayInput{
				SessionID: in.SessionID, Run: in.Run, Carry: &round.GatewayCarry{State: g.state, Next: g.next}})
		}
		if err := workflow.Sleep(ctx, Gather); err != nil {
			return err
		}
		calls := g.batch
		g.batch = nil
		g.start(ctx, calls)
	}
}

// ready reports a gateway execution that should continue as new: long
// enough, and no round open.
func (g *run) ready(ctx workflow.Context) bool {
	if g.running > 0 || len(g.batch) > 0 {
		return false
	}
	return g.rounds >= continueEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
}

// take is the update "call": it joins the call to an open identical one
// or to the next round, and answers once that round has started.
func (g *run) take(ctx workflow.Context, c round.GatewayCall) (round.GatewayTicket, error) {
	key := c.Tool + "\x00" + c.Args
	gc, attached := g.open[key]
	if !attached {
		gc = &call{call: c}
		g.open[key] = gc
		g.batch = append(g.batch, gc)
	}
	if err := workflow.Await(ctx, func() bool { return gc.started }); err != nil {
		return round.GatewayTicket{}, err
	}
	if gc.err != nil {
		return round.GatewayTicket{}, gc.err
	}
	t := gc.ticket
	t.Attached = attached
	return t, nil
}

// start starts one round with calls and, in the background, merges its
// state when it ends.
func (g *run) start(ctx workflow.Context, calls []*call) {
	st := g.state.Clone()
	msg := round.Message{Role: "assistant"}
	var fut workflow.ChildWorkflowFuture
	var in round.Input
	var err error
	for try := 0; try < startTries; try++ {
		n := g.next
		g.next++
		msg.ToolCalls = msg.ToolCalls[:0]
		for i, c := range calls {
			st.MarkFetched(c.call.Tool) // every listed tool is loaded and fetched (Z2)
			msg.ToolCalls = append(msg.ToolCalls, round.ToolCall{ID: names.GatewayCallID(n, i), Type: "function",
				Function: round.FunctionCall{Name: c.call.Tool, Arguments: round.Arguments(c.call.Args)}})
		}
		g.signUsage(ctx, st, n)
		in = round.Input{SessionID: g.in.SessionID, RunID: names.GatewayRunID(g.in.Run), Round: n,
			Provider: round.GatewayProvider, Assistant: msg, State: st}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            in.WorkflowID(),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			// A round keeps its promises on its own: a gateway run that is
			// ended leaves its open rounds to finish.
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
			StaticSummary:     fmt.Sprintf("round %d of MCP gateway run %s (%d calls)", n, g.in.Run, len(calls)),
		})
		fut = workflow.ExecuteChildWorkflow(cctx, names.WorkflowName, in)
		err = fut.GetChildWorkflowExecution().Get(ctx, nil)
		if !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			break
		}
	}
	g.rounds++
	for i, c := range calls {
		c.started = true
		if err != nil {
			c.err = temporal.NewApplicationError("the gateway could not start a round: "+err.Error(), "GatewayRoundNotStarted")
			delete(g.open, c.call.Tool+"\x00"+c.call.Args)
			continue
		}
		c.ticket = round.GatewayTicket{WorkflowID: in.WorkflowID(), CallID: names.GatewayCallID(in.Round, i), Round: in.Round}
	}
	if err != nil {
		return
	}
	g.running++
	from := st
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() { g.running-- }()
		var out round.Output
		if err := fut.Get(ctx, &out); err != nil {
			workflow.GetLogger(ctx).Warn("a gateway round failed; the run's state keeps what it was", "round", in.WorkflowID(), "error", err)
		} else {
			g.state.MergeRound(from, out.State)
		}
		for _, c := range calls {
			k := c.call.Tool + "\x00" + c.call.Args
			if g.open[k] == c {
				delete(g.open, k)
			}
		}
	})
}

// signUsage gives st's usage a MAC for round n of the run (T15): the
// gateway holds the run's state, so it hands each round the usage the
// rounds before it counted, as a client hands on a round's output.
func (g *run) signUsage(ctx workflow.Context, st *round.RunState, n int) {
	if st.Usage == nil {
		return
	}
	st.Usage.Round = n - 1
	st.Usage.MAC = ""
	in := wire.UsageInput{SessionID: g.in.SessionID, RunID: names.GatewayRunID(g.in.Run), Usage: *st.Usage, Bound: true}
	var out wire.SignUsageOutput
	if err := workflow.ExecuteLocalActivity(workflows.KeyOptions(ctx, "sign the run's usage"), wire.ActivitySignUsage, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("signing the gateway run's usage failed; the round treats it as unsigned", "error", err)
		return
	}
	st.Usage.MAC = out.MAC
}

// ToolsWorkflow is the workflow behind the gateway's tools/list: one
// activity on a worker of the task queue lists what the gateway may offer.
func ToolsWorkflow(ctx workflow.Context) ([]round.GatewayTool, error) {
	var out []round.GatewayTool
	err := toolcatalog.List(ctx, &out, wire.ActivityListGatewayTools)
	return out, err
}
