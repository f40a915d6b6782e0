package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// T15: the counts a client carries in its run state are signed for the
// round that handed them on, and only the next round of that run takes
// them.

// usedUpRule runs round 1 of run "r" on a worker without WORKER_LIMITS: a
// rule "git *" remembered with up_to 1 approves g1 and is used up; it
// returns the state the round hands on.
func usedUpRule(t *testing.T) *round.RunState {
	h := newHarness(t, 3)
	h.at(time.Second, func() {
		h.confirm(round.Confirm{CallID: "g0", Approve: true, Remember: true, Pattern: "git *", UpTo: 1})
	})
	res := h.run(t, input(call("g0", "run_command", `{"command":"git status"}`), call("g1", "run_command", `{"command":"git log"}`)))
	require.Equal(t, round.DecisionRule, res.Results[1].Approval.Decision)
	require.Equal(t, int64(1), res.Results[1].Approval.Uses)
	require.NotEmpty(t, res.State.Usage.MAC, "T15: the usage is signed without WORKER_LIMITS too")
	require.Equal(t, 1, res.State.Usage.Round, "T15: the usage names the round that signed it")
	return res.State
}

// gitRound runs round n of run "r" with st: one git command, denied by
// whoever is asked; it returns what pending showed and the result.
func gitRound(t *testing.T, n int, st *round.RunState) ([]round.Pending, round.Result) {
	h := newHarness(t, 3)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		if len(seen) > 0 {
			h.confirm(round.Confirm{CallID: "g2", Approve: false, Reason: "no"})
		}
	})
	in := input(call("g2", "run_command", `{"command":"git diff"}`))
	in.Round, in.State = n, st
	return seen, h.run(t, in)
}

// roundError runs round in on h and returns its input error.
func roundError(t *testing.T, h *harness, in round.Input) *temporal.ApplicationError {
	t.Helper()
	h.env.ExecuteWorkflow(names.WorkflowName, in)
	require.True(t, h.env.IsWorkflowCompleted())
	err := h.env.GetWorkflowError()
	require.Error(t, err, "T15: the round refuses its input")
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, round.ErrTypeInvalidInput, app.Type())
	require.True(t, app.NonRetryable())
	return app
}

// TestUsedUpRuleAsksInTheNextRound (B2): the signed count carries over.
func TestUsedUpRuleAsksInTheNextRound(t *testing.T) {
	seen, res := gitRound(t, 2, usedUpRule(t))
	require.Len(t, seen, 1, "the used-up rule approves nothing more")
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Equal(t, 2, res.State.Usage.Round)
}

// TestDeletedRuleCountsAreRefused (T15): a client that deletes
// usage.rules to re-enable a used-up rule gets an input error that says
// why, on a worker without WORKER_LIMITS.
func TestDeletedRuleCountsAreRefused(t *testing.T) {
	st := usedUpRule(t)
	st.Usage.Rules = nil
	in := input(call("g2", "run_command", `{"command":"git diff"}`))
	in.Round, in.State = 2, st
	app := roundError(t, newHarness(t, 3), in)
	require.Contains(t, app.Message(), "does not verify")
}

// TestDeletedUsageLeavesCountedRulesUsedUp (T15): deleting the whole usage
// resets no count: a counted rule that the run's usage does not count is
// used up.
func TestDeletedUsageLeavesCountedRulesUsedUp(t *testing.T) {
	st := usedUpRule(t)
	st.Usage = nil
	seen, res := gitRound(t, 2, st)
	require.Len(t, seen, 1, "the rule approves nothing without its count")
	require.Equal(t, round.KindConfirm, seen[0].Kind)
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)

	unsigned := usedUpRule(t)
	unsigned.Usage.MAC, unsigned.Usage.Rules = "", nil
	seen, _ = gitRound(t, 2, unsigned)
	require.Len(t, seen, 1, "nor with counts that nobody signed")

	// A round of a build from before T15, on a worker without
	// WORKER_LIMITS, hands on the MAC it was given with counts it changed,
	// and no round: taken as unsigned, its rules used up.
	stale := usedUpRule(t)
	stale.Usage.Round, stale.Usage.Calls, stale.Usage.Rules = 0, 7, nil
	seen, res = gitRound(t, 2, stale)
	require.Len(t, seen, 1, "nor with counts a build before T15 handed on")
	require.Equal(t, int64(7), res.State.Usage.Calls, "the calls counted: the client's brake")
}

// TestStrippedRuleAddedBackIsUsedUp (T15): a rule dropped from the state
// with its usage, and added back rounds later under a usage signed since,
// is used up: the signed usage counts every counted rule the run kept.
func TestStrippedRuleAddedBackIsUsedUp(t *testing.T) {
	st1 := usedUpRule(t)
	bare := &round.RunState{Fetched: st1.Fetched}
	h := newHarness(t, 3)
	in := auto(input(calc("c1")))
	in.Round, in.State = 2, bare
	res := h.run(t, in)
	require.NotEmpty(t, res.State.Usage.MAC)

	st3 := res.State.Clone()
	st3.Allow = st1.Allow
	seen, _ := gitRound(t, 3, st3)
	require.Len(t, seen, 1, "the rule added back approves nothing")
}

// TestUsageOfAnEarlierRoundIsRefused (T15): on a worker with
// WORKER_LIMITS, round 3 sent with round 1's signed state is refused with
// the round that signed it, so counts cannot be replayed.
func TestUsageOfAnEarlierRoundIsRefused(t *testing.T) {
	st1 := firstRound(t, "r")
	require.Equal(t, 1, st1.Usage.Round)
	_, res2 := secondRound(t, st1.Clone())
	require.Equal(t, round.StatusOK, res2.Results[0].Status)

	in := auto(input(calcOf("c3", "3")))
	in.Round, in.State = 3, st1
	app := roundError(t, bounded(t), in)
	require.Contains(t, app.Message(), "round 1")
	require.Contains(t, app.Message(), "round 2")
}

// TestUsageOfALaterRoundIsRefused (T15): nor is a usage taken into a round
// that is not the next one, backwards or forwards.
func TestUsageOfALaterRoundIsRefused(t *testing.T) {
	st1 := firstRound(t, "r")
	in := auto(input(calcOf("c3", "3")))
	in.Round, in.State = 1, st1.Clone()
	app := roundError(t, bounded(t), in)
	require.Contains(t, app.Message(), "signed by round 1 of this run: a run's first round takes no signed usage")
	in.Round = 5
	app = roundError(t, bounded(t), in)
	require.Contains(t, app.Message(), "signed by round 1 of this run: round 5 of a run takes the state its round 4 returned")
}

// TestAnotherRunsUsageIsRefused (T15): nor a usage another run signed,
// without WORKER_LIMITS too.
func TestAnotherRunsUsageIsRefused(t *testing.T) {
	h := newHarness(t, 3)
	in := auto(input(calc("c1")))
	in.RunID = "other"
	res := h.run(t, in)
	next := auto(input(calc("c2")))
	next.Round, next.State = 2, res.State
	app := roundError(t, newHarness(t, 3), next)
	require.Contains(t, app.Message(), "does not verify")
}

// TestSubagentSharesAreFloorsAndMayBeZero (G1, T15): each of the n
// subagents of a round gets floor(remaining/n) of a limit, after the
// round's own calls; a share of 0 is carried as such.
func TestSubagentSharesAreFloorsAndMayBeZero(t *testing.T) {
	h, started := childInputs(t)
	in := auto(input(
		call("s1", "subagents", `{"task":"a"}`),
		call("s2", "subagents", `{"task":"b"}`),
		call("b1", "background_subagents", `{"task":"c"}`),
	))
	in.State.Fetched = append(in.State.Fetched, "subagents", "background_subagents")
	in.Limits = &round.Limits{MaxCommands: 1, MaxCalls: 10}
	res := h.run(t, in)
	ins := started()
	require.Len(t, ins, 3)
	for _, c := range ins {
		require.Equal(t, []string{round.LimitCommands}, c.ZeroShare, "floor(1/3) of max_commands is 0")
		require.Equal(t, int64(2), c.Limits.MaxCalls, "floor((10-3)/3)")
	}
	require.Equal(t, int64(3+2), res.State.Usage.Calls, "the background child's share is reserved when it starts")
	require.Len(t, res.State.Children, 1)
	id := res.State.Children[0]
	require.Equal(t, &round.Usage{Calls: 2}, res.State.Usage.Reserved[id])

	// When it ends, only what it did past its share joins the run's counts.
	h2 := newSubagentHarness(t, 3, nil)
	h2.env.RegisterActivityWithOptions(func(_ context.Context, in wire.SubagentStatusInput) (round.AgentStatus, error) {
		return round.AgentStatus{WorkflowID: in.WorkflowID, Status: round.AgentCompleted, Final: "done", Usage: &round.Usage{Calls: 5}}, nil
	}, activity.RegisterOptions{Name: wire.ActivitySubagentStatus})
	next := auto(input(call("p1", "background_subagents", `{"id":"`+id+`"}`)))
	next.State.Fetched = append(next.State.Fetched, "subagents", "background_subagents")
	next.Round, next.State = 2, res.State
	out := h2.run(t, next)
	require.Equal(t, round.StatusOK, out.Results[0].Status)
	require.Equal(t, res.State.Usage.Calls+1+(5-2), out.State.Usage.Calls, "the look, and the child's 5 calls less the 2 reserved")
	require.Empty(t, out.State.Usage.Reserved)
}

// TestWorkerLimitsBoundSubagents (G1, T15): a round without limits of its
// own on a worker with WORKER_LIMITS gives its subagents a share of them.
func TestWorkerLimitsBoundSubagents(t *testing.T) {
	h, started := childInputs(t)
	h.wf.Catalog = workflows.NewCatalog(h.reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute,
		WorkerLimits: round.Limits{MaxCommands: 2}})
	in := auto(input(call("s1", "subagents", `{"task":"a"}`), call("s2", "subagents", `{"task":"b"}`)))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	h.run(t, in)
	ins := started()
	require.Len(t, ins, 2)
	for _, c := range ins {
		require.NotNil(t, c.Limits)
		require.Equal(t, int64(1), c.Limits.MaxCommands)
		require.Empty(t, c.ZeroShare)
	}
}

// TestZeroShareWaitsOnTheFirstCountedCall (G1, T15): a run with max_calls
// 2 whose round starts two subagents leaves them nothing: each real child
// run waits on its first call that counts, and with nobody deciding ends
// limit_reached having run nothing.
func TestZeroShareWaitsOnTheFirstCountedCall(t *testing.T) {
	h := newSubagentHarness(t, 3, nil)
	h.reply = childScript
	in := auto(input(call("s1", "subagents", `{"task":"part one"}`), call("s2", "subagents", `{"task":"part two"}`)))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 2}
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusError, round.StatusError}, statuses(res))
	for _, r := range res.Results {
		require.Contains(t, r.Content, string(round.AgentLimitReached))
		require.Contains(t, r.Content, "max_calls")
	}
	require.Equal(t, int64(2), res.State.Usage.Calls, "the two subagents calls, and nothing their children did")
}

// TestLooksDoNotShrinkShares (G1, T15): a look at a background subagent
// ({"id"}) starts none, so it takes no share: the one subagent started
// beside it gets what the round's two calls leave.
func TestLooksDoNotShrinkShares(t *testing.T) {
	h, started := childInputs(t)
	in := auto(input(call("s1", "subagents", `{"task":"a"}`), call("p1", "subagents", `{"id":"agentrun/s/sub-000000000000000000000000"}`)))
	in.State.Fetched = append(in.State.Fetched, "subagents")
	in.Limits = &round.Limits{MaxCalls: 10}
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusError}, statuses(res))
	ins := started()
	require.Len(t, ins, 1)
	require.Equal(t, int64(8), ins[0].Limits.MaxCalls, "10 less the round's 2 calls, for 1 subagent")
}

// childInputs is a subagent harness whose children end at once with "ok",
// and what gives the inputs they were started with.
func childInputs(t *testing.T) (*subagentHarness, func() []round.AgentInput) {
	var ins []round.AgentInput
	var mu sync.Mutex
	h := newSubagentHarness(t, 3, func(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
		mu.Lock()
		ins = append(ins, in)
		mu.Unlock()
		return round.AgentStatus{Status: round.AgentCompleted, Final: "ok"}, nil
	})
	return h, func() []round.AgentInput {
		mu.Lock()
		defer mu.Unlock()
		return append([]round.AgentInput(nil), ins...)
	}
}
