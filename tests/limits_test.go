package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// secondCallPastLimit starts a worker and round 1 of two calculations, c1
// and c2, whose input allows maxCalls calls; it returns the round's end,
// its workflow id and what waits, once c2 alone does.
func (e *env) secondCallPastLimit(maxCalls int64) (<-chan result, string, []round.Pending) {
	e.t.Helper()
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
		call("c2", "calculate", map[string]any{"expression": "2+2"}))
	in.Limits = &round.Limits{MaxCalls: maxCalls}
	done := e.startRound(in)
	return done, in.WorkflowID(), e.waitPending(in.WorkflowID(), "c2")
}

// TestRoundPastMaxCallsWaitsAsLimitAndIsApproved (B1): the second call of
// a round with max_calls 1 waits as kind limit; starter approve with
// --remember is refused (exit 2, invalid_decision) and a plain approve
// runs it; the run state counts both calls and the grown limit.
func TestRoundPastMaxCallsWaitsAsLimitAndIsApproved(t *testing.T) {
	e := newEnv(t)
	done, wfID, pending := e.secondCallPastLimit(1)
	require.Equal(t, round.KindLimit, pending[0].Kind)
	require.NotEmpty(t, pending[0].WaitID)
	require.Contains(t, strings.Join(pending[0].Reasons, "|"), "max_calls")
	require.Equal(t, []round.LimitCount{{Limit: round.LimitCalls, Count: 0, Max: 1}}, pending[0].Limits)

	ctx := context.Background()
	r := e.starter(ctx, "", "approve", wfID, "c2", "--remember")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "invalid decision")
	e.waitPending(wfID, "c2")

	r = e.starter(ctx, "", "approve", wfID, "c2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "past a run limit")
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[1].Status, res.Results[1].Content)
	require.Equal(t, []string{round.LimitCalls}, res.Results[1].Approval.Limits)
	require.Equal(t, int64(2), res.State.Usage.Calls)
	require.Equal(t, int64(1), res.State.Usage.Grown[round.LimitCalls])
}

// TestWorkerLimitsBoundALargerInputLimit (B1): WORKER_LIMITS max_calls 1
// makes the second call wait although the input allows 100.
func TestWorkerLimitsBoundALargerInputLimit(t *testing.T) {
	e := newEnv(t, `WORKER_LIMITS={"max_calls": 1}`)
	done, wfID, pending := e.secondCallPastLimit(100)
	require.Contains(t, pending[0].Reasons[0], "limit 1")
	r := e.starter(context.Background(), "", "deny", wfID, "c2", "--reason", "enough")
	require.Equal(t, 0, r.code, r.stderr)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, round.StatusSkipped, res.Results[1].Status, "B1: denied, the call is skipped")
}

// TestUpToIsCountedAcrossRounds (B2): starter approve --remember --pattern
// 'git *' --up-to 2 lets the rule approve two later git calls of the run,
// across rounds; the third asks.
func TestUpToIsCountedAcrossRounds(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	git := func(id, cmd string) round.ToolCall { return call(id, "run_command", map[string]any{"command": cmd}) }
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched}, git("g0", "git status"))
	done := e.startRound(in)
	e.waitPending(in.WorkflowID(), "g0")
	ctx := context.Background()
	r := e.starter(ctx, "", "approve", in.WorkflowID(), "g0", "--up-to", "2")
	require.Equal(t, 2, r.code, "--up-to needs --remember: %s", r.stderr)
	r = e.starter(ctx, "", "approve", in.WorkflowID(), "g0", "--remember", "--pattern", "git *", "--up-to", "2")
	require.Equal(t, 0, r.code, r.stderr)
	res := decodeResult(t, <-done)
	require.Len(t, res.State.Allow, 1)
	require.Equal(t, int64(2), res.State.Allow[0].UpTo)

	in = e.input(2, "claude-code", res.State, git("g1", "git log"))
	res = e.round(in)
	require.Equal(t, round.DecisionRule, res.Results[0].Approval.Decision)
	require.Equal(t, int64(1), res.Results[0].Approval.Uses)

	in = e.input(3, "claude-code", res.State, git("g2", "git diff"), git("g3", "git show"))
	done = e.startRound(in)
	e.waitPending(in.WorkflowID(), "g3")
	r = e.starter(ctx, "", "deny", in.WorkflowID(), "g3")
	require.Equal(t, 0, r.code, r.stderr)
	res = decodeResult(t, <-done)
	require.Equal(t, round.DecisionRule, res.Results[0].Approval.Decision)
	require.Equal(t, int64(2), res.Results[0].Approval.Uses)
	require.Equal(t, int64(2), res.Results[0].Approval.UpTo)
	require.Equal(t, round.StatusSkipped, res.Results[1].Status)
}

// TestBadLimitsAreInputErrors (B1): limits outside 1..10^9, a misspelt
// limit, and bad --limits or --up-to exit 2 and start nothing.
func TestBadLimitsAreInputErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := e.input(1, "claude-code", nil, call("c1", "calculate", map[string]any{"expression": "1"}))
	for _, limits := range []string{`{"max_calls":-1}`, `{"max_calls":0}`, `{"max_seconds":1000000001}`, `{"max_cals":5}`} {
		body := strings.Replace(mustJSON(t, in), `"session_id"`, `"limits":`+limits+`,"session_id"`, 1)
		r := e.starter(ctx, body, "round", "-")
		require.Equal(t, 2, r.code, "%s: %s", limits, r.stderr)
		require.Contains(t, r.stderr, "max_")
	}
	r := e.starter(ctx, "", "agent", "--session", "s", "--run", "r", "--limits", `{"max_model_tokens": -5}`, "do it")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "max_model_tokens")
	r = e.starter(ctx, "", "approve", "toolround/s/r/1", "c1", "--remember", "--up-to", "0")
	require.Equal(t, 2, r.code, r.stderr)
}

// TestLimitBelowTheRunsCountAsksAtTheNextCall (B1): a round whose run
// already made 5 calls, given max_calls 2, does not fail: its call waits
// as kind limit naming the count, and approved it runs.
func TestLimitBelowTheRunsCountAsksAtTheNextCall(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(2, "claude-code", &round.RunState{Fetched: allToolsFetched, Usage: &round.Usage{Calls: 5}},
		call("c1", "calculate", map[string]any{"expression": "1+1"}))
	in.Limits = &round.Limits{MaxCalls: 2}
	done := e.startRound(in)
	pending := e.waitPending(in.WorkflowID(), "c1")
	require.Equal(t, round.KindLimit, pending[0].Kind)
	require.Contains(t, strings.Join(pending[0].Reasons, "|"), "call 6 of the run")
	require.Equal(t, []round.LimitCount{{Limit: round.LimitCalls, Count: 5, Max: 2}}, pending[0].Limits)
	e.mustStarter("approve", in.WorkflowID(), "c1")
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Equal(t, int64(6), res.State.Usage.Calls)
}

// TestCarriedCountsCannotBeReplayed (T15): through the real worker with
// WORKER_LIMITS max_calls 4, rounds 1 to 3 of a run each take the state
// the round before returned; round 4 sent with round 1's state, or round 5
// with round 3's whose count was lowered, fails as an input error (the
// round failed: exit 1) that says why, and runs none of its calls.
func TestCarriedCountsCannotBeReplayed(t *testing.T) {
	e := newEnv(t, `WORKER_LIMITS={"max_calls": 4}`)
	w := e.startWorker()
	calc := func(id string) round.ToolCall {
		return call(id, "calculate", map[string]any{"expression": "1+" + id[1:]})
	}
	res1 := e.round(e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched}, calc("c1")))
	require.Equal(t, 1, res1.State.Usage.Round)
	require.NotEmpty(t, res1.State.Usage.MAC)
	res2 := e.round(e.input(2, "claude-code", res1.State.Clone(), calc("c2")))
	res3 := e.round(e.input(3, "claude-code", res2.State, calc("c3")))
	require.Equal(t, round.StatusOK, res3.Results[0].Status, res3.Results[0].Content)
	require.Equal(t, int64(3), res3.State.Usage.Calls)

	ctx := context.Background()
	r := e.starter(ctx, mustJSON(t, e.input(4, "claude-code", res1.State, calc("c4"), calc("c5"))), "round", "-")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "invalid round input: the run state's usage was signed by round 1 of this run: round 4 of a run takes the state its round 3 returned")

	require.NotContains(t, w.logs.String(), "call_id=c4", "the refused round ran nothing")

	lowered := res3.State.Clone()
	lowered.Usage.Calls = 0
	r = e.starter(ctx, mustJSON(t, e.input(5, "claude-code", lowered, calc("c6"))), "round", "-")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "invalid round input: the run state's usage does not verify")
}
