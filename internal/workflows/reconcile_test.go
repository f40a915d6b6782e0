package workflows_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// lostTool is an at-most-once tool whose first run is lost (it hangs past
// its timeout) and whose reconciler answers the verdict in its arguments;
// with "again":"lost" the run once more is lost too.
type lostTool struct {
	mu    sync.Mutex
	runs  map[string][]int // generations run, per call
	asked map[string]int   // reconciliations, per call
}

func registerLost(h *harness) *lostTool {
	lt := &lostTool{runs: map[string][]int{}, asked: map[string]int{}}
	obj := json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"},"again":{"type":"string"}},"additionalProperties":false}`)
	h.reg.MustRegister(tools.Definition{
		Name: "poke", Description: "Change something; the first attempt is lost.", SideEffect: tools.AtMostOnce, Timeout: time.Second, Parameters: obj,
		Handler: func(ctx context.Context, req tools.Request) (tools.Result, error) {
			lt.mu.Lock()
			lt.runs[req.CallID] = append(lt.runs[req.CallID], req.Generation)
			lt.mu.Unlock()
			var a struct{ Again string }
			_ = json.Unmarshal(req.Args, &a)
			if req.Generation == 0 || a.Again == "lost" {
				<-ctx.Done()
				return tools.Result{}, ctx.Err()
			}
			return tools.Result{Content: "poked again", Touched: []string{"x"}}, nil
		},
		Reconcile: func(_ context.Context, req tools.Request) (tools.Reconciliation, error) {
			lt.mu.Lock()
			lt.asked[req.CallID]++
			lt.mu.Unlock()
			var a struct{ Verdict string }
			_ = json.Unmarshal(req.Args, &a)
			return tools.Reconciliation{Verdict: tools.Verdict(a.Verdict), Content: "reconciler says " + a.Verdict, Touched: []string{"x"}}, nil
		},
	})
	return lt
}

func TestLostAttemptsAreReconciled(t *testing.T) {
	h := newHarness(t, 4)
	lt := registerLost(h)
	h.env.RegisterActivityWithOptions((&activities.Activities{Registry: h.reg}).Reconcile, activity.RegisterOptions{Name: wire.ActivityReconcile})
	in := auto(input(
		call("a", "poke", `{"verdict":"applied"}`),
		call("b", "poke", `{"verdict":"absent"}`),
		call("u", "poke", `{"verdict":"unknown"}`),
	))
	in.State.Fetched = append(in.State.Fetched, "poke")
	res := h.run(t, in)
	r := map[string]round.CallResult{}
	for _, x := range res.Results {
		r[x.CallID] = x
	}
	require.Equal(t, round.StatusOK, r["a"].Status, r["a"].Content)
	require.True(t, r["a"].Reconciled)
	require.Contains(t, r["a"].Content, "reconciler says applied")
	require.Equal(t, round.StatusOK, r["b"].Status, r["b"].Content)
	require.False(t, r["b"].Reconciled)
	require.Equal(t, "poked again", r["b"].Content)
	require.Equal(t, 2, r["b"].Attempts)
	require.Equal(t, round.StatusUnknownOutcome, r["u"].Status)
	require.Contains(t, r["u"].Content, "reconciler says unknown")
	require.False(t, r["u"].Reconciled)
	for _, id := range []string{"a", "b", "u"} {
		require.Regexp(t, `^[^/]+/[^/]+/`+id+`$`, r[id].OperationID)
	}
	// U7: a reconciled call's end is known to the workflow only (its
	// attempt was lost): it too gets exactly one call_finished, with its
	// final status.
	finished := map[string][]round.Status{}
	h.events.mu.Lock()
	for _, e := range h.events.events {
		if e.Type == round.EventCallFinished {
			finished[e.CallID] = append(finished[e.CallID], e.Status)
		}
	}
	h.events.mu.Unlock()
	require.Equal(t, map[string][]round.Status{"a": {round.StatusOK}, "b": {round.StatusOK}, "u": {round.StatusUnknownOutcome}}, finished)
	lt.mu.Lock()
	defer lt.mu.Unlock()
	require.Equal(t, map[string][]int{"a": {0}, "b": {0, 1}, "u": {0}}, lt.runs, "only an absent effect runs once more")
	require.Equal(t, map[string]int{"a": 1, "b": 1, "u": 1}, lt.asked)
}

// When the run once more after an absent verdict is lost as well, the call
// is unknown_outcome and says what happened, both attempts counted; the
// second loss is not reconciled into a third run.
func TestRunOnceMoreLostTooIsNotRunAgain(t *testing.T) {
	h := newHarness(t, 4)
	lt := registerLost(h)
	h.env.RegisterActivityWithOptions((&activities.Activities{Registry: h.reg}).Reconcile, activity.RegisterOptions{Name: wire.ActivityReconcile})
	in := auto(input(call("b", "poke", `{"verdict":"absent","again":"lost"}`)))
	in.State.Fetched = append(in.State.Fetched, "poke")
	res := h.run(t, in)
	r := res.Results[0]
	require.Equal(t, round.StatusUnknownOutcome, r.Status, r.Content)
	require.False(t, r.Reconciled)
	require.Equal(t, 2, r.Attempts)
	require.Contains(t, r.Content, "the outcome is unknown: the first attempt was lost (starttoclose timeout: the worker died or the call hung); "+
		"a reconciliation proved its effect absent and that attempt dead (reconciler says absent), so the call ran once more; "+
		"that run was lost too (starttoclose timeout: the worker died or the call hung). "+
		"It was not run a third time, because it has side effects; check whether it took effect before calling it again.")
	require.NotContains(t, r.Content, "It was not run again")
	lt.mu.Lock()
	defer lt.mu.Unlock()
	require.Equal(t, map[string][]int{"b": {0, 1}}, lt.runs, "one run once more, never a third")
	require.Equal(t, map[string]int{"b": 1}, lt.asked, "the second loss is not reconciled")
}
