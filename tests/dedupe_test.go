package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestRepeatedReadsAreHonest is U3 through the real worker and starter: a
// read repeated in round 2 is served and says it repeats round 1; after the
// file changed on disk, outside the agent, the same read runs in round 3
// and returns the new content; round 4 repeats round 3.
func TestRepeatedReadsAreHonest(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	path := filepath.Join(e.workdir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("first version\n"), 0o644))
	read := func(n int, st *round.RunState) (round.Input, round.Result) {
		in := e.input(n, "claude-code", st, call("r", "read_files", map[string]any{"paths": []string{"notes.txt"}}))
		in.Assistant.ToolCalls[0].ID = "r" + string(rune('0'+n))
		res := e.round(in)
		requireEveryCallOnce(t, in, res)
		return in, res
	}

	_, res1 := read(1, &round.RunState{Fetched: allTools})
	require.Equal(t, round.StatusOK, res1.Results[0].Status, res1.Results[0].Content)
	require.Contains(t, res1.Messages[0].Content, "first version")
	require.NotContains(t, res1.Messages[0].Content, "repeats")

	_, res2 := read(2, res1.State)
	require.Equal(t, round.StatusDeduped, res2.Results[0].Status)
	require.Equal(t, &round.Repeat{Round: 1, CallID: "r1", Checked: true}, res2.Results[0].Repeat)
	require.True(t, strings.HasPrefix(res2.Messages[0].Content,
		"[read_files] (repeats the result of round 1 of this run; the files it read have not changed since)\n"), res2.Messages[0].Content)
	require.Contains(t, res2.Messages[0].Content, "first version")

	require.NoError(t, os.WriteFile(path, []byte("second version, written by hand\n"), 0o644))
	_, res3 := read(3, res2.State)
	require.Equal(t, round.StatusOK, res3.Results[0].Status, "the file changed, so the read runs again")
	require.Nil(t, res3.Results[0].Repeat)
	require.Contains(t, res3.Messages[0].Content, "second version, written by hand")
	require.NotContains(t, res3.Messages[0].Content, "first version")
	require.NotContains(t, res3.Messages[0].Content, "repeats")

	_, res4 := read(4, res3.State)
	require.Equal(t, round.StatusDeduped, res4.Results[0].Status)
	require.Contains(t, res4.Messages[0].Content, "(repeats the result of round 3 of this run;")
	require.Contains(t, res4.Messages[0].Content, "second version, written by hand")
}

// TestDedupeFalseRunsIdenticalCalls: with "dedupe": false two identical
// commands of one round both run; without it the second is a repeat.
func TestDedupeFalseRunsIdenticalCalls(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	cmd := map[string]any{"command": "echo ran >> log.txt"}
	log := filepath.Join(e.workdir, "log.txt")

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, call("a", "run_command", cmd), call("b", "run_command", cmd))
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusDeduped}, []round.Status{res.Results[0].Status, res.Results[1].Status})
	require.Contains(t, res.Messages[1].Content, "(repeats the result of call a, an identical call of this round, round 1)")
	require.Equal(t, 1, countLines(t, log, "ran"))

	off := false
	in = e.input(2, "claude-code", res.State, call("c", "run_command", cmd), call("d", "run_command", cmd))
	in.AutoApprove, in.Dedupe = true, &off
	res = e.round(in)
	requireEveryCallOnce(t, in, res)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, []round.Status{res.Results[0].Status, res.Results[1].Status})
	require.Equal(t, 3, countLines(t, log, "ran"), "both identical calls ran")
}

// TestRefusalOfAFetchedToolPointsToRunTool is U4: with provider openai, a
// tool whose schema find_tools just returned, called directly, is refused
// with the run_tool hint, not sent to fetch it again.
func TestRefusalOfAFetchedToolPointsToRunTool(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in1 := e.input(1, "openai", nil, call("f1", "find_tools", map[string]any{"query": "select:edit_file"}))
	res1 := e.round(in1)
	require.Equal(t, round.StatusOK, res1.Results[0].Status, res1.Results[0].Content)
	require.Contains(t, res1.State.Fetched, "edit_file")

	in2 := e.input(2, "openai", res1.State,
		call("e1", "edit_file", map[string]any{"path": "a.txt", "new_text": "x"}),
		call("r1", "read_files", map[string]any{"paths": []string{"a.txt"}}))
	res2 := e.round(in2)
	requireEveryCallOnce(t, in2, res2)
	r := byID(res2)
	require.Equal(t, round.StatusRefused, r["e1"].Status)
	require.Contains(t, r["e1"].Content, `call it through run_tool(name="edit_file", args={...})`)
	require.NotContains(t, r["e1"].Content, "find_tools")
	require.Equal(t, round.StatusRefused, r["r1"].Status)
	require.Contains(t, r["r1"].Content, `Fetch its schema with find_tools(query="select:read_files")`, "a tool not fetched keeps the find_tools hint")
	_, err := os.Stat(filepath.Join(e.workdir, "a.txt"))
	require.True(t, os.IsNotExist(err), "the refused edit did not run")
}
