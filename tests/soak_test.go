package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// TestSoakManySessionsOneWorker keeps 12 sessions' runs going at once
// against one worker for 20 s (SOAK_DURATION overrides it). Each run carries
// its state from round to round: a repeated calculation is deduped from the
// state, a read sees the previous round's edit (the edit dropped the stale
// entry), and a command appends one line per round. Every round must
// complete with every call once and the expected statuses; at the end each
// session's log holds exactly one line per round. It reports rounds,
// errors (which must be 0) and latency percentiles.
func TestSoakManySessionsOneWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test runs without -short")
	}
	duration := 20 * time.Second
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		duration = d
	}
	const sessions = 12
	e := newEnv(t)
	w := e.startWorker()
	c := client.New(e.dial(t), client.Options{TaskQueue: e.taskQueue})

	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  []string
		rounds    = make([]int, sessions)
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("%s-%02d", e.session, s)
			file := fmt.Sprintf("s%02d.txt", s)
			var state *round.RunState
			for n := 1; time.Now().Before(deadline); n++ {
				in := round.Input{SessionID: session, RunID: "run", Round: n, Provider: "claude-code", AutoApprove: true, State: state,
					Assistant: round.Message{Role: "assistant", ToolCalls: []round.ToolCall{
						call("same", "calculate", map[string]any{"expression": "1+1"}),
						call("calc", "calculate", map[string]any{"expression": fmt.Sprintf("%d*%d", n, s+1)}),
						call("read", "read_files", map[string]any{"paths": []string{file}}),
						call("edit", "edit_file", map[string]any{"path": file, "new_text": fmt.Sprintf("round %d of session %d\n", n, s)}),
						call("cmd", "run_command", map[string]any{"command": fmt.Sprintf("echo %d >> %s.log", n, file)}),
					}}}
				if state == nil {
					in.State = &round.RunState{Fetched: allTools}
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				start := time.Now()
				res, err := c.Run(ctx, &in)
				took := time.Since(start)
				cancel()
				if err != nil {
					fail("session %d round %d: %v", s, n, err)
					return
				}
				if why := checkSoakRound(res, n, s); why != "" {
					fail("session %d round %d: %s", s, n, why)
					return
				}
				state = res.State
				mu.Lock()
				latencies = append(latencies, took)
				rounds[s] = n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	total := 0
	for _, n := range rounds {
		total += n
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Round(time.Millisecond)
	}
	t.Logf("soak: %d sessions, %v: %d rounds completed (%.1f/s), %d errors, latency p50 %v p99 %v max %v",
		sessions, duration, total, float64(total)/duration.Seconds(), len(failures), pct(0.5), pct(0.99), pct(1))
	require.Empty(t, failures)
	require.Positive(t, total)
	for s, n := range rounds {
		require.GreaterOrEqual(t, n, 2, "session %d ran fewer than two rounds", s)
		log := filepath.Join(e.workdir, fmt.Sprintf("s%02d.txt.log", s))
		for i := 1; i <= n; i++ {
			require.Equal(t, 1, countLines(t, log, strconv.Itoa(i)), "session %d: round %d's command ran once", s, i)
		}
	}
	require.True(t, w.alive())
}

// hasLine reports whether read_files output shows a line with exactly text.
func hasLine(out, text string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == text || strings.HasSuffix(l, "\t"+text) {
			return true
		}
	}
	return false
}

// checkSoakRound says what is wrong with round n of session s, or "".
func checkSoakRound(res *round.Result, n, s int) string {
	if len(res.Results) != 5 || len(res.Messages) != 5 {
		return fmt.Sprintf("%d results, %d messages", len(res.Results), len(res.Messages))
	}
	want := map[string]round.Status{"same": round.StatusOK, "calc": round.StatusOK, "read": round.StatusOK, "edit": round.StatusOK, "cmd": round.StatusOK}
	if n > 1 {
		want["same"] = round.StatusDeduped // from the state of round 1
	} else if !strings.Contains(res.Results[2].Content, "round 1 of") {
		want["read"] = round.StatusError // it ran before the edit made the file
	}
	for i, id := range []string{"same", "calc", "read", "edit", "cmd"} {
		r := res.Results[i]
		if r.CallID != id || res.Messages[i].ToolCallID != id {
			return fmt.Sprintf("result %d is %q", i, r.CallID)
		}
		if r.Status != want[id] {
			return fmt.Sprintf("%s: %s: %s", id, r.Status, r.Content)
		}
	}
	if !strings.Contains(res.Results[1].Content, strconv.Itoa(n*(s+1))) {
		return "calc: " + res.Results[1].Content
	}
	// The read runs beside this round's edit (a concurrent and a serial
	// call), so it sees this round's text or the last one's, never an older
	// one from a stale dedupe entry.
	got := res.Results[2].Content
	if n > 1 && !hasLine(got, fmt.Sprintf("round %d of session %d", n-1, s)) && !hasLine(got, fmt.Sprintf("round %d of session %d", n, s)) {
		return "read saw neither this round's edit nor the last one's: " + got
	}
	return ""
}
