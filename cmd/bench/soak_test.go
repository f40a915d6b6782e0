package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/tools"
)

// The script loads the tools' schemas, makes PerRound calls a round with
// every WriteEvery-th at-most-once, keyed by step and position, then
// answers; the same step always gets the same turn.
func TestSoakScript(t *testing.T) {
	o := SoakOptions{Calls: 40, PerRound: 4, WriteEvery: 2}
	steps := &stepCounter{n: map[int]int{}}
	s := soakScript(o, steps)
	turn := func(step int) scripted.Turn {
		tr, err := s.Turn(scripted.Request{Step: step})
		require.NoError(t, err)
		return tr
	}
	first := turn(1)
	require.Len(t, first.Calls, 1)
	require.Equal(t, tools.FindTools, first.Calls[0].Name)
	require.Contains(t, first.Calls[0].Args, "select:"+ToolSoakRead+","+ToolSoakWrite)
	r := turn(2)
	require.Len(t, r.Calls, 4)
	require.Equal(t, []string{ToolSoakRead, ToolSoakWrite, ToolSoakRead, ToolSoakWrite},
		[]string{r.Calls[0].Name, r.Calls[1].Name, r.Calls[2].Name, r.Calls[3].Name})
	require.Equal(t, "c2_1", r.Calls[1].ID)
	require.Equal(t, `{"k":"2_1"}`, r.Calls[1].Args)
	require.Equal(t, r, turn(2))
	require.Len(t, turn(11).Calls, 4, "10 rounds of calls after the first")
	require.Equal(t, "done", turn(12).Text)
	total, extra := steps.repeated()
	require.Equal(t, 5, total)
	require.Equal(t, 1, extra, "step 2 was asked twice")
}

// The recorder counts an at-most-once operation id that ran twice, and a
// key that ran under two operation ids, and asks for a kill each time the
// distinct keys reach a multiple of every.
func TestSoakRecorder(t *testing.T) {
	rec := newRecorder(2)
	post := func(body string) int {
		w := httptest.NewRecorder()
		rec.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/record", strings.NewReader(body)))
		return w.Code
	}
	require.Equal(t, http.StatusNoContent, post(`{"kind":"read","key":"2_0"}`))
	require.Equal(t, http.StatusNoContent, post(`{"kind":"read","key":"2_0"}`), "a read-only call may run again")
	ops, keys := rec.duplicates()
	require.Zero(t, ops+keys)
	require.Empty(t, rec.kills)
	require.Equal(t, http.StatusNoContent, post(`{"kind":"write","key":"2_1","operation_id":"op-1"}`))
	require.Equal(t, 2, <-rec.kills)
	require.Equal(t, http.StatusNoContent, post(`{"kind":"write","key":"2_1","operation_id":"op-1"}`))
	require.Equal(t, http.StatusNoContent, post(`{"kind":"write","key":"2_1","operation_id":"op-2"}`))
	ops, keys = rec.duplicates()
	require.Equal(t, 1, ops)
	require.Equal(t, 1, keys)
	require.Empty(t, rec.kills, "no new key, no kill")
	require.Equal(t, http.StatusBadRequest, post(`{}`))
}

func TestKilledDuring(t *testing.T) {
	t0 := time.Unix(1000, 0)
	kills := []time.Time{t0.Add(5 * time.Second)}
	require.True(t, killedDuring(kills, t0, t0.Add(10*time.Second)))
	require.False(t, killedDuring(kills, t0.Add(6*time.Second), t0.Add(10*time.Second)))
	require.False(t, killedDuring(nil, t0, t0.Add(10*time.Second)))
}
