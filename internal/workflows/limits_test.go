package workflows_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

func limited(in round.Input, l round.Limits) round.Input {
	in.Limits = &l
	return in
}

func withUsage(in round.Input, u round.Usage) round.Input {
	in.State.Usage = &u
	return in
}

func viaRunTool(id, name, args string) round.ToolCall {
	b, _ := json.Marshal(map[string]any{"name": name, "args": json.RawMessage(args)})
	return call(id, "run_tool", string(b))
}

func calc(id string) round.ToolCall { return calcOf(id, "1+1") }

func calcOf(id, expr string) round.ToolCall {
	return call(id, "calculate", `{"expression":"`+expr+`"}`)
}

func pendingOf(ps []round.Pending, callID string) *round.Pending {
	for i := range ps {
		if ps[i].CallID == callID {
			return &ps[i]
		}
	}
	return nil
}

// TestLimitMaxCallsWaitsAsKindLimit (B1): the calls of a round past
// max_calls wait together as kind limit, with a reason that names the
// limit and the count and a wait_id; auto_approve does not answer them;
// the first approval grows the limit once, by its first value.
func TestLimitMaxCallsWaitsAsKindLimit(t *testing.T) {
	h := newHarness(t, 3)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "c3", Approve: true, By: "ann"})
	})
	h.at(2*time.Second, func() {
		h.confirm(round.Confirm{CallID: "c4", Approve: true, By: "ann"})
	})
	in := auto(limited(withUsage(input(calc("c1"), calcOf("c2", "2"), calcOf("c3", "3"), calcOf("c4", "4")), round.Usage{Calls: 1}), round.Limits{MaxCalls: 3}))
	res := h.run(t, in)

	require.Len(t, seen, 2, "c1 and c2 fit in max_calls 3 (one call done before), c3 and c4 wait together")
	c3 := pendingOf(seen, "c3")
	require.NotNil(t, c3)
	require.Equal(t, round.KindLimit, c3.Kind)
	require.True(t, c3.NeedsDecision())
	require.NotEmpty(t, c3.ApprovalID)
	require.Len(t, c3.WaitID, 64)
	require.NotEqual(t, c3.WaitID, pendingOf(seen, "c4").WaitID)
	require.Len(t, c3.Reasons, 1)
	require.Contains(t, c3.Reasons[0], "max_calls")
	require.Contains(t, c3.Reasons[0], "call 4 of the run")
	require.Contains(t, c3.Reasons[0], "limit 3")
	require.Contains(t, pendingOf(seen, "c4").Reasons[0], "call 5 of the run")
	require.Equal(t, []round.LimitCount{{Limit: round.LimitCalls, Count: 1, Max: 3}}, c3.Limits)

	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK, round.StatusOK, round.StatusOK}, statuses(res))
	require.Equal(t, round.DecisionApproved, res.Results[2].Approval.Decision)
	require.Equal(t, []string{round.LimitCalls}, res.Results[2].Approval.Limits)
	u := res.State.Usage
	require.NotNil(t, u)
	require.Equal(t, int64(5), u.Calls)
	require.Equal(t, map[string]int64{round.LimitCalls: 3}, u.Grown, "two approvals grew max_calls once, by its first value")
	require.Equal(t, int64(3), res.State.Limits.MaxCalls, "the round's limits stay in the run state")
}

// TestLimitReasonTakesOnlyAnExplicitDecision (B1): allow_turn, rules and
// auto_approve never answer a limit; remember, pattern, allow_turn, args
// and up_to on it are refused as invalid_decision, an old wait_id as
// stale_wait; a denied call is skipped; a call that also needs an approval
// lists both reasons in one wait.
func TestLimitReasonTakesOnlyAnExplicitDecision(t *testing.T) {
	h := newHarness(t, 3)
	var rejected []*updateResult
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		id := h.approvalID("r2")
		rejected = append(rejected,
			h.update("u1", round.Confirm{CallID: "r2", Approve: true, ApprovalID: id, Remember: true}),
			h.update("u2", round.Confirm{CallID: "r2", Approve: true, ApprovalID: id, Pattern: "ls *", Remember: true}),
			h.update("u3", round.Confirm{CallID: "r2", Approve: true, ApprovalID: id, AllowTurn: true}),
			h.update("u4", round.Confirm{CallID: "r2", Approve: true, ApprovalID: id, Args: []byte(`{"command":"ls -a"}`)}),
			h.update("u5", round.Confirm{CallID: "r2", Approve: true, ApprovalID: id, WaitID: "feedface"}),
		)
		// allow_turn on the call that only needs an approval approves
		// nothing past a limit.
		h.confirm(round.Confirm{CallID: "e1", Approve: true, AllowTurn: true})
	})
	h.at(2*time.Second, func() {
		h.confirm(round.Confirm{CallID: "r2", Approve: false, Reason: "enough", WaitID: pendingOf(seen, "r2").WaitID})
	})
	in := limited(input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`), call("r2", "run_command", `{"command":"ls"}`)),
		round.Limits{MaxCommands: 1, MaxWrites: 1})
	res := h.run(t, in)

	require.Len(t, seen, 2)
	r2 := pendingOf(seen, "r2")
	require.Equal(t, round.KindLimit, r2.Kind)
	require.Len(t, r2.Reasons, 2, "one wait lists the approval's reason and the limit's: %v", r2.Reasons)
	require.Contains(t, strings.Join(r2.Reasons, "|"), "max_writes")
	require.Equal(t, round.KindConfirm, pendingOf(seen, "e1").Kind)
	require.NotEmpty(t, pendingOf(seen, "e1").WaitID, "every wait has a wait_id")

	want := []string{string(round.CodeInvalidDecision), string(round.CodeInvalidDecision), string(round.CodeInvalidDecision), string(round.CodeInvalidDecision), string(round.CodeStaleWait)}
	for i, u := range rejected {
		require.Error(t, u.rejected, "u%d", i+1)
		require.Equal(t, want[i], errType(u.rejected), "u%d: %v", i+1, u.rejected)
	}
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, round.StatusSkipped, res.Results[1].Status, "B1: a denied call past a limit is skipped")
	require.Equal(t, "Skipped by user. Reason: enough", res.Results[1].Content)
	require.Equal(t, 0, h.rec.RunsOf("r2"))
	require.Equal(t, int64(1), res.State.Usage.Writes)
	require.Equal(t, int64(0), res.State.Usage.Commands)
}

// TestWorkerLimitsBoundTheRun (B1): WORKER_LIMITS bounds every run
// whatever its input says.
func TestWorkerLimitsBoundTheRun(t *testing.T) {
	h := newHarness(t, 3)
	h.wf.Catalog = workflows.NewCatalog(h.reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute,
		WorkerLimits: round.Limits{MaxCalls: 1}})
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "c2", Approve: false})
	})
	in := limited(input(calc("c1"), call("c2", "calculate", `{"expression":"3"}`)), round.Limits{MaxCalls: 100})
	res := h.run(t, in)
	require.Len(t, seen, 1)
	require.Equal(t, "c2", seen[0].CallID)
	require.Contains(t, seen[0].Reasons[0], "limit 1")
	require.Equal(t, []round.Status{round.StatusOK, round.StatusSkipped}, statuses(res))
}

// TestLimitBelowWhatTheRunDidAsksAtTheNextCall (B1): a limit lower than
// the count so far does not fail the round; its next call asks.
func TestLimitBelowWhatTheRunDidAsksAtTheNextCall(t *testing.T) {
	h := newHarness(t, 3)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "c1", Approve: true})
	})
	res := h.run(t, limited(withUsage(input(calc("c1")), round.Usage{Calls: 9}), round.Limits{MaxCalls: 2}))
	require.Len(t, seen, 1)
	require.Contains(t, seen[0].Reasons[0], "call 10 of the run")
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, int64(10), res.State.Usage.Calls)
}

// TestMaxSecondsCountsFromTheRunsFirstRound (B1): wall time from the
// run's first round, waits included.
func TestMaxSecondsCountsFromTheRunsFirstRound(t *testing.T) {
	h := newHarness(t, 3)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.env.SetStartTime(start)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "c1", Approve: true})
	})
	first := start.Add(-2 * time.Hour)
	res := h.run(t, limited(withUsage(input(calc("c1")), round.Usage{Started: &first}), round.Limits{MaxSeconds: 3600}))
	require.Len(t, seen, 1)
	require.Contains(t, seen[0].Reasons[0], "max_seconds")
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, first, *res.State.Usage.Started, "the first round's start stays")
	require.Equal(t, int64(3600), res.State.Usage.Grown[round.LimitSeconds])

	// A run's first round records its start.
	h2 := newHarness(t, 3)
	h2.env.SetStartTime(start)
	res = h2.run(t, input(calc("c1")))
	require.NotNil(t, res.State.Usage.Started)
	require.True(t, res.State.Usage.Started.Equal(start), "%v", res.State.Usage.Started)
	require.Equal(t, int64(1), res.State.Usage.Calls)
}

// TestRunToolCountsItsInnerTool (B1): a call through run_tool counts as
// the tool it runs; commands and writes are counted apart.
func TestRunToolCountsItsInnerTool(t *testing.T) {
	h := newHarness(t, 3)
	in := auto(input(viaRunTool("r1", "run_command", `{"command":"echo hi"}`), viaRunTool("c1", "calculate", `{"expression":"1"}`), calcOf("c2", "2")))
	in.Provider = "openai"
	res := h.run(t, in)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK, round.StatusRefused}, statuses(res))
	u := res.State.Usage
	require.Equal(t, int64(2), u.Calls)
	require.Equal(t, int64(1), u.Commands)
	require.Equal(t, int64(1), u.Writes)
}

// TestUpToCountsAcrossRounds (B2): a rule remembered with up_to approves
// at most that many matching calls of the run, counted in the run state
// across rounds and in each approval record; then the next one asks.
func TestUpToCountsAcrossRounds(t *testing.T) {
	h := newHarness(t, 3)
	h.at(time.Second, func() {
		h.confirm(round.Confirm{CallID: "g0", Approve: true, Remember: true, Pattern: "git *", UpTo: 2})
	})
	res := h.run(t, input(call("g0", "run_command", `{"command":"git status"}`), call("g1", "run_command", `{"command":"git log"}`)))
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(res))
	require.Len(t, res.State.Allow, 1)
	require.Equal(t, int64(2), res.State.Allow[0].UpTo)
	require.Equal(t, round.DecisionRule, res.Results[1].Approval.Decision, "the rule remembered just now approved g1")
	require.Equal(t, int64(1), res.Results[1].Approval.Uses)
	require.Equal(t, int64(2), res.Results[1].Approval.UpTo)

	h2 := newHarness(t, 3)
	var seen []round.Pending
	h2.at(time.Second, func() {
		seen = h2.pending(t)
		h2.confirm(round.Confirm{CallID: "g3", Approve: false})
	})
	in := input(call("g2", "run_command", `{"command":"git diff"}`), call("g3", "run_command", `{"command":"git show"}`))
	in.Round, in.State = 2, res.State
	res2 := h2.run(t, in)
	require.Equal(t, round.DecisionRule, res2.Results[0].Approval.Decision)
	require.Equal(t, int64(2), res2.Results[0].Approval.Uses, "the count of round 1 carried over")
	require.Len(t, seen, 1, "the third matching call asks")
	require.Equal(t, "g3", seen[0].CallID)
	require.Equal(t, round.KindConfirm, seen[0].Kind)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusSkipped}, statuses(res2))

	// A rule whose bound was raised in the state fails its MAC and is ignored.
	forged := res2.State.Clone()
	forged.Allow[0].UpTo = 100
	h3 := newHarness(t, 3)
	var asked []round.Pending
	h3.at(time.Second, func() {
		asked = h3.pending(t)
		h3.confirm(round.Confirm{CallID: "g4", Approve: false})
	})
	in = input(call("g4", "run_command", `{"command":"git status"}`))
	in.Round, in.State = 3, forged
	h3.run(t, in)
	require.Len(t, asked, 1)
}

// TestUpToNeedsRemember (B2): up_to without remember, or outside its
// bounds, is an invalid decision.
func TestUpToNeedsRemember(t *testing.T) {
	h := newHarness(t, 3)
	var rejected []*updateResult
	h.at(time.Second, func() {
		id := h.approvalID("g0")
		rejected = append(rejected,
			h.update("u1", round.Confirm{CallID: "g0", Approve: true, ApprovalID: id, UpTo: 3}),
			h.update("u2", round.Confirm{CallID: "g0", Approve: true, ApprovalID: id, Remember: true, Pattern: "git *", UpTo: -1}),
		)
		h.confirm(round.Confirm{CallID: "g0", Approve: true})
	})
	h.run(t, input(call("g0", "run_command", `{"command":"git status"}`)))
	for _, u := range rejected {
		require.Equal(t, string(round.CodeInvalidDecision), errType(u.rejected), "%v", u.rejected)
	}
}

// TestARuleRememberedOnAnotherCallAnswersNoLimit (B1): a rule that a
// person remembers while approving one call settles the round's other
// calls it matches, but never one past a limit: that call keeps waiting
// for a decision of its own.
func TestARuleRememberedOnAnotherCallAnswersNoLimit(t *testing.T) {
	h := newHarness(t, 3)
	var before, after []round.Pending
	h.at(time.Second, func() {
		before = h.pending(t)
		h.confirm(round.Confirm{CallID: "r1", Approve: true, Remember: true, Pattern: "ls *"})
	})
	h.at(2*time.Second, func() {
		after = h.pending(t)
		if p := pendingOf(after, "r2"); p != nil {
			h.confirm(round.Confirm{CallID: "r2", Approve: false, Reason: "no more", WaitID: p.WaitID})
		}
	})
	in := limited(input(call("r1", "run_command", `{"command":"ls"}`), call("r2", "run_command", `{"command":"ls -a"}`)),
		round.Limits{MaxCommands: 1})
	res := h.run(t, in)

	require.Equal(t, round.KindLimit, pendingOf(before, "r2").Kind)
	require.NotNil(t, pendingOf(after, "r2"), "the rule remembered on r1 did not answer r2's limit")
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, round.StatusSkipped, res.Results[1].Status)
	require.Equal(t, 0, h.rec.RunsOf("r2"))
}
