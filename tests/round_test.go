package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

var allTools = []string{"calculate", "edit_file", "read_files", "run_command"}

// TestRoundThroughWorkerAndStarter runs three rounds of one run as a user
// does: a deferred schema, a concurrent fan-out with a repeated call, an
// approval answered with `starter approve`, a serial command, and a dedupe
// hit from an earlier round.
func TestRoundThroughWorkerAndStarter(t *testing.T) {
	e := newEnv(t)
	e.startWorker()

	in1 := e.input(1, "openai", nil,
		call("f1", "find_tools", map[string]any{"query": "select:read_files,calculate,edit_file,run_command"}),
		runTool("d1", "write_todo", map[string]any{"items": []any{}}),
		call("x1", "read_files", map[string]any{"paths": []string{"a.txt"}}),
	)
	res1 := e.round(in1)
	requireEveryCallOnce(t, in1, res1)
	r := byID(res1)
	require.Equal(t, round.StatusOK, r["f1"].Status, r["f1"].Content)
	require.Equal(t, round.StatusOK, r["d1"].Status, "S1: write_todo is loaded for every provider")
	require.Equal(t, round.StatusRefused, r["x1"].Status, "P1.2")
	require.Contains(t, r["x1"].Content, "find_tools")
	for _, name := range allTools {
		require.Contains(t, res1.State.Fetched, name, "S4: find_tools marks what it returned")
	}

	in2 := e.input(2, "openai", res1.State,
		runTool("c1", "calculate", map[string]any{"expression": "6*7"}),
		runTool("c2", "calculate", map[string]any{"expression": "2+2"}),
		runTool("c3", "calculate", map[string]any{"expression": "10/4"}),
		runTool("c4", "calculate", map[string]any{"expression": "6 * 7"}),
		runTool("c5", "calculate", map[string]any{"expression": "6*7"}),
		runTool("e1", "edit_file", map[string]any{"path": "hello.txt", "new_text": "hello from a round\n"}),
		runTool("s1", "run_command", map[string]any{"command": "cat hello.txt"}),
		runTool("u1", "read_file", map[string]any{"paths": []string{"x"}}),
	)
	done := e.startRound(in2)
	wfID := names.WorkflowID(e.session, "run-1", 2)
	var pending []round.Pending
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", wfID)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &pending) != nil {
			return false
		}
		return len(pending) == 2
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, "e1", pending[0].CallID, "P1.6: all confirmations of the round are raised together")
	require.Equal(t, "s1", pending[1].CallID)
	require.Equal(t, "cat hello.txt", pending[1].Subject)
	ap := e.starter(context.Background(), "", "approve", wfID, "e1", "--allow-turn")
	require.Equal(t, 0, ap.code, ap.stderr)

	res2 := decodeResult(t, <-done)
	requireEveryCallOnce(t, in2, res2)
	r = byID(res2)
	require.Equal(t, round.StatusOK, r["c1"].Status)
	require.Contains(t, r["c1"].Content, "42")
	require.Contains(t, r["c3"].Content, "2.5")
	require.Equal(t, round.StatusDeduped, r["c5"].Status, "P1.3: the repeat in the round runs once")
	require.Equal(t, r["c1"].Content, r["c5"].Content)
	require.Equal(t, round.StatusOK, r["e1"].Status, r["e1"].Content)
	require.Equal(t, round.StatusOK, r["s1"].Status, r["s1"].Content)
	require.Contains(t, r["s1"].Content, "hello from a round", "the serial command ran after the edit, in call order")
	require.Equal(t, round.StatusUnknown, r["u1"].Status)
	require.Contains(t, r["u1"].Content, "read_files")
	got, err := os.ReadFile(filepath.Join(e.workdir, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from a round\n", string(got))
	require.Equal(t, "assistant", res2.History[0].Role)
	require.Len(t, res2.History, len(in2.Assistant.ToolCalls)+1)

	in3 := e.input(3, "openai", res2.State, runTool("c9", "calculate", map[string]any{"expression": "6*7"}))
	res3 := e.round(in3)
	require.Equal(t, round.StatusDeduped, res3.Results[0].Status, "P1.3: dedupe spans the rounds of a run")
	require.Equal(t, r["c1"].Content, res3.Results[0].Content)
}

func TestDenyWithReasonThroughStarter(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	e.waitPending(wfID, "e1")
	unknown := e.starter(context.Background(), "", "deny", wfID, "nope", "--reason", "x")
	require.Equal(t, 1, unknown.code, "a decision for a call that does not wait is refused (T6): %s", unknown.stderr)
	require.Contains(t, unknown.stderr, "does not wait for a decision")
	d := e.starter(context.Background(), "", "deny", wfID, "e1", "--reason", "not today")
	require.Equal(t, 0, d.code, d.stderr)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Equal(t, "Skipped by user. Reason: not today", res.Results[0].Content)
	_, err := os.Stat(filepath.Join(e.workdir, "x.txt"))
	require.True(t, os.IsNotExist(err), "a denied call never runs")
	for _, ev := range res.Events {
		require.NotEqual(t, round.EventSignalIgnored, ev.Type, "the refused decision never reached the round")
	}
}

// TestSameRoundTwiceRunsOnce submits one round twice: the second submission
// attaches to the first execution and the command's side effect happens once.
func TestSameRoundTwiceRunsOnce(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("s1", "run_command", map[string]any{"command": "echo ran >> count.txt"}))
	in.AutoApprove = true
	first := e.round(in)
	second := e.round(in)
	require.Equal(t, first, second)
	require.Equal(t, round.StatusOK, first.Results[0].Status, first.Results[0].Content)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "count.txt"), "ran"))

	changed := in
	changed.Assistant.ToolCalls = []round.ToolCall{call("s1", "run_command", map[string]any{"command": "echo other >> count.txt"})}
	r := e.starter(context.Background(), mustJSON(t, changed), "round", "-")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "different input")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "the error is one line")
}

// TestWorkerKilledMidRound kills the worker with SIGKILL while a
// side-effecting command runs, then starts a new one: the finished calls do
// not run again, the interrupted one reports unknown_outcome instead of a
// second run, and the queued one runs once.
func TestWorkerKilledMidRound(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	log := filepath.Join(e.workdir, "log.txt")
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
		call("s1", "run_command", map[string]any{"command": "echo a >> log.txt"}),
		call("s2", "run_command", map[string]any{"command": "echo b >> log.txt; sleep 60"}),
		call("s3", "run_command", map[string]any{"command": "echo c >> log.txt"}),
	)
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return countLines(t, log, "b") == 1 }, 30*time.Second, 20*time.Millisecond)
	w.kill(t)
	killed := time.Now()
	e.startWorker()
	res := decodeResult(t, <-done)
	recovery := time.Since(killed)
	t.Logf("recovery: the round finished %v after the worker was killed", recovery.Round(time.Millisecond))

	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["c1"].Status)
	require.Equal(t, round.StatusOK, r["s1"].Status)
	require.Equal(t, round.StatusUnknownOutcome, r["s2"].Status, r["s2"].Content)
	require.Contains(t, r["s2"].Content, "the outcome is unknown")
	require.Equal(t, round.StatusOK, r["s3"].Status, r["s3"].Content)
	require.Equal(t, 1, countLines(t, log, "a"), "a finished call does not run again")
	require.Equal(t, 1, countLines(t, log, "b"), "the interrupted side effect is not run twice")
	require.Equal(t, 1, countLines(t, log, "c"))
}

func TestStarterRejectsUnusableInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name, stdin, want string
	}{
		{"not JSON", `{"session_id":`, "not valid JSON"},
		{"wrong type", `{"session_id": 5}`, `field "session_id" must be string`},
		{"no session", `{"run_id":"r","round":1,"assistant":{"tool_calls":[]}}`, "session_id is missing"},
		{"duplicate call ids", `{"session_id":"s","run_id":"r","round":1,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x"}},{"id":"a","function":{"name":"y"}}]}}`, `share the id "a"`},
		{"trailing data", `{"session_id":"s","run_id":"r","round":1} {}`, "data after its JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.starter(ctx, tt.stdin, "round", "-")
			require.Equal(t, 2, r.code, r.stderr)
			require.Contains(t, r.stderr, tt.want)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.Empty(t, r.stdout)
		})
	}
	r := e.starter(ctx, "", "round", filepath.Join(t.TempDir(), "missing.json"))
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "no such file")
}

func TestStarterTools(t *testing.T) {
	e := newEnv(t)
	var ts struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Deferred []string `json:"deferred"`
	}
	r := e.starter(context.Background(), "", "tools", "--provider", "openai")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ts))
	var names []string
	for _, tl := range ts.Tools {
		names = append(names, tl.Function.Name)
	}
	require.Contains(t, names, "find_tools")
	require.Contains(t, names, "run_tool")
	require.NotContains(t, names, "read_files")
	require.Contains(t, ts.Deferred, "read_files")
	require.Contains(t, ts.Deferred, "run_command")

	r = e.starter(context.Background(), "", "tools", "--provider", "claude-code")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ts))
	names = nil
	for _, tl := range ts.Tools {
		names = append(names, tl.Function.Name)
		require.NotEmpty(t, tl.Function.Parameters, tl.Function.Name)
	}
	require.NotContains(t, names, "run_tool")
	require.Contains(t, names, "read_files")
	require.Contains(t, names, "edit_file")
}

// TestRoundWaitsForAWorker submits a round before any worker runs: the
// starter says so, the round does not finish, and it runs once a worker
// starts. It waits for the starter's words, not for a fixed time, so a slow
// machine only makes it slower.
func TestRoundWaitsForAWorker(t *testing.T) {
	e := newEnv(t)
	in := e.input(1, "openai", nil, call("c1", "write_todo", map[string]any{"items": []any{}}))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBin, "round", "-")
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(mustJSON(t, in))
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "no worker polls task queue") {
		select {
		case err := <-done:
			t.Fatalf("the round ended without a worker (%v): %s %s", err, stdout.String(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the starter did not say within a minute that no worker polls: %s", stderr.String())
		}
	}
	require.Contains(t, stderr.String(), e.taskQueue)

	e.startWorker()
	require.NoError(t, <-done, stderr.String())
	res := decodeResult(t, result{stdout: stdout.String(), stderr: stderr.String()})
	require.Equal(t, round.StatusOK, res.Results[0].Status)
}
