package workflows_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/agent"
)

// subagentHarness is the round harness with the real agent run beside it
// and a scripted model: a subagents call of a round runs the real AgentRun
// as its child, whose rounds are real rounds.
type subagentHarness struct {
	*harness
	mu     sync.Mutex
	models []wire.ModelInput
	// reply answers a child's model call.
	reply func(in wire.ModelInput) (wire.ModelOutput, error)
}

// newSubagentHarness runs child, or the real agent run when it is nil.
func newSubagentHarness(t *testing.T, bound int, child func(workflow.Context, round.AgentInput) (round.AgentStatus, error)) *subagentHarness {
	h := &subagentHarness{harness: newHarness(t, bound)}
	h.reg.MustRegister(agent.Subagents(), agent.BackgroundSubagents())
	if child == nil {
		aw := &agentrun.Workflow{HeartbeatTimeout: time.Minute}
		child = aw.Run
	}
	h.env.RegisterWorkflowWithOptions(child, workflow.RegisterOptions{Name: names.AgentWorkflowName})
	h.env.RegisterActivityWithOptions(func(_ context.Context, in wire.ModelInput) (wire.ModelOutput, error) {
		h.mu.Lock()
		h.models = append(h.models, in)
		h.mu.Unlock()
		return h.reply(in)
	}, activity.RegisterOptions{Name: wire.ActivityModelCall})
	return h
}

// childScript: a child's first model call asks for one calculate call
// (and the calls its task names after "then call "), as does a call after
// a round that only fetched schemas (P1.4); then it answers with its task
// and the results.
func childScript(in wire.ModelInput) (wire.ModelOutput, error) {
	task := in.Messages[0].Content
	var results []string
	for i := len(in.Messages) - 1; i >= 0 && in.Messages[i].Role == "tool"; i-- {
		results = append([]string{in.Messages[i].Content}, results...)
	}
	if in.Call == 1 || strings.Contains(strings.Join(results, " "), "was not loaded yet") {
		calls := []round.ToolCall{{ID: "k1", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"6*7"}`}}}
		if _, tool, ok := strings.Cut(task, "then call "); ok {
			calls = append(calls, round.ToolCall{ID: "k2", Type: "function", Function: round.FunctionCall{Name: tool, Arguments: `{"task":"deeper"}`}})
		}
		return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: calls}}, nil
	}
	return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "done: " + task + " | " + strings.Join(results, " | ")}}, nil
}

func (h *subagentHarness) modelCalls() []wire.ModelInput {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]wire.ModelInput(nil), h.models...)
}

var subRunID = regexp.MustCompile(`^sub-[0-9a-f]{24}$`)

func TestSubagentsRunAsChildAgentRuns(t *testing.T) {
	h := newSubagentHarness(t, 3, nil)
	h.reply = childScript
	in := input(
		call("s1", "subagents", `{"task":"part one","name":"first","system_prompt":"Be brief.","exclude_tools":["run_command"]}`),
		call("s2", "subagents", `{"task":"part two then call subagents"}`),
	)
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 41}
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(res), res.Results)
	require.Equal(t, "done: part one | [calculate] = 6*7", res.Results[0].Content)
	// The second child's own subagents call is not a tool it has: at the
	// default SUBAGENT_DEPTH a subagent starts none (G1).
	require.Contains(t, res.Results[1].Content, "done: part two then call subagents | [calculate] = 6*7 | ")
	require.Contains(t, res.Results[1].Content, "tool subagents is not available to this subagent")

	byRun := map[string][]wire.ModelInput{}
	for _, m := range h.modelCalls() {
		byRun[m.RunID] = append(byRun[m.RunID], m)
	}
	require.Len(t, byRun, 2, "one child run per call")
	for id, calls := range byRun {
		require.Regexp(t, subRunID, id)
		require.GreaterOrEqual(t, len(calls), 2, "each child called its model once per step")
		require.Equal(t, names.AgentWorkflowID("s", id), calls[0].WorkflowID, "in the caller's session")
		require.Subset(t, calls[0].Exclude, round.RecursiveTools, "at the deepest depth no tool that starts runs")
		if calls[0].Messages[0].Content == "part one" {
			require.Equal(t, "Be brief.", calls[0].SystemPrompt)
			require.Contains(t, calls[0].Exclude, "run_command", "exclude_tools")
		}
	}
	require.NotEqual(t, res.Results[0].OperationID, res.Results[1].OperationID)
	for _, r := range res.Results {
		require.Contains(t, byRun, names.SubagentRunID(r.OperationID), "the child's id derives from the call's operation id")
	}

	// What the children did joins the round's counts: the 2 subagents
	// calls, and the one calculate call that ran in each child (a schema
	// result and a tool the child lacks never reach pass 2).
	require.Equal(t, int64(4), res.State.Usage.Calls)
	// A subagent's answer never enters the dedupe map.
	for _, e := range res.State.Dedupe {
		require.NotEqual(t, "subagents", e.Tool)
	}
}

func TestSubagentsCarryNoMoreThanTheCaller(t *testing.T) {
	var limits []*round.Limits
	var autos []bool
	var zeros [][]string
	var mu sync.Mutex
	h := newSubagentHarness(t, 3, func(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
		mu.Lock()
		limits, autos, zeros = append(limits, in.Limits), append(autos, in.AutoApprove), append(zeros, in.ZeroShare)
		mu.Unlock()
		return round.AgentStatus{Status: round.AgentCompleted, Final: "ok " + in.Task, Usage: &round.Usage{Calls: 3, Writes: 1}}, nil
	})
	in := input(
		call("s1", "subagents", `{"task":"a"}`),
		call("s2", "subagents", `{"task":"b"}`),
		call("s3", "subagents", `{"task":"c"}`),
	)
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 31, MaxWrites: 2}
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK, round.StatusOK}, statuses(res))
	require.Len(t, limits, 3)
	for i, l := range limits {
		require.NotNil(t, l, "child %d has the caller's limits", i)
		require.Equal(t, int64(9), l.MaxCalls, "a third of the 31 calls the round's own three leave (T15)")
		require.Equal(t, int64(1), l.MaxWrites, "never 0, which would be no limit")
		require.Equal(t, []string{round.LimitWrites}, zeros[i], "floor(2/3) of max_writes is 0: the child starts 1 below its 1 (T15)")
		require.False(t, autos[i], "no auto_approve the caller does not have")
	}
	require.Equal(t, int64(3+9), res.State.Usage.Calls, "the three calls and what the children did")
	require.Equal(t, int64(3), res.State.Usage.Writes)
}

func TestSubagentEndsMapToResults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		child func(round.AgentInput) (round.AgentStatus, error)
		want  round.Status
		has   string
	}{
		{"round_limit", func(round.AgentInput) (round.AgentStatus, error) {
			return round.AgentStatus{Status: round.AgentRoundLimit, Final: "half"}, nil
		}, round.StatusError, "ended round_limit; its last answer: half"},
		{"limit_reached", func(round.AgentInput) (round.AgentStatus, error) {
			return round.AgentStatus{Status: round.AgentLimitReached, Reason: "past max_seconds"}, nil
		}, round.StatusError, "ended limit_reached: past max_seconds"},
		{"failed", func(round.AgentInput) (round.AgentStatus, error) {
			return round.AgentStatus{}, temporal.NewNonRetryableApplicationError("the model is gone", "NoModel", nil)
		}, round.StatusError, "failed: the model is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSubagentHarness(t, 3, func(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
				return tc.child(in)
			})
			in := input(call("s1", "subagents", `{"task":"x"}`))
			in.State.Fetched = append(in.State.Fetched, "subagents")
			res := h.run(t, in)
			require.Equal(t, tc.want, res.Results[0].Status)
			require.Contains(t, res.Results[0].Content, tc.has)
			require.Contains(t, res.Results[0].Content, "agentrun/s/sub-", "the result names the child")
		})
	}
}

func TestClientInputsCannotTakeSubagentIDs(t *testing.T) {
	// Any letter case of the prefixes, and the MCP gateway's mcp- (Z2).
	for _, id := range []string{"sub-0123456789abcdef01234567", "sub-x", "chat-helper",
		"SUB-x", "Sub-0123456789abcdef01234567", "CHAT-helper", "cHaT-x", "mcp-r", "MCP-r", "Mcp-agent"} {
		a := round.AgentInput{SessionID: "s", RunID: id, Task: "t"}
		require.ErrorContains(t, a.Validate(), "reserved", id)
		require.NoError(t, a.ValidateStarted(), "the workflow runs its children")
		r := input(call("c1", "calculate", `{"expression":"1"}`))
		r.RunID = id
		require.ErrorContains(t, r.Validate(), "reserved", id)
		require.NoError(t, r.ValidateStarted())
	}
	a := round.AgentInput{SessionID: "s", RunID: "r", Task: "t", Depth: -1}
	require.ErrorContains(t, a.Validate(), "depth")
}

func TestBackgroundSubagentsStartAndAreLookedAt(t *testing.T) {
	h := newSubagentHarness(t, 3, func(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
		return round.AgentStatus{Status: round.AgentCompleted, Final: "bg " + in.Task}, nil
	})
	var asked []wire.SubagentStatusInput
	h.env.RegisterActivityWithOptions(func(_ context.Context, in wire.SubagentStatusInput) (round.AgentStatus, error) {
		asked = append(asked, in)
		return round.AgentStatus{WorkflowID: in.WorkflowID, Status: round.AgentCompleted, Final: "the answer", Usage: &round.Usage{Calls: 7}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySubagentStatus})
	in := input(call("b1", "background_subagents", `{"task":"watch the build"}`))
	in.State.Fetched = append(in.State.Fetched, "background_subagents", "subagents")
	res := h.run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Len(t, res.State.Children, 1, "the run state lists its background subagents")
	id := res.State.Children[0]
	require.Equal(t, names.AgentWorkflowID("s", names.SubagentRunID(res.Results[0].OperationID)), id)
	require.Contains(t, res.Results[0].Content, id)

	// The next round looks at it by id; another id is not this run's.
	h2 := newSubagentHarness(t, 3, nil)
	h2.env.RegisterActivityWithOptions(func(_ context.Context, in wire.SubagentStatusInput) (round.AgentStatus, error) {
		asked = append(asked, in)
		return round.AgentStatus{WorkflowID: in.WorkflowID, Status: round.AgentCompleted, Final: "the answer", Usage: &round.Usage{Calls: 7}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySubagentStatus})
	next := input(call("p1", "subagents", `{"id":"`+id+`"}`), call("p2", "background_subagents", `{"id":"agentrun/s/sub-000000000000000000000000"}`),
		call("p3", "subagents", `{}`))
	next.Round, next.State = 2, res.State
	out := h2.run(t, next)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusError, round.StatusError}, statuses(out))
	require.Equal(t, "the answer", out.Results[0].Content)
	require.Contains(t, out.Results[1].Content, "not_this_run")
	require.Contains(t, out.Results[2].Content, "give a task")
	require.Equal(t, []wire.SubagentStatusInput{{WorkflowID: id, SessionID: "s", RunID: "r"}}, asked, "only this run's child is looked up")
	require.Equal(t, res.State.Usage.Calls+3+7, out.State.Usage.Calls, "each look counts as a call, and the ended child's own counts join once")
	require.Equal(t, []string{id}, out.State.Counted)

	// A later look answers again but adds nothing more.
	h3 := newSubagentHarness(t, 3, nil)
	h3.env.RegisterActivityWithOptions(func(_ context.Context, in wire.SubagentStatusInput) (round.AgentStatus, error) {
		return round.AgentStatus{WorkflowID: in.WorkflowID, Status: round.AgentCompleted, Final: "the answer", Usage: &round.Usage{Calls: 7}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySubagentStatus})
	again := input(call("q1", "subagents", `{"id":"`+id+`"}`), call("q2", "background_subagents", `{"id":"`+id+`"}`))
	again.Round, again.State = 3, out.State
	last := h3.run(t, again)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(last))
	require.Equal(t, out.State.Usage.Calls+2, last.State.Usage.Calls, "two looks in one round add the child's counts no more")
	require.Equal(t, []string{id}, last.State.Counted)
	require.Equal(t, []string{id}, last.State.Children)
}

// TestASubagentKeepsItsCallersExclusions (G1): a child has the caller's
// tools minus exclude_tools, so what the caller itself lacks (a subagent's
// round excludes tools too) stays out of the child as well.
func TestASubagentKeepsItsCallersExclusions(t *testing.T) {
	h := newSubagentHarness(t, 3, nil)
	h.reply = childScript
	in := input(call("s1", "subagents", `{"task":"part one","exclude_tools":["run_command"]}`))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Exclude = []string{"http_request"} // the caller's own exclusion
	res := h.run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	calls := h.modelCalls()
	require.NotEmpty(t, calls)
	require.Contains(t, calls[0].Exclude, "run_command", "exclude_tools")
	require.Contains(t, calls[0].Exclude, "http_request", "the caller's own exclusion")
}
