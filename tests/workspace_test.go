package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestSessionWorkspaces is W1 and W2 through the real worker and starter:
// with WORKSPACE=session and SANDBOX=bwrap, session A's files live in
// TOOLS_WORKDIR/sessions/<A>/; session B, whose rounds name the same
// paths, A's folder and the workdir, reads and lists only its own; a read
// repeated in A's next round is checked in A's workspace (U3) and served.
func TestSessionWorkspaces(t *testing.T) {
	requireBwrap(t)
	e := newEnv(t, "WORKSPACE=session", "SANDBOX=bwrap")
	w := e.startWorker()
	require.Contains(t, w.logs.String(), "workspace=session")
	sessA, sessB := e.session+"-a", e.session+"-b"
	wsA := filepath.Join(e.workdir, "sessions", sessA)
	const secret = "A-ONLY-5d1e"

	inA := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("w", "edit_file", map[string]any{"path": "notes.txt", "new_text": secret + "\n"}))
	inA.SessionID, inA.AutoApprove = sessA, true
	resA := e.round(inA)
	requireEveryCallOnce(t, inA, resA)
	for _, r := range resA.Results {
		require.Equal(t, round.StatusOK, r.Status, r.Content)
	}
	got, err := os.ReadFile(filepath.Join(wsA, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, secret+"\n", string(got))
	require.NoFileExists(t, filepath.Join(e.workdir, "notes.txt"))

	inB := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("same", "read_files", map[string]any{"paths": []string{"notes.txt"}}),
		call("rel", "read_files", map[string]any{"paths": []string{"../" + sessA + "/notes.txt"}}),
		call("abs", "read_files", map[string]any{"paths": []string{filepath.Join(wsA, "notes.txt")}}),
		call("top", "read_files", map[string]any{"paths": []string{e.workdir}}),
		call("find", "find_files", map[string]any{"pattern": "**/notes.txt", "path": ".."}),
		call("cat", "run_command", map[string]any{"command": "cat ../" + sessA + "/notes.txt; cat " + filepath.Join(wsA, "notes.txt")}),
		call("ls", "run_command", map[string]any{"command": "ls -R " + e.workdir}))
	inB.SessionID, inB.AutoApprove = sessB, true
	resB := e.round(inB)
	requireEveryCallOnce(t, inB, resB)
	for _, r := range resB.Results {
		require.NotContains(t, r.Content, secret, "%s reached session A's file", r.CallID)
	}
	for _, id := range []string{"same", "top", "find", "ls"} { // the others name A's folder in their arguments
		require.NotContains(t, byID(resB)[id].Content, sessA, "%s lists session A's workspace", id)
	}
	require.Contains(t, byID(resB)["same"].Content, "no such file", "B has no notes.txt of its own")

	read := func(n int, st *round.RunState) round.Result {
		in := e.input(n, "claude-code", st, call("r"+string(rune('0'+n)), "read_files", map[string]any{"paths": []string{"notes.txt"}}))
		in.SessionID = sessA
		return e.round(in)
	}
	res2 := read(2, resA.State)
	require.Equal(t, round.StatusOK, res2.Results[0].Status, res2.Results[0].Content)
	require.Contains(t, res2.Messages[0].Content, secret)
	res3 := read(3, res2.State)
	require.Equal(t, round.StatusDeduped, res3.Results[0].Status, res3.Results[0].Content)
	require.True(t, strings.Contains(res3.Messages[0].Content, "have not changed since"), res3.Messages[0].Content)
	require.Contains(t, res3.Messages[0].Content, secret)
}

// TestWorkspaceRemoveWaitsForTheSession is W3's `starter workspace`:
// ls lists the workspace, rm refuses it with workspace_busy while a round
// of the session waits for approval, and removes it once the round ended.
func TestWorkspaceRemoveWaitsForTheSession(t *testing.T) {
	requireBwrap(t)
	e := newEnv(t, "WORKSPACE=session", "SANDBOX=bwrap")
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("w", "edit_file", map[string]any{"path": "a.txt", "new_text": "a\n"}))
	in.AutoApprove = true
	requireEveryCallOnce(t, in, e.round(in))
	ls := e.mustStarter("workspace", "ls")
	require.Contains(t, ls.stdout, e.session)

	waiting := e.input(2, "claude-code", &round.RunState{Fetched: allTools},
		call("w2", "edit_file", map[string]any{"path": "b.txt", "new_text": "b\n"}))
	done := e.startRound(waiting)
	e.waitPending(waiting.WorkflowID(), "w2")
	r := e.starter(context.Background(), "", "workspace", "rm", e.session)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "workspace_busy")
	require.Contains(t, r.stderr, waiting.WorkflowID())
	require.FileExists(t, filepath.Join(e.workdir, "sessions", e.session, "a.txt"))

	e.mustStarter("deny", waiting.WorkflowID(), "w2")
	decodeResult(t, <-done)
	e.mustStarter("workspace", "rm", e.session)
	require.NoDirExists(t, filepath.Join(e.workdir, "sessions", e.session))
}

// TestWorkspaceLimitsThroughTheWorker is W3's WORKSPACE_MAX_BYTES and
// WORKSPACE_TTL through the real worker: a write past the limit ends error
// with error_code workspace_full and writes nothing; an idle workspace is
// removed, one whose session has a round waiting is not.
func TestWorkspaceLimitsThroughTheWorker(t *testing.T) {
	requireBwrap(t)
	e := newEnv(t, "WORKSPACE=session", "SANDBOX=bwrap", "WORKSPACE_MAX_BYTES=64K", "WORKSPACE_TTL=3s")
	e.startWorker()
	idle, busy := e.session+"-idle", e.session+"-busy"

	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("big", "edit_file", map[string]any{"path": "big.txt", "new_text": strings.Repeat("x", 100<<10)}),
		call("cmd", "run_command", map[string]any{"command": "head -c 200000 /dev/zero > cmd.bin"}))
	in.SessionID, in.AutoApprove = idle, true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	for _, r := range res.Results {
		require.Equal(t, round.StatusError, r.Status, r.Content)
	}
	require.Equal(t, "workspace_full", byID(res)["big"].ErrorCode, byID(res)["big"].Content)
	require.NoFileExists(t, filepath.Join(e.workdir, "sessions", idle, "big.txt"))
	if fi, err := os.Stat(filepath.Join(e.workdir, "sessions", idle, "cmd.bin")); err == nil {
		require.LessOrEqual(t, fi.Size(), int64(64<<10), "the command's file stopped at the room left")
	}

	waiting := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("w", "edit_file", map[string]any{"path": "b.txt", "new_text": "b\n"}))
	waiting.SessionID, waiting.RunID = busy, "run-busy"
	done := e.startRound(waiting)
	e.waitPending(waiting.WorkflowID(), "w")
	// The waiting session's workspace, idle for an hour by its times.
	require.NoError(t, os.MkdirAll(filepath.Join(e.workdir, "sessions", busy, ".toolround"), 0o755))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(e.workdir, "sessions", busy, ".toolround"), old, old))
	require.NoError(t, os.Chtimes(filepath.Join(e.workdir, "sessions", busy), old, old))

	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(e.workdir, "sessions", idle))
		return os.IsNotExist(err)
	}, 30*time.Second, 100*time.Millisecond, "the idle workspace was not removed")
	// Sweeps run every second (TTL/4, at least 1 s): over the next ones the
	// waiting session's workspace stays.
	require.Never(t, func() bool {
		_, err := os.Stat(filepath.Join(e.workdir, "sessions", busy))
		return err != nil
	}, 2500*time.Millisecond, 100*time.Millisecond, "a workspace whose session has a round open was removed")
	e.mustStarter("deny", waiting.WorkflowID(), "w")
	decodeResult(t, <-done)
}

// TestEveryWriterKeepsToTheWorkspaceLimit is W3's WORKSPACE_MAX_BYTES
// through the real worker for what writes besides the file tools: a
// command's /tmp cannot take more than the room left, and a script_* tool
// and an MCP stdio server rooted in the workspace that leave it over the
// limit end error with error_code workspace_full.
func TestEveryWriterKeepsToTheWorkspaceLimit(t *testing.T) {
	requireBwrap(t)
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "hostileserver", "mcp-hostile")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"h": map[string]any{"command": server}})
	toolsConfig := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(toolsConfig, []byte(`{"tools":[{"name":"script_fill","description":"Write three files.",
		"parameters":{"type":"object"},"command":["sh","-c","for i in 1 2 3; do head -c 150000 /dev/zero > s$i; done"]}]}`), 0o600))
	e := newEnv(t, "SANDBOX=bwrap", "WORKSPACE_MAX_BYTES=1M", "MCP_CONFIG="+mcpConfig, "TOOLS_CONFIG="+toolsConfig)
	e.startWorker()
	fetched := append(append([]string{}, allTools...), "script_fill", "mcp_h_write")

	in := e.input(1, "claude-code", &round.RunState{Fetched: fetched},
		call("tmp", "run_command", map[string]any{"command": "for i in 1 2 3 4 5 6 7 8; do head -c 400000 /dev/zero > /tmp/f$i || exit 7; done"}))
	in.AutoApprove = true
	res := e.round(in)
	r := byID(res)["tmp"]
	require.Equal(t, round.StatusError, r.Status, "3.2 MB went to /tmp under a 1 MB limit: %s", r.Content)
	require.Contains(t, r.Content, "exit code 7")

	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "pad"), make([]byte, 800_000), 0o644))
	in2 := e.input(2, "claude-code", res.State,
		call("s", "script_fill", map[string]any{}),
		call("m", "mcp_h_write", map[string]any{"name": "m1", "bytes": 400_000}))
	in2.AutoApprove = true
	res2 := byID(e.round(in2))
	for _, id := range []string{"s", "m"} {
		require.Equal(t, round.StatusError, res2[id].Status, "%s: %s", id, res2[id].Content)
		require.Equal(t, "workspace_full", res2[id].ErrorCode, "%s: %s", id, res2[id].Content)
	}
}
