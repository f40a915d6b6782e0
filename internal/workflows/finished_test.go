package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestCallFinishedOncePerCall (U7): every call of a round gets one
// call_finished event on the stream: from its activity's attempt when it
// ran (as it ends, before pass 3 and while a slower call still runs), from
// pass 3 when only the workflow knows its end (pass 1 outcomes, repeats of
// the same round, a cancelled run). None of them is in the result's events.
func TestCallFinishedOncePerCall(t *testing.T) {
	h := newHarness(t, 3)
	h.rec.Block["slow"] = make(chan struct{})
	var early []round.Event
	h.at(time.Second, func() {
		h.events.mu.Lock()
		early = append(early, h.events.events...)
		h.events.mu.Unlock()
		close(h.rec.Block["slow"])
	})
	res := h.run(t, input(
		call("fast", "calculate", `{"expression":"6*7"}`),
		call("slow", "calculate", `{"expression":"1"}`),
		call("dup", "calculate", `{"expression":"6*7"}`),
		call("bad", "calculate", `{}`),
		call("none", "nope", `{}`),
		call("fail", "read_files", `{"paths":["missing.txt"]}`),
	))
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK, round.StatusDeduped, round.StatusInvalid, round.StatusUnknown, round.StatusError}, statuses(res))

	finished := map[string]round.Event{}
	for _, e := range h.events.events {
		if e.Type != round.EventCallFinished {
			continue
		}
		_, dup := finished[e.CallID]
		require.False(t, dup, "one call_finished for %s", e.CallID)
		require.Equal(t, "default-test-workflow-id/"+e.CallID+"/finished", e.ID)
		finished[e.CallID] = e
	}
	require.Len(t, finished, 6, "one per call")
	require.Equal(t, res.Results[0].Content, finished["fast"].Detail, "the activity's preview: the content as the tool returned it")
	require.Equal(t, round.StatusDeduped, finished["dup"].Status)
	require.Equal(t, round.StatusInvalid, finished["bad"].Status)
	require.Equal(t, round.StatusUnknown, finished["none"].Status)
	require.Equal(t, round.StatusError, finished["fail"].Status)
	require.Zero(t, finished["bad"].DurationMS, "a call settled in pass 1 never ran")

	var earlyFinished []string
	for _, e := range early {
		require.NotEqual(t, round.EventToolResult, e.Type, "no pass 3 record while a call still runs")
		if e.Type == round.EventCallFinished {
			earlyFinished = append(earlyFinished, e.CallID)
		}
	}
	require.Contains(t, earlyFinished, "fast", "the fast call's end is on the stream while the slow call runs")
	require.NotContains(t, earlyFinished, "slow")
	for _, e := range res.Events {
		require.NotEqual(t, round.EventCallFinished, e.Type, "call_finished costs no history: it is not in the result's events")
	}
}
