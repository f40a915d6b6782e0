package tests

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/toolround/toolround/round"
)

// TestHungMCPServerNamesItselfAndItsTimeout: through a real worker, a call
// to a stdio MCP server that never answers ends at the server's
// timeout_seconds as an error result that names the server, the tool and
// that timeout, not as unknown_outcome blaming a dead worker; the next call
// starts the server again (issue 28, item 5).
func TestHungMCPServerNamesItselfAndItsTimeout(t *testing.T) {
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "hostileserver", "mcp-hostile")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"slow": map[string]any{"command": server, "timeout_seconds": 1}})
	e := newEnv(t, "MCP_CONFIG="+mcpConfig)
	e.startWorker()

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_slow_hang", "mcp_slow_pid"}},
		call("h1", "mcp_slow_hang", map[string]any{}))
	in.AutoApprove = true
	res := e.round(in)
	r := byID(res)["h1"]
	require.Equal(t, round.StatusError, r.Status, r.Content)
	require.Contains(t, r.Content, `mcp server "slow", tool "hang"`)
	require.Contains(t, r.Content, "within its timeout of 1s")
	require.Contains(t, r.Content, "timeout_seconds")
	require.NotContains(t, r.Content, "worker died")

	in2 := e.input(2, "claude-code", res.State,
		call("p1", "mcp_slow_pid", map[string]any{}))
	in2.AutoApprove = true
	p := byID(e.round(in2))["p1"]
	require.Equal(t, round.StatusOK, p.Status, "the next call starts the server again: %s", p.Content)
}

// TestStarterToolsAsksTheWorker: `starter tools --worker` lists the MCP
// tools of the worker that polls the task queue, though the starter has no
// MCP_CONFIG; without --worker and MCP_CONFIG it lists the rest and says
// that MCP tools are the worker's; with no worker, --worker says that none
// polls the task queue (issue 28, item 5).
func TestStarterToolsAsksTheWorker(t *testing.T) {
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "testserver", "mcp-fixture")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"fix": map[string]any{"command": server}})
	e := newEnv(t) // the starter gets no MCP_CONFIG
	ctx := context.Background()

	none := e.starter(ctx, "", "tools", "--provider", "claude-code", "--worker")
	require.Equal(t, 1, none.code, none.stdout)
	require.Contains(t, none.stderr, "no worker polls task queue")
	require.Contains(t, none.stderr, e.taskQueue)

	e.startWorkerBin(workerBin, "MCP_CONFIG="+mcpConfig)
	local := e.starter(ctx, "", "tools", "--provider", "claude-code")
	require.Equal(t, 0, local.code, local.stderr)
	require.NotContains(t, local.stdout, `"mcp_fix_echo"`)
	require.Contains(t, local.stdout, `"calculate"`)
	require.Contains(t, local.stderr, "MCP tools are the worker's")
	require.Contains(t, local.stderr, "--worker")

	asked := e.starter(ctx, "", "tools", "--provider", "claude-code", "--worker")
	require.Equal(t, 0, asked.code, asked.stderr)
	require.Contains(t, asked.stdout, `"mcp_fix_echo"`)
	require.Contains(t, asked.stdout, `"calculate"`)
	var ts struct {
		Provider string `json:"provider"`
		Tools    []any  `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(asked.stdout), &ts), asked.stdout)
	require.Equal(t, "claude-code", ts.Provider)

	formatted := e.starter(ctx, "", "tools", "--provider", "other", "--format", "anthropic", "--worker")
	require.Equal(t, 0, formatted.code, formatted.stderr)
	require.Contains(t, formatted.stdout, `"input_schema"`)
}

// TestMCPServerTreeDiesWithTheWorker (T8): a process that a stdio MCP
// server started in a session of its own (setsid), through a shell that
// exited at once, ends when the worker is killed with SIGKILL.
func TestMCPServerTreeDiesWithTheWorker(t *testing.T) {
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "hostileserver", "mcp-hostile")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"h": map[string]any{"command": server}})
	e := newEnv(t, "MCP_CONFIG="+mcpConfig)
	w := e.startWorker()

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_h_escape"}},
		call("e1", "mcp_h_escape", map[string]any{}))
	in.AutoApprove = true
	r := byID(e.round(in))["e1"]
	require.Equal(t, round.StatusOK, r.Status, r.Content)
	pid, err := strconv.Atoi(strings.TrimSpace(r.Content))
	require.NoError(t, err, r.Content)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	running := func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
	}
	require.Eventually(t, func() bool {
		sid, err := unix.Getsid(pid)
		return err == nil && sid == pid
	}, 10*time.Second, 5*time.Millisecond, "the process did not leave the server's session")

	w.kill(t)
	require.Eventually(t, func() bool { return !running() }, 10*time.Second, 20*time.Millisecond,
		"the process the server started in a session of its own outlived the killed worker")
}
