package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// watcher is a running `starter watch` process.
type watcher struct {
	out  *syncBuffer
	errs *syncBuffer
}

func (e *env) watch(args ...string) *watcher {
	e.t.Helper()
	w := &watcher{out: &syncBuffer{}, errs: &syncBuffer{}}
	cmd := exec.Command(starterBin, append([]string{"watch", e.session}, args...)...)
	cmd.Env = e.environ()
	cmd.Stdout, cmd.Stderr = w.out, w.errs
	startUntilCleanup(e.t, cmd, fmt.Sprintf("starter watch %v", args), func() string { return w.out.String() + w.errs.String() })
	return w
}

// newWatchedEnv is an env with a worker, watched by `starter watch --json`
// and `starter watch`, which both see what the session publishes from now
// on.
func newWatchedEnv(t *testing.T) (e *env, asJSON, readable *watcher) {
	t.Helper()
	e = newEnv(t)
	e.startWorker()
	asJSON, readable = e.watch("--json"), e.watch()
	e.waitWatching(asJSON, readable)
	return e, asJSON, readable
}

// waitWatching publishes probe events until every watcher prints one: from
// then on, they see whatever the session publishes.
func (e *env) waitWatching(ws ...*watcher) {
	e.t.Helper()
	rc, err := cache.Open(context.Background(), cache.Options{URL: testenv.RedisURL()})
	require.NoError(e.t, err)
	defer rc.Close()
	e.t.Cleanup(func() { rc.Redis().Del(context.Background(), cache.EventsKey(e.session)) })
	probes := 0
	require.Eventually(e.t, func() bool {
		probes++
		_ = rc.Events().Publish(context.Background(), e.session, []round.Event{{
			ID: fmt.Sprintf("probe-%d", probes), Type: "probe", SessionID: e.session, Time: time.Now().UTC(),
		}})
		for _, w := range ws {
			if !strings.Contains(w.out.String(), "probe") {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond)
}

// events decodes the JSON lines of a watcher, without the probes.
func (w *watcher) events() ([]round.Event, error) {
	var out []round.Event
	for _, line := range strings.Split(strings.TrimSpace(w.out.String()), "\n") {
		var ev round.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return nil, fmt.Errorf("not a JSON event: %q: %w", line, err)
		}
		if ev.Type != "probe" {
			out = append(out, ev)
		}
	}
	return out, nil
}

// has reports whether the watcher printed an event of the type and call;
// it may run outside the test's goroutine.
func (w *watcher) has(typ, callID string) bool {
	evs, err := w.events()
	if err != nil {
		return false
	}
	for _, ev := range evs {
		if ev.Type == typ && ev.CallID == callID {
			return true
		}
	}
	return false
}

// TestWatchShowsEventsLive runs `starter watch` beside a round that waits
// for an approval: the round's start and its confirmation request arrive
// while it waits, then the answer, the calls, their results and the end,
// each event once, as JSON and as readable lines.
func TestWatchShowsEventsLive(t *testing.T) {
	e, asJSON, readable := newWatchedEnv(t)

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("c1", "calculate", map[string]any{"expression": "6*7"}),
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x"}),
	)
	wfID := in.WorkflowID()
	done := e.startRound(in)

	require.Eventually(t, func() bool {
		return asJSON.has(round.EventRoundStarted, "") && asJSON.has(round.EventConfirmationRequested, "e1")
	}, 30*time.Second, 20*time.Millisecond)
	p := e.starter(context.Background(), "", "pending", wfID)
	require.Equal(t, 0, p.code, p.stderr)
	require.Contains(t, p.stdout, `"e1"`, "the events arrived while the round still waits")
	require.False(t, asJSON.has(round.EventToolResult, "c1"), "no results before the approval")
	require.Contains(t, readable.out.String(), "confirmation_requested")

	ap := e.starter(context.Background(), "", "approve", wfID, "e1")
	require.Equal(t, 0, ap.code, ap.stderr)
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	require.Eventually(t, func() bool { return asJSON.has(round.EventRoundFinished, "") }, 30*time.Second, 20*time.Millisecond)

	got, err := asJSON.events()
	require.NoError(t, err)
	pos := map[string]int{}
	for i, ev := range got {
		_, dup := pos[ev.ID]
		require.False(t, dup, "event %s arrived twice", ev.ID)
		pos[ev.ID] = i
		require.Equal(t, e.session, ev.SessionID)
		require.Equal(t, wfID, ev.WorkflowID)
	}
	var want []string
	for _, ev := range res.Events {
		want = append(want, ev.ID)
		require.Contains(t, pos, ev.ID, "the stream has every event of the result (%s %s)", ev.Type, ev.CallID)
	}
	require.Len(t, got, len(want)+4, "and no others but the two call_started and two call_finished events, which the stream has and the result leaves out")
	order := []string{
		wfID + "/started", wfID + "/e1/confirm", wfID + "/e1/answered", wfID + "/e1/started", wfID + "/e1/result", wfID + "/finished",
	}
	for i := 1; i < len(order); i++ {
		require.Less(t, pos[order[i-1]], pos[order[i]], "%s comes before %s", order[i-1], order[i])
	}
	require.Less(t, pos[wfID+"/c1/started"], pos[wfID+"/c1/result"])

	require.Eventually(t, func() bool { return strings.Contains(readable.out.String(), "round_finished") }, 30*time.Second, 20*time.Millisecond)
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(readable.out.String()), "\n") {
		require.False(t, strings.HasPrefix(line, "{"), "readable, not JSON: %s", line)
		if !strings.Contains(line, "probe") {
			lines = append(lines, line)
		}
	}
	require.Len(t, lines, len(got), "one line per event:\n%s", strings.Join(lines, "\n"))
	for _, frag := range [][]string{
		{"run-1/round 1", "round_started", "2 calls"},
		{"confirmation_requested", "e1 edit_file", "x.txt"},
		{"confirmation_answered", "e1 edit_file", "approved"},
		{"call_finished", "c1 calculate", "[ok]", "ms", "42"},
		{"tool_result", "c1 calculate", "[ok]", "42"},
		{"tool_result", "e1 edit_file", "[ok]"},
		{"round_finished"},
	} {
		found := false
		for _, line := range lines {
			if containsAll(line, frag...) {
				found = true
			}
		}
		require.True(t, found, "a line with %q in:\n%s", frag, strings.Join(lines, "\n"))
	}
}

// TestCallFinishedArrivesWhileTheRoundRuns (U7): in a round of a fast
// calculate and a run_command that waits for the test, the fast call's
// call_finished reaches `starter watch` (JSON and text) and `starter round
// --events` while the slow call still runs, within a second of its end; then the slow call's, each once,
// each before its pass 3 tool_result, none of them in the result.
func TestCallFinishedArrivesWhileTheRoundRuns(t *testing.T) {
	e, asJSON, readable := newWatchedEnv(t)

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("c1", "calculate", map[string]any{"expression": "6*7"}),
		call("s1", "run_command", map[string]any{"command": "while [ ! -e go ]; do sleep 0.05; done; echo released"}),
	)
	in.AutoApprove = true
	wfID := in.WorkflowID()
	// starter round --events, whose stderr has the same lines as they come.
	cmd := exec.Command(starterBin, "round", "--events", "-")
	cmd.Env, cmd.Stdin = e.environ(), strings.NewReader(mustJSON(t, in))
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	done := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- result{stdout: stdout.String(), stderr: stderr.String(), code: code}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var seen time.Time
	require.Eventually(t, func() bool {
		if asJSON.has(round.EventCallFinished, "c1") {
			seen = time.Now()
			return true
		}
		return false
	}, 60*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		return strings.Contains(stderr.String(), `"id":"`+wfID+`/c1/finished","type":"call_finished"`)
	}, 30*time.Second, 10*time.Millisecond, "starter round --events writes it while the round runs:\n%s", stderr.String())
	require.False(t, asJSON.has(round.EventCallFinished, "s1"), "the slow call waits for the test")
	require.False(t, asJSON.has(round.EventRoundFinished, ""), "the round still runs")
	select {
	case r := <-done:
		t.Fatalf("the round ended before the slow call was released: %s%s", r.stdout, r.stderr)
	default:
	}
	evs, err := asJSON.events()
	require.NoError(t, err)
	for _, ev := range evs {
		require.NotEqual(t, round.EventToolResult, ev.Type, "no pass 3 record yet")
		if ev.Type == round.EventCallFinished && ev.CallID == "c1" {
			require.Equal(t, wfID+"/c1/finished", ev.ID)
			require.Equal(t, round.StatusOK, ev.Status)
			require.Equal(t, "42", ev.Detail)
			require.Less(t, seen.Sub(ev.Time), time.Second, "on the stream within a second of the call's end")
		}
	}
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(readable.out.String(), "\n") {
			if containsAll(line, "call_finished", "c1 calculate", "[ok]", " ms", "42") {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "the text watcher shows it too")

	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, byID(res)["s1"].Status, byID(res)["s1"].Content)
	for _, ev := range res.Events {
		require.NotEqual(t, round.EventCallFinished, ev.Type, "call_finished is not in the result's events")
	}
	require.Eventually(t, func() bool { return asJSON.has(round.EventRoundFinished, "") }, 30*time.Second, 10*time.Millisecond)
	evs, err = asJSON.events()
	require.NoError(t, err)
	pos, n := map[string]int{}, 0
	for i, ev := range evs {
		if ev.Type == round.EventCallFinished {
			n++
		}
		_, dup := pos[ev.ID]
		require.False(t, dup, "event %s arrived twice", ev.ID)
		pos[ev.ID] = i
	}
	require.Equal(t, 2, n, "one call_finished per call")
	require.Less(t, pos[wfID+"/c1/finished"], pos[wfID+"/s1/finished"])
	require.Less(t, pos[wfID+"/s1/finished"], pos[wfID+"/s1/result"])
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func (e *env) progress(wfID string) (round.Progress, bool) {
	var p round.Progress
	r := e.starter(context.Background(), "", "progress", wfID)
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil {
		return p, false
	}
	return p, true
}

func states(p round.Progress) map[string]string {
	m := map[string]string{}
	for _, c := range p.Calls {
		m[c.CallID] = c.State
	}
	return m
}

// TestProgressMidRound asks `starter progress` while calls wait for
// approval, then while a command runs with other serial calls queued behind
// it, then after the round.
func TestProgressMidRound(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
		call("s1", "run_command", map[string]any{"command": "touch started; while [ ! -f go ]; do sleep 0.02; done"}),
		call("s2", "run_command", map[string]any{"command": "echo second"}),
		call("e1", "edit_file", map[string]any{"path": "y.txt", "new_text": "y"}),
	)
	wfID := in.WorkflowID()
	done := e.startRound(in)

	var p round.Progress
	require.Eventually(t, func() bool {
		var ok bool
		p, ok = e.progress(wfID)
		return ok && p.Phase == "confirm"
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, map[string]string{"c1": "planned", "s1": "waiting", "s2": "waiting", "e1": "waiting"}, states(p))

	ap := e.starter(context.Background(), "", "approve", wfID, "s1", "--allow-turn")
	require.Equal(t, 0, ap.code, ap.stderr)
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(e.workdir, "started"))
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		var ok bool
		p, ok = e.progress(wfID)
		return ok && states(p)["c1"] == "done"
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, round.PhaseExecute, p.Phase)
	require.Equal(t, map[string]string{"c1": "done", "s1": "running", "s2": "queued", "e1": "queued"}, states(p),
		"the command runs; the serial calls after it wait their turn")
	require.Equal(t, round.StatusOK, p.Calls[0].Status)

	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, "%s: %s", r.CallID, r.Content)
	}
	p, ok := e.progress(wfID)
	require.True(t, ok, "a finished round still answers")
	require.Equal(t, round.PhaseDone, p.Phase)
	require.Equal(t, map[string]string{"c1": "done", "s1": "done", "s2": "done", "e1": "done"}, states(p))
}
