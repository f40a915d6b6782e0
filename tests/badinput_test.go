package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// requireWorkerServes checks that the worker process survived a round of bad
// input and still serves: it runs the next round of the run.
func requireWorkerServes(t *testing.T, e *env, w *worker, roundNo int) {
	t.Helper()
	require.True(t, w.alive(), "the worker died:\n%s", w.logs.String())
	require.NotContains(t, w.logs.String(), "panic", "the worker logged a panic")
	in := e.input(roundNo, "claude-code", &round.RunState{Fetched: allTools}, call("after", "calculate", map[string]any{"expression": "20+22"}))
	res := e.round(in)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Contains(t, res.Results[0].Content, "42")
}

func nested(depth int) string {
	return strings.Repeat(`{"a":[`, depth) + "1" + strings.Repeat(`]}`, depth)
}

// TestBadArgumentsGetResultsAndSpareOtherCalls sends arguments that are not
// JSON, not objects, empty, deeply nested (below and above the decoder's
// depth limit) and a megabyte long, between calls that are fine: each bad
// call gets a clear result, each good call its own result, and the worker
// lives on.
func TestBadArgumentsGetResultsAndSpareOtherCalls(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "a.txt"), []byte("alpha\n"), 0o644))
	big := strings.Repeat("0123456789abcdef", 3<<14) // 768 KiB; the whole input stays under the client's 1.5 MiB
	raw := func(id, name, args string) round.ToolCall {
		return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}}
	}
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		raw("n1", "read_files", `not json at all`),
		call("c1", "calculate", map[string]any{"expression": "6*7"}),
		raw("n2", "read_files", `["a.txt"]`),
		raw("n3", "calculate", `"6*7"`),
		raw("n4", "calculate", `42`),
		raw("n5", "calculate", `null`),
		raw("n6", "calculate", ``),
		raw("n7", "read_files", `{"paths":["a.txt"]} {"paths":["b.txt"]}`),
		raw("d1", "calculate", nested(500)),
		raw("d2", "calculate", nested(20000)),
		call("r1", "read_files", map[string]any{"paths": []string{"a.txt"}}),
		call("b1", "edit_file", map[string]any{"path": "big.txt", "new_text": big}),
		call("b2", "calculate", map[string]any{"expression": strings.Repeat("1+", 25000) + "1"}),
		raw("b3", "read_files", `{"paths":["a.txt"],"pad":"`+strings.Repeat("x", 100000)+`"}`),
		call("c2", "calculate", map[string]any{"expression": "2+3"}),
	)
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	for _, id := range []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "d1", "d2", "b3"} {
		require.Equal(t, round.StatusInvalid, r[id].Status, "%s: %s", id, r[id].Content)
		require.Contains(t, r[id].Content, "invalid arguments", id)
		require.Less(t, len(r[id].Content), 2000, "%s: the message does not echo the input", id)
	}
	require.Contains(t, r["n1"].Content, "not valid JSON")
	require.Contains(t, r["n2"].Content, "must be a JSON object, got an array")
	require.Contains(t, r["n7"].Content, "more data after the arguments object")
	require.Contains(t, r["d2"].Content, "not valid JSON")
	require.Equal(t, round.StatusOK, r["c1"].Status)
	require.Contains(t, r["c1"].Content, "42")
	require.Equal(t, round.StatusOK, r["c2"].Status)
	require.Contains(t, r["c2"].Content, "5")
	require.Equal(t, round.StatusOK, r["r1"].Status)
	require.Contains(t, r["r1"].Content, "alpha")
	require.Equal(t, round.StatusOK, r["b1"].Status, r["b1"].Content)
	got, err := os.ReadFile(filepath.Join(e.workdir, "big.txt"))
	require.NoError(t, err)
	require.Equal(t, big, string(got), "the megabyte argument arrived whole")
	require.Equal(t, round.StatusInvalid, r["b2"].Status, "%.300s", r["b2"].Content)
	require.Contains(t, r["b2"].Content, "String length must be less than or equal to", "the schema bounds an expression")
	requireWorkerServes(t, e, w, 2)
}

// TestUnknownRemovedAndRenamedTools: names that no tool has, and each
// removed or renamed tool (C3), get their own message and never run.
func TestUnknownRemovedAndRenamedTools(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("u1", "read_file", map[string]any{"paths": []string{"a.txt"}}),
		call("u2", "run_command_background", map[string]any{"command": "sleep 1"}),
		call("u3", "api_weather", map[string]any{}),
		call("u4", "run_websocket", map[string]any{}),
		call("u5", "run_command_readonly", map[string]any{"command": "ls"}),
		call("u6", "find_note", map[string]any{}),
		call("u7", "", map[string]any{}),
		call("u8", strings.Repeat("x", 5000), map[string]any{}),
		call("u9", "../../bin/sh", map[string]any{}),
		runTool("u10", "no_such_tool", map[string]any{}),
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
	)
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	for _, id := range []string{"u1", "u2", "u3", "u4", "u5", "u6", "u9"} {
		require.Equal(t, round.StatusUnknown, r[id].Status, "%s: %s", id, r[id].Content)
	}
	require.Equal(t, round.StatusRefused, r["u10"].Status, "claude-code calls tools directly: %s", r["u10"].Content)
	require.Contains(t, []round.Status{round.StatusUnknown, round.StatusRefused}, r["u7"].Status)
	require.Contains(t, []round.Status{round.StatusUnknown, round.StatusRefused}, r["u8"].Status)
	require.Contains(t, r["u1"].Content, "read_files", "the closest name")
	require.Contains(t, r["u2"].Content, "background_command")
	require.Contains(t, r["u3"].Content, "public_api_list")
	require.Contains(t, r["u4"].Content, "no replacement")
	messages := map[string]bool{}
	for _, id := range []string{"u2", "u3", "u4", "u5", "u6"} {
		messages[r[id].Content] = true
	}
	require.Len(t, messages, 5, "each removed or renamed tool has its own message")
	require.Equal(t, round.StatusOK, r["c1"].Status)
	requireWorkerServes(t, e, w, 2)
}

// TestFiveHundredCallsInOneRound: 500 calls, concurrent local activities
// and serial commands with side effects, all get their result in call order
// and every command ran once.
func TestFiveHundredCallsInOneRound(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	var calls []round.ToolCall
	for i := range 500 {
		if i%25 == 0 {
			calls = append(calls, call(fmt.Sprintf("s%03d", i), "run_command", map[string]any{"command": fmt.Sprintf("echo %d >> log.txt", i)}))
			continue
		}
		calls = append(calls, call(fmt.Sprintf("c%03d", i), "calculate", map[string]any{"expression": fmt.Sprintf("%d+1", i)}))
	}
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, calls...)
	in.AutoApprove = true
	start := time.Now()
	res := e.round(in)
	t.Logf("500 calls took %v", time.Since(start).Round(time.Millisecond))
	requireEveryCallOnce(t, in, res)
	for i, c := range res.Results {
		require.Equal(t, round.StatusOK, c.Status, "%s: %s", c.CallID, c.Content)
		if strings.HasPrefix(c.CallID, "c") {
			require.Contains(t, c.Content, strconv.Itoa(i+1), c.CallID)
		}
	}
	for i := 0; i < 500; i += 25 {
		require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), strconv.Itoa(i)))
	}
	requireWorkerServes(t, e, w, 2)
}

// TestTheLargestRoundCompletes: a round of round.MaxCallsPerRound calls,
// each with a small result, is more than Temporal accepts as one result
// with every call's events in it; the round completes, every call has its
// result, and the result says where the events went.
func TestTheLargestRoundCompletes(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	var calls []round.ToolCall
	for i := range round.MaxCallsPerRound {
		calls = append(calls, call(fmt.Sprintf("call_%04d_%s", i, strings.Repeat("x", 20)), "calculate", map[string]any{"expression": fmt.Sprintf("%d+1", i)}))
	}
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, calls...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	out := e.starter(ctx, mustJSON(t, in), "round", "-")
	require.Equal(t, 0, out.code, "the round did not complete: %s", out.stderr)
	t.Logf("%d calls took %v", len(calls), time.Since(start).Round(time.Millisecond))
	res := decodeResult(t, out)
	requireEveryCallOnce(t, in, res)
	for i, c := range res.Results {
		require.Equal(t, round.StatusOK, c.Status, c.CallID)
		require.Contains(t, c.Content, strconv.Itoa(i+1), c.CallID)
	}
	last := res.Events[len(res.Events)-1]
	require.Equal(t, round.EventRoundFinished, last.Type)
	require.Equal(t, "ok=2000", last.Detail)
	results := 0
	for _, ev := range res.Events {
		if ev.Type == round.EventToolResult {
			results++
		}
	}
	require.Equal(t, len(calls), results, "P3.5: one tool_result event per call, in the result too")
	requireWorkerServes(t, e, w, 2)
}

// TestManyLargeResultsFitInTheRound: twenty results just under the
// large-result threshold add up to more than Temporal accepts for a
// workflow's result; the round still completes and every result can be read
// in full.
func TestManyLargeResultsFitInTheRound(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	var calls []round.ToolCall
	want := map[string]string{}
	for i := range 20 {
		name := fmt.Sprintf("f%02d.txt", i)
		body := strings.Repeat(fmt.Sprintf("file %02d says hello\n", i), 4500) // 90 KB
		require.NoError(t, os.WriteFile(filepath.Join(e.workdir, name), []byte(body), 0o644))
		id := fmt.Sprintf("r%02d", i)
		want[id] = fmt.Sprintf("file %02d says hello", i)
		calls = append(calls, call(id, "read_files", map[string]any{"paths": []string{name}}))
	}
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, calls...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := e.starter(ctx, mustJSON(t, in), "round", "-")
	require.Equal(t, 0, out.code, "the round did not complete: %s", out.stderr)
	res := decodeResult(t, out)
	requireEveryCallOnce(t, in, res)
	for _, c := range res.Results {
		require.Equal(t, round.StatusOK, c.Status, c.CallID)
		require.Equal(t, 4500, strings.Count(c.Content, want[c.CallID]), "%s is complete after the client resolved it", c.CallID)
	}
	for i, m := range res.Messages {
		require.Equal(t, 4500, strings.Count(m.Content, want[res.Results[i].CallID]), "message %d is complete", i)
	}
	requireWorkerServes(t, e, w, 2)
}

// TestDuplicateCallIDsFailTheRoundNotTheWorker starts a round with two calls
// of one id directly through Temporal, past the client's check: the
// workflow fails at once with a clear non-retryable error, and the worker
// serves the next round.
func TestDuplicateCallIDsFailTheRoundNotTheWorker(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	tc := e.dial(t)
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("a", "calculate", map[string]any{"expression": "1"}), call("a", "calculate", map[string]any{"expression": "2"}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: in.WorkflowID(), TaskQueue: e.taskQueue}, names.WorkflowName, in)
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, round.ErrTypeInvalidInput, app.Type())
	require.Contains(t, app.Message(), `share the id "a"`)
	require.True(t, app.NonRetryable())

	r := e.starter(context.Background(), mustJSON(t, in), "round", "-")
	require.Equal(t, 2, r.code, "the starter refuses it before Temporal: %s", r.stderr)
	requireWorkerServes(t, e, w, 2)
}

// TestSignalsForUnknownCallsAndRepeatedSignals sends decisions, answers and
// client results for calls that do not exist, repeats, malformed payloads
// and a signal of a name the round does not know, while a call waits; the
// round takes the one real decision, records the rest, and finishes.
func TestSignalsForUnknownCallsAndRepeatedSignals(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	tc := e.dial(t)
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x"}),
		call("e2", "edit_file", map[string]any{"path": "y.txt", "new_text": "y"}),
		call("c1", "calculate", map[string]any{"expression": "1+1"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", wfID)
		return r.code == 0 && strings.Contains(r.stdout, `"e1"`) && strings.Contains(r.stdout, `"e2"`)
	}, 30*time.Second, 50*time.Millisecond)

	ctx := context.Background()
	// A decision for a call that does not wait is refused at once (T6);
	// answers are signals, recorded by the round as ignored.
	for _, args := range [][]string{{"approve", wfID, "ghost"}, {"deny", wfID, "ghost", "--reason", "x"}, {"approve", wfID, "c1"}} {
		r := e.starter(ctx, "", args...)
		require.Equal(t, 1, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "does not wait for a decision")
	}
	for _, args := range [][]string{{"answer", wfID, "ghost", "yes"}, {"answer", wfID, "e1", "yes"}} {
		r := e.starter(ctx, "", args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
	}
	// Signals without the waiting call's approval_id are ignored (T1).
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", names.SignalConfirm, round.Confirm{CallID: "ghost", Approve: true}))
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", names.SignalConfirm, round.Confirm{CallID: "e1", Approve: true}))
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", names.SignalConfirm, "not an object"))
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", names.SignalConfirm, map[string]any{"call_id": 7}))
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", names.SignalToolResult, round.ToolResult{CallID: "ghost", Content: "x"}))
	require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", "no_such_signal", "x"))
	r1 := e.starter(ctx, "", "approve", wfID, "e1")
	require.Equal(t, 0, r1.code, r1.stderr)
	for range 2 {
		r := e.starter(ctx, "", "approve", wfID, "e1")
		require.Equal(t, 1, r.code, "a decided call does not wait: %s", r.stderr)
	}
	d := e.starter(ctx, "", "deny", wfID, "e2", "--reason", "not this one")
	require.Equal(t, 0, d.code, d.stderr)
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["e1"].Status, r["e1"].Content)
	require.Equal(t, round.StatusSkipped, r["e2"].Status, r["e2"].Content)
	require.Equal(t, "Skipped by user. Reason: not this one", r["e2"].Content)
	require.Equal(t, round.StatusOK, r["c1"].Status)
	ignored := 0
	for _, ev := range res.Events {
		if ev.Type == round.EventSignalIgnored {
			ignored++
		}
	}
	// ghost and e1 without approval_id, ghost and e1 (answers), two
	// malformed confirms, ghost tool_result, and the unknown signal name
	// (not delivered to the round).
	require.GreaterOrEqual(t, ignored, 7, "every signal that changed nothing is recorded")

	late := e.starter(ctx, "", "approve", wfID, "e1")
	require.Equal(t, 1, late.code, "a signal to a finished round is an error for the sender")
	require.Equal(t, 1, strings.Count(late.stderr, "\n"), "one line: %q", late.stderr)
	requireWorkerServes(t, e, w, 2)
}

// TestPathsThatEscapeTheWorkdir: relative and absolute paths outside
// TOOLS_WORKDIR, symlinks that point out of it and the reserved folder are
// refused by every file tool; nothing outside changes.
func TestPathsThatEscapeTheWorkdir(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("outside secret\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.workdir, "link")))
	require.NoError(t, os.Symlink(secret, filepath.Join(e.workdir, "escape.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "a.txt"), []byte("alpha\n"), 0o644))
	rel, err := filepath.Rel(e.workdir, secret)
	require.NoError(t, err)

	in := e.input(1, "claude-code", &round.RunState{Fetched: append(allTools, "find_files", "remove_file", "restore_file", "file_history")},
		call("p1", "read_files", map[string]any{"paths": []string{rel}}),
		call("p2", "read_files", map[string]any{"paths": []string{secret}}),
		call("p3", "read_files", map[string]any{"paths": []string{"link/secret.txt"}}),
		call("p4", "read_files", map[string]any{"paths": []string{"escape.txt"}}),
		call("p5", "read_files", map[string]any{"paths": []string{"a.txt", "../../../../etc/hostname"}}),
		call("p6", "find_files", map[string]any{"pattern": "*", "path": ".."}),
		call("p7", "read_files", map[string]any{"paths": []string{".toolround/anything"}}),
		call("w1", "edit_file", map[string]any{"path": "../pwned.txt", "new_text": "x"}),
		call("w2", "edit_file", map[string]any{"path": "link/pwned.txt", "new_text": "x"}),
		call("w3", "edit_file", map[string]any{"path": "escape.txt", "new_text": "overwritten"}),
		call("w4", "remove_file", map[string]any{"path": "link/secret.txt"}),
		call("w5", "edit_file", map[string]any{"path": ".toolround/versions/x", "new_text": "x"}),
		call("ok", "read_files", map[string]any{"paths": []string{"a.txt"}}),
	)
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["p5"].Status, "one path of two is fine: %s", r["p5"].Content)
	require.Contains(t, r["p5"].Content, "alpha")
	require.Contains(t, r["p5"].Content, `path "../../../../etc/hostname" is outside the workdir`)
	for _, c := range res.Results {
		if c.CallID == "ok" || c.CallID == "p5" {
			continue
		}
		require.Contains(t, []round.Status{round.StatusError, round.StatusInvalid}, c.Status, "%s must be refused: %s", c.CallID, c.Content)
		require.NotContains(t, c.Content, "outside secret", c.CallID)
	}
	require.Equal(t, round.StatusOK, r["ok"].Status)
	require.Contains(t, r["ok"].Content, "alpha")
	got, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "outside secret\n", string(got), "the file behind the symlink is untouched")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing was created outside the workdir")
	_, err = os.Stat(filepath.Join(filepath.Dir(e.workdir), "pwned.txt"))
	require.True(t, os.IsNotExist(err))
	requireWorkerServes(t, e, w, 2)
}

// TestRunCommandThatForksHangsOrFloods: a command that leaves a child
// behind, one that never ends and one that prints two gigabytes each get a
// result in bounded time; no child outlives its call, the worker's memory
// stays small, and the calls around them keep their results.
func TestRunCommandThatForksHangsOrFloods(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	mark := strconv.FormatInt(time.Now().UnixNano()%100000+300000, 10) // a sleep nobody else runs
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("f1", "run_command", map[string]any{"command": "sleep " + mark + " & echo forked"}),
		call("c1", "calculate", map[string]any{"expression": "6*7"}),
		call("h1", "run_command", map[string]any{"command": "sleep 600", "timeout_seconds": 2}),
		call("g1", "run_command", map[string]any{"command": "head -c 2000000000 /dev/zero"}),
		call("a1", "run_command", map[string]any{"command": "echo after >> log.txt"}),
	)
	in.AutoApprove = true
	start := time.Now()
	res := e.round(in)
	elapsed := time.Since(start)
	t.Logf("the round took %v", elapsed.Round(time.Millisecond))
	require.Less(t, elapsed, 60*time.Second)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["f1"].Status, r["f1"].Content)
	require.Contains(t, r["f1"].Content, "forked")
	require.Equal(t, round.StatusError, r["h1"].Status, r["h1"].Content)
	require.Contains(t, r["h1"].Content, "timed out")
	require.Equal(t, round.StatusOK, r["g1"].Status, "%.300s", r["g1"].Content)
	require.Less(t, len(r["g1"].Content), 200<<10, "the flood is cut")
	require.Contains(t, r["g1"].Content, "omitted")
	require.Equal(t, round.StatusOK, r["c1"].Status)
	require.Contains(t, r["c1"].Content, "42")
	require.Equal(t, round.StatusOK, r["a1"].Status)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "after"))
	require.Eventually(t, func() bool { return !processRunning("sleep", mark) }, 10*time.Second, 50*time.Millisecond,
		"the forked child outlived its command")
	peak := peakRSS(t, w.cmd.Process.Pid)
	t.Logf("worker peak memory: %d MiB", peak>>20)
	require.Less(t, peak, int64(400<<20), "two gigabytes of output are counted, not kept")
	requireWorkerServes(t, e, w, 2)
}

// processRunning reports whether a process runs with exactly this command line.
func processRunning(args ...string) bool {
	want := strings.Join(args, "\x00") + "\x00"
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && string(b) == want {
			return true
		}
	}
	return false
}

// peakRSS is a process's peak resident memory (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestClientSchemaCannotReachOutside: a client tool whose schema points a
// $ref at a URL gets an invalid result; validation, which runs in workflow
// code, never fetches it.
func TestClientSchemaCannotReachOutside(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	e := newEnv(t)
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("k1", "ide_open", map[string]any{"file": 5}),
		call("c1", "calculate", map[string]any{"expression": "1+1"}))
	in.ClientTools = []tools.ToolSpec{{Type: "function", Function: tools.FunctionSpec{Name: "ide_open",
		Parameters: json.RawMessage(`{"type":"object","properties":{"file":{"$ref":"` + srv.URL + `/schema.json"}}}`)}}}
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusInvalid, r["k1"].Status, r["k1"].Content)
	require.Contains(t, r["k1"].Content, "outside the schema")
	require.Equal(t, round.StatusOK, r["c1"].Status)
	require.Zero(t, hits.Load(), "the worker fetched a client's schema reference")
	requireWorkerServes(t, e, w, 2)
}

// TestRoundInputAboveThePayloadLimit: Temporal refuses a payload above
// 2 MiB and a round's result repeats its input's assistant message; the
// starter refuses an input above 1.5 MiB in one clear line before it asks,
// instead of the server's blob-size or gRPC message-size errors.
func TestRoundInputAboveThePayloadLimit(t *testing.T) {
	e := newEnv(t)
	for _, size := range []int{1600 << 10, 3 << 20, 5 << 20} {
		in := e.input(1, "claude-code", nil, call("c1", "edit_file", map[string]any{"path": "x", "new_text": strings.Repeat("x", size)}))
		r := e.starter(context.Background(), mustJSON(t, in), "round", "-")
		require.Equal(t, 2, r.code, "%d bytes: %s", size, r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		require.Contains(t, r.stderr, "round input too large")
		require.Contains(t, r.stderr, "at most 1.5 MiB")
		require.NotContains(t, r.stderr, "rpc error")
		require.NotContains(t, r.stderr, "Blob data size")
		require.Empty(t, r.stdout)
	}
}

// TestStarterRefusesTrailingCloser: a stray ']' after the input is not JSON.
func TestStarterRefusesTrailingCloser(t *testing.T) {
	e := newEnv(t)
	r := e.starter(context.Background(), `{"session_id":"s","run_id":"r","round":1,"assistant":{"tool_calls":[]}} ]`, "round", "-")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "data after its JSON object")
}

// dial connects a Temporal client for the test, to do what the starter
// refuses to.
func (e *env) dial(t *testing.T) tclient.Client {
	t.Helper()
	c, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(),
		Logger: testenv.QuietLogger()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}
