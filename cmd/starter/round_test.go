package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// roundInput is a round of run r1 in session s1 that calls find_tools, with
// state as its "state" field.
func roundInput(n int, state string) string {
	return `{"session_id": "s1", "run_id": "r1", "round": ` + strconv.Itoa(n) + `, "provider": "openai",
 "assistant": {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
   "function": {"name": "find_tools", "arguments": "{\"query\":\"select:calculate\"}"}}]},
 "client_tools": [], "state": ` + state + `}`
}

// TestRoundAfterTakesThePreviousRoundsState: --after FILE gives the round
// the run state of the previous round's result, as starter round printed
// it; the input's other fields stay as they are.
func TestRoundAfterTakesThePreviousRoundsState(t *testing.T) {
	dir := t.TempDir()
	prev := round.Result{
		WorkflowID: names.WorkflowID("s1", "r1", 1),
		Results:    []round.CallResult{{CallID: "call_1", Tool: "find_tools", Status: round.StatusOK}},
		State:      &round.RunState{Fetched: []string{"calculate", "read_files"}, Seq: 1},
	}
	var out bytes.Buffer
	require.NoError(t, printJSON(&out, prev))
	file := filepath.Join(dir, "round1.out")
	require.NoError(t, os.WriteFile(file, out.Bytes(), 0o644))

	in, err := round.ParseInput([]byte(roundInput(2, "null")))
	require.NoError(t, err)
	require.NoError(t, stateAfter(in, file))
	require.Equal(t, prev.State, in.State)
	require.Equal(t, 2, in.Round)
	require.Equal(t, "find_tools", in.Assistant.ToolCalls[0].Function.Name)
}

// TestRoundAfterRefusesWhatIsNotTheRunsPreviousResult: a missing file, a
// file that is not a round's result (a round input, other JSON, not JSON),
// the result of another run or of a later round, and an input with a
// state of its own are each one line that says so, exit 2, before
// anything is submitted.
func TestRoundAfterRefusesWhatIsNotTheRunsPreviousResult(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	result := func(wid string) string {
		return `{"workflow_id": "` + wid + `", "results": [], "messages": [], "history": [], "events": [], "state": {"fetched": ["calculate"]}}`
	}
	next := write("next.json", roundInput(2, "null"))
	for _, tc := range []struct {
		after, input, want string
	}{
		{filepath.Join(dir, "missing.out"), next, "no such file"},
		{write("input.json", roundInput(1, "null")), next, "is not a round's result (the output of starter round): it has no workflow_id"},
		{write("text.out", "waiting for approval"), next, "is not a round's result"},
		{write("array.out", "[]"), next, "is not a round's result"},
		{write("nostate.out", `{"workflow_id": "toolround/s1/r1/1", "results": []}`), next, "it has no state"},
		{write("noresults.out", `{"workflow_id": "toolround/s1/r1/1", "state": {}}`), next, "it has no results"},
		{write("agent.out", result("agentrun/s1/r1")), next, `its workflow_id "agentrun/s1/r1" is not a round's`},
		{write("other-run.out", result("toolround/s1/r2/1")), next, `is a round of session "s1" run "r2", not of this round's run`},
		{write("other-session.out", result("toolround/s2/r1/1")), next, `is a round of session "s2" run "r1"`},
		{write("same.out", result("toolround/s1/r1/2")), next, "is round 2 of the run; this round (2) must come after it"},
		{write("round1.out", result("toolround/s1/r1/1")), write("forged.json", roundInput(2, `{"fetched": ["calculate"]}`)), "the round input has a state of its own"},
	} {
		var stderr bytes.Buffer
		args := []string{"round", "--after", tc.after, tc.input}
		code := report(run(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr.String())
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		require.Len(t, lines, 1, "one line: %s", stderr.String())
		require.Contains(t, lines[0], tc.want, "%v", args)
	}
}
