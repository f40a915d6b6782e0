package gateway_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows/gateway"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// fakeRounds stands in for the round workflow: it records each round's
// input, and a round holds until the signal release lets it end.
type fakeRounds struct {
	mu     sync.Mutex
	inputs []round.Input
}

func (f *fakeRounds) run(ctx workflow.Context, in round.Input) (round.Output, error) {
	f.mu.Lock()
	f.inputs = append(f.inputs, in)
	f.mu.Unlock()
	workflow.GetSignalChannel(ctx, "release").Receive(ctx, nil)
	st := in.State.Clone()
	st.Seq++
	for _, c := range in.Assistant.ToolCalls {
		st.Dedupe[c.Function.Name+string(c.Function.Arguments)] = round.DedupeEntry{Tool: c.Function.Name, CallID: c.ID, Round: in.Round, Seq: st.Seq}
	}
	if st.Usage == nil {
		st.Usage = &round.Usage{}
	}
	st.Usage.Calls += int64(len(in.Assistant.ToolCalls))
	out := round.Output{State: st}
	for _, c := range in.Assistant.ToolCalls {
		out.Results = append(out.Results, round.CallResult{CallID: c.ID, Tool: c.Function.Name, Status: round.StatusOK})
	}
	return out, nil
}

func (f *fakeRounds) seen() []round.Input {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]round.Input(nil), f.inputs...)
}

type ticketOf struct {
	mu sync.Mutex
	t  map[string]round.GatewayTicket
	e  map[string]error
}

func (r *ticketOf) call(env *testsuite.TestWorkflowEnvironment, id string, c round.GatewayCall) {
	env.UpdateWorkflow(names.UpdateGatewayCall, id, &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) { r.set(id, round.GatewayTicket{}, err) },
		OnComplete: func(v any, err error) {
			t, _ := v.(round.GatewayTicket)
			r.set(id, t, err)
		},
	}, c)
}

func (r *ticketOf) set(id string, t round.GatewayTicket, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t == nil {
		r.t, r.e = map[string]round.GatewayTicket{}, map[string]error{}
	}
	r.t[id], r.e[id] = t, err
}

// TestGatewayGathersAttachesAndMergesZ2: calls within 20 ms form one
// round; a call identical to an open one attaches to it; a later call
// starts another round at once while the first still waits, with the
// state as it stands; each round's change is merged; a bad call is
// refused by the validator.
func TestGatewayGathersAttachesAndMergesZ2(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	f := &fakeRounds{}
	env.RegisterWorkflowWithOptions(f.run, workflow.RegisterOptions{Name: names.WorkflowName})
	env.RegisterWorkflowWithOptions(gateway.Workflow, workflow.RegisterOptions{Name: names.WorkflowGateway})
	var signed []wire.UsageInput
	env.RegisterActivityWithOptions(func(_ context.Context, in wire.UsageInput) (wire.SignUsageOutput, error) {
		signed = append(signed, in)
		return wire.SignUsageOutput{MAC: "mac"}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySignUsage})
	tk := &ticketOf{}
	a := round.GatewayCall{Tool: "read_files", Args: `{"paths":["a"]}`}
	b := round.GatewayCall{Tool: "edit_file", Args: `{"new_text":"x","path":"b"}`}
	env.RegisterDelayedCallback(func() {
		tk.call(env, "u1", a)
		tk.call(env, "u2", b)
		tk.call(env, "bad", round.GatewayCall{Tool: "read_files", Args: `[1]`})
	}, time.Millisecond)
	env.RegisterDelayedCallback(func() {
		tk.call(env, "u3", b) // the same edit, while it is open: attaches
		tk.call(env, "u4", round.GatewayCall{Tool: "read_files", Args: `{"paths":["c"]}`})
	}, time.Second)
	env.RegisterDelayedCallback(func() { require.NoError(t, env.SignalWorkflowByID("toolround/s/mcp-r/2", "release", nil)) }, 2*time.Second)
	env.RegisterDelayedCallback(func() { require.NoError(t, env.SignalWorkflowByID("toolround/s/mcp-r/1", "release", nil)) }, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		tk.call(env, "u5", round.GatewayCall{Tool: "read_files", Args: `{"paths":["d"]}`})
	}, 4*time.Second)
	env.RegisterDelayedCallback(func() {
		require.NoError(t, env.SignalWorkflowByID("toolround/s/mcp-r/3", "release", nil))
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, 6*time.Second)
	env.ExecuteWorkflow(names.WorkflowGateway, round.GatewayInput{SessionID: "s", Run: "r"})

	in := f.seen()
	require.Len(t, in, 3)
	require.Len(t, in[0].Assistant.ToolCalls, 2, "calls within 20 ms form one round")
	require.Equal(t, "toolround/s/mcp-r/1", in[0].WorkflowID())
	require.Equal(t, round.GatewayProvider, in[0].Provider)
	require.True(t, in[0].State.HasFetched("read_files") && in[0].State.HasFetched("edit_file"), "every called tool is fetched")
	require.Len(t, in[1].Assistant.ToolCalls, 1, "the attached call starts nothing")
	require.Equal(t, `{"paths":["c"]}`, string(in[1].Assistant.ToolCalls[0].Function.Arguments))
	require.Empty(t, in[1].State.Dedupe, "round 2 started while round 1 waited, with the state as it stood")
	require.Len(t, in[2].State.Dedupe, 3, "round 3 has the merged changes of rounds 1 and 2")
	require.Equal(t, int64(3), in[2].State.Usage.Calls)
	require.Equal(t, 2, in[2].State.Usage.Round, "the gateway signs the usage for the round that takes it (T15)")
	require.Equal(t, "mac", in[2].State.Usage.MAC)
	require.NotEmpty(t, signed)

	tk.mu.Lock()
	defer tk.mu.Unlock()
	require.Error(t, tk.e["bad"], "the validator refuses arguments that are not an object")
	require.Equal(t, round.GatewayTicket{WorkflowID: "toolround/s/mcp-r/1", CallID: "mcp_1_1", Round: 1}, tk.t["u2"])
	require.Equal(t, round.GatewayTicket{WorkflowID: "toolround/s/mcp-r/1", CallID: "mcp_1_1", Round: 1, Attached: true}, tk.t["u3"])
	require.Equal(t, "toolround/s/mcp-r/2", tk.t["u4"].WorkflowID)
	require.Equal(t, "toolround/s/mcp-r/3", tk.t["u5"].WorkflowID)
}

// TestReplayGatewayHistories replays the recorded gateway runs (a real
// console, worker and MCP client: reads, an approved edit, a worker killed
// while a call waited and a call that attached) with today's code.
func TestReplayGatewayHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(gateway.Workflow, workflow.RegisterOptions{Name: names.WorkflowGateway})
			hist := testenv.ReadHistory(t, path)
			var start round.GatewayInput
			attrs := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
			require.NoError(t, json.Unmarshal(attrs.GetInput().GetPayloads()[0].GetData(), &start))
			require.NoError(t, r.ReplayWorkflowHistoryWithOptions(testenv.QuietLogger(), hist, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: names.GatewayWorkflowID(start.SessionID, start.Run)},
			}))
		})
	}
}
