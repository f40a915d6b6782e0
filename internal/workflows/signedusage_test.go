package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// bounded is a harness whose worker has WORKER_LIMITS max_calls 5.
func bounded(t *testing.T) *harness {
	h := newHarness(t, 3)
	h.wf.Catalog = workflows.NewCatalog(h.reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute,
		WorkerLimits: round.Limits{MaxCalls: 5}})
	return h
}

// firstRound runs round 1 of run on a bounded worker: one call, and
// returns the state it hands on.
func firstRound(t *testing.T, run string) *round.RunState {
	in := input(calc("a1"))
	in.RunID = run
	res := bounded(t).run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.NotNil(t, res.State.Usage)
	require.Equal(t, int64(1), res.State.Usage.Calls)
	return res.State
}

// secondRound runs round 2 of run "r" with state st on a bounded worker:
// one call, decided no by whoever is asked; it returns what pending showed.
func secondRound(t *testing.T, st *round.RunState) ([]round.Pending, round.Result) {
	h := bounded(t)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		if len(seen) > 0 {
			h.confirm(round.Confirm{CallID: "b1", Approve: false, Reason: "no"})
		}
	})
	in := auto(input(calcOf("b1", "2+2")))
	in.Round, in.State = 2, st
	return seen, h.run(t, in)
}

// requireRefused runs round 2 of run "r" with st on a bounded worker and
// checks that it fails as an input error that says why (T15; before it the
// round's calls asked, unverified_usage, and the round signed the counts
// it was given).
func requireRefused(t *testing.T, st *round.RunState, why string) {
	t.Helper()
	in := auto(input(calcOf("b1", "2+2")))
	in.Round, in.State = 2, st
	app := roundError(t, bounded(t), in)
	require.Contains(t, app.Message(), why)
}

// TestSignedUsageCarriesAcrossRounds (B1): a round on a worker with
// WORKER_LIMITS signs the usage it hands on, and the next round of the run
// takes it without asking.
func TestSignedUsageCarriesAcrossRounds(t *testing.T) {
	st := firstRound(t, "r")
	require.NotEmpty(t, st.Usage.MAC)
	seen, res := secondRound(t, st)
	require.Empty(t, seen)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, int64(2), res.State.Usage.Calls)
	require.NotEmpty(t, res.State.Usage.MAC)
	require.NotEqual(t, st.Usage.MAC, res.State.Usage.MAC)
}

// TestResetUsageDoesNotPassWorkerLimits (B1, T15): a client that lowers
// the counts it carries gets an input error.
func TestResetUsageDoesNotPassWorkerLimits(t *testing.T) {
	st := firstRound(t, "r")
	st.Usage.Calls = 0
	requireRefused(t, st, "does not verify")
}

// TestRaisedGrownDoesNotPassWorkerLimits (B1, T15): so does one that
// raises what approvals added to a limit.
func TestRaisedGrownDoesNotPassWorkerLimits(t *testing.T) {
	st := firstRound(t, "r")
	st.Usage.Grown = map[string]int64{round.LimitCalls: 1000}
	requireRefused(t, st, "does not verify")
}

// TestDroppedUsageDoesNotPassWorkerLimits (B1, T15): and one that drops
// the usage after the run's first round.
func TestDroppedUsageDoesNotPassWorkerLimits(t *testing.T) {
	st := firstRound(t, "r")
	st.Usage = nil
	requireRefused(t, st, "missing or unsigned")
}

// TestUnsignedUsageDoesNotPassWorkerLimits (B1, T15): and one that sends
// counts without a signature.
func TestUnsignedUsageDoesNotPassWorkerLimits(t *testing.T) {
	st := firstRound(t, "r")
	st.Usage.MAC = ""
	requireRefused(t, st, "missing or unsigned")
}

// TestAnotherRunsUsageDoesNotPassWorkerLimits (B1, T15): and one that
// sends the signed usage of another run.
func TestAnotherRunsUsageDoesNotPassWorkerLimits(t *testing.T) {
	st := firstRound(t, "other")
	requireRefused(t, st, "does not verify")
}

// TestUnsignedUsageIsABrakeWithoutWorkerLimits (B1, T15): without
// WORKER_LIMITS unsigned counts (a run from before T15) are the client's
// brake and taken; the round signs what it hands on.
func TestUnsignedUsageIsABrakeWithoutWorkerLimits(t *testing.T) {
	h := newHarness(t, 3)
	in := auto(withUsage(input(calc("b1")), round.Usage{Calls: 1}))
	in.Round = 2
	res := h.run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, int64(2), res.State.Usage.Calls)
	require.NotEmpty(t, res.State.Usage.MAC)
}

// TestUsageSignedBeforeT15CountsAsExhausted (B1, T15, V1): a usage that a
// worker from before T15 signed for the run but for no round may be any
// earlier round's, so its counts are taken as reached: the round runs (a
// run in flight across the upgrade goes on) but every call past a limit
// of WORKER_LIMITS asks, and no count is lowered.
func TestUsageSignedBeforeT15CountsAsExhausted(t *testing.T) {
	st := &round.RunState{Fetched: input().State.Fetched, Usage: &round.Usage{Calls: 1}}
	st.Usage.MAC = approval.UsageMAC(ruleKey, "s", "r", st.Usage.Canonical())
	seen, res := secondRound(t, st)
	require.Len(t, seen, 1, "the call asks: the counts may be stale")
	require.Equal(t, round.KindLimit, seen[0].Kind)
	require.Contains(t, seen[0].Reasons[0], "past max_calls")
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Equal(t, int64(5), res.State.Usage.Calls, "counted as reached: WORKER_LIMITS max_calls 5")
	require.Equal(t, 2, res.State.Usage.Round)
}
