package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestStarterHelpAndUsage: --help and -h on every subcommand exit 0 with its
// usage; bad arguments print the message and then readable usage, exit 2
// (U5).
func TestStarterHelpAndUsage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, cmd := range []string{"round", "approve", "deny", "pending", "progress", "answer", "cancel", "result", "tools", "watch"} {
		for _, help := range []string{"--help", "-h"} {
			r := e.starter(ctx, "", cmd, help)
			require.Equal(t, 0, r.code, "starter %s %s: %s", cmd, help, r.stderr)
			require.True(t, strings.HasPrefix(r.stdout, "usage: starter "+cmd+" "), "starter %s %s:\n%s", cmd, help, r.stdout)
			require.NotContains(t, r.stderr, "flag: help requested")
		}
	}
	r := e.starter(ctx, "", "approve", "--help")
	require.Contains(t, r.stdout, "--remember")

	for _, args := range [][]string{{"approve", "wf-only"}, {"frobnicate"}, {"deny", "wf", "c", "--bogus"}} {
		r := e.starter(ctx, "", args...)
		require.Equal(t, 2, r.code, "starter %v", args)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		require.Greater(t, len(lines), 3, "usage on its own lines:\n%s", r.stderr)
		require.True(t, strings.HasPrefix(lines[0], "starter: "), lines[0])
		require.Contains(t, r.stderr, "\nusage: starter ")
	}
}

// TestStarterPendingWithoutRoundOrWorker: pending and progress say at once,
// in one line, that a round does not exist yet, or that no worker polls its
// task queue (U5).
func TestStarterPendingWithoutRoundOrWorker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wfID := names.WorkflowID(e.session, "run-1", 1)

	r := e.starter(ctx, "", "pending", wfID)
	require.Equal(t, 1, r.code)
	require.Equal(t, "starter: round "+wfID+" does not exist yet (or its history is past retention)\n", r.stderr)

	in := e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}}))
	done := e.startRound(in) // waits for a worker
	require.Eventually(t, func() bool {
		return !strings.Contains(e.starter(ctx, "", "pending", wfID).stderr, "does not exist")
	}, 10*time.Second, 50*time.Millisecond, "the round was never submitted")
	for _, cmd := range []string{"pending", "progress"} {
		started := time.Now()
		r := e.starter(ctx, "", cmd, wfID)
		took := time.Since(started)
		require.Equal(t, 1, r.code, "%s: %s", cmd, r.stdout)
		require.Less(t, took, 3*time.Second, cmd)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		require.Contains(t, r.stderr, `starter: no worker polls task queue "`+e.taskQueue+`"`)
	}

	e.startWorker()
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	r = e.starter(ctx, "", "pending", wfID)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, "[]", r.stdout, "a finished round waits for nothing")
}

// TestStarterRoundEvents: a script reads round --events from stderr, answers
// the confirmation_requested line with starter approve, and gets the result
// (U5).
func TestStarterRoundEvents(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"edit_file"}},
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x\n"}))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBin, "round", "--events", "-")
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(mustJSON(t, in))
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	type line struct {
		round.Event
		ApprovalID *string `json:"approval_id"`
	}
	parse := func() []line {
		var out []line
		for _, l := range strings.Split(stderr.String(), "\n") {
			if l == "" {
				continue
			}
			var ev line
			if json.Unmarshal([]byte(l), &ev) == nil {
				out = append(out, ev)
			}
		}
		return out
	}
	var asked line
	require.Eventually(t, func() bool {
		for _, ev := range parse() {
			if ev.Type == round.EventConfirmationRequested {
				asked = ev
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "no confirmation_requested line:\n%s", stderr.String())
	require.Equal(t, in.WorkflowID(), asked.WorkflowID)
	require.Equal(t, "e1", asked.CallID)

	r := e.starter(ctx, "", "approve", asked.WorkflowID, asked.CallID)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, <-exited, stderr.String())

	var res round.Result
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &res), stdout.String())
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var ev line
		require.NoError(t, json.Unmarshal([]byte(l), &ev), "every stderr line is JSON: %q", l)
		types = append(types, ev.Type)
	}
	require.Contains(t, types, round.EventRoundStarted)
	require.Contains(t, types, round.EventConfirmationAnswered)
	require.Equal(t, round.EventRoundFinished, types[len(types)-1], "the events end with round_finished")
}

// TestExampleRounds runs every example round of examples/ in order through
// the real binaries, a run's later round with --after the round before it:
// no call is surprised by a schema result (U4), and no example carries a
// run state of its own.
func TestExampleRounds(t *testing.T) {
	want := map[string][]round.Status{
		"round.json":  {round.StatusOK, round.StatusOK},
		"round2.json": {round.StatusOK},
	}
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, using, ok := strings.Cut(string(readme), "## Using it")
	require.True(t, ok)
	_, shown, ok := strings.Cut(using, "```json\n")
	require.True(t, ok)
	shown, _, _ = strings.Cut(shown, "```")
	first, err := os.ReadFile("../examples/round.json")
	require.NoError(t, err)
	require.JSONEq(t, string(first), shown, "the README's first example is examples/round.json")

	files, err := filepath.Glob("../examples/*.json")
	require.NoError(t, err)
	sort.Strings(files)
	require.NotEmpty(t, files)
	e := newEnv(t)
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	prev := "" // the file of the previous round's result, which the next round starts --after
	for _, f := range files {
		name := filepath.Base(f)
		statuses, ok := want[name]
		require.True(t, ok, "examples/%s has no expected statuses in TestExampleRounds", name)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var in round.Input
		require.NoError(t, json.Unmarshal(b, &in), name)
		require.Nil(t, in.State, "examples/%s carries a run state of its own: a round starts from the previous round's (starter round --after)", name)
		in.SessionID = e.session // a fresh run, not the one of an earlier test run
		args := []string{"round", "-"}
		if in.Round > 1 {
			require.NotEmpty(t, prev, "examples/%s is round %d: the run's round before it comes first", name, in.Round)
			args = []string{"round", "--after", prev, "-"}
		}
		r := e.starter(ctx, mustJSON(t, in), args...)
		res := decodeResult(t, r)
		prev = filepath.Join(dir, name+".out")
		require.NoError(t, os.WriteFile(prev, []byte(r.stdout), 0o644))
		var got []round.Status
		for _, r := range res.Results {
			got = append(got, r.Status)
		}
		require.Equal(t, statuses, got, "examples/%s: %s", name, mustJSON(t, res.Results))
	}
}

// TestStarterRoundOnAnotherTaskQueue: a round submitted with a TASK_QUEUE
// that no worker polls says so within seconds (the queue, since when, and
// the two ways out); submitted again with the right TASK_QUEUE, it says that
// its execution waits on the other queue instead of hanging silently; and
// starter cancel then ends it at once, since no worker ever took it (U2,
// U5).
func TestStarterRoundOnAnotherTaskQueue(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	wrong := e.taskQueue + "-typo"
	in := e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}}))
	wfID := in.WorkflowID()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// roundUntil runs starter round with TASK_QUEUE=queue until its stderr
	// has a line with every part, then interrupts it as Ctrl-C does.
	roundUntil := func(queue string, parts ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, starterBin, "round", "-")
		cmd.Env = append(e.environ(), "TASK_QUEUE="+queue)
		cmd.Stdin = strings.NewReader(mustJSON(t, in))
		stderr := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = &syncBuffer{}, stderr
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		started := time.Now()
		var line string
		require.Eventually(t, func() bool {
			for _, l := range strings.Split(stderr.String(), "\n") {
				found := true
				for _, p := range parts {
					found = found && strings.Contains(l, p)
				}
				if found {
					line = l
					return true
				}
			}
			return false
		}, 15*time.Second, 50*time.Millisecond, "TASK_QUEUE=%s: no line with %q:\n%s", queue, parts, stderr.String())
		require.Less(t, time.Since(started), 10*time.Second, "said within seconds")
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		require.Error(t, <-exited, "interrupted, the starter exits non-zero")
		return line
	}

	first := roundUntil(wrong, `no worker polls task queue "`+wrong+`"`, "waits since ", "starter cancel "+wfID, "TASK_QUEUE="+wrong)
	t.Log(first)

	second := roundUntil(e.taskQueue, wfID, `no worker polls task queue "`+wrong+`"`, `not yours ("`+e.taskQueue+`")`, "starter cancel "+wfID, "TASK_QUEUE="+wrong)
	t.Log(second)

	r := e.starter(ctx, "", "cancel", wfID)
	require.Equal(t, 0, r.code, r.stderr)
	started := time.Now()
	r = e.starter(ctx, "", "result", wfID)
	require.Less(t, time.Since(started), 5*time.Second, "the cancel ended the round at once")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "before any worker took it")
}
