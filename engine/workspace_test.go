package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/secrets"
)

func TestWorkspaceSettings(t *testing.T) {
	c, err := ConfigFromEnv()
	require.NoError(t, err)
	require.Equal(t, tools.WorkspaceShared, c.Workspace, "shared is the default")
	t.Setenv("WORKSPACE", "session")
	c, err = ConfigFromEnv()
	require.NoError(t, err)
	require.Equal(t, tools.WorkspaceSession, c.Workspace)
	t.Setenv("WORKSPACE", "per-user")
	_, err = ConfigFromEnv()
	require.ErrorContains(t, err, "WORKSPACE")
}

// newEngineErr is New on a fresh workdir; the engine, when it starts, is
// closed at the end of the test.
func newEngineErr(t *testing.T, cfg Config) (*Engine, error) {
	t.Helper()
	dir := t.TempDir()
	if cfg.Workdir == "" {
		cfg.Workdir = filepath.Join(dir, "workdir")
	}
	cfg.Secrets = secrets.Config{KeyFile: filepath.Join(dir, "secret.key")}
	cfg.RuleKey = approval.KeyConfig{KeyFile: filepath.Join(dir, "rule.key")}
	e, err := New(context.Background(), cfg, nil)
	if err == nil {
		t.Cleanup(e.Close)
	}
	return e, err
}

func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeBwrap}, t.TempDir()); err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
}

// W2: session mode refuses to start without the sandbox, with one line
// that says why: SANDBOX=none, or auto without a usable bubblewrap.
func TestSessionModeNeedsTheSandbox(t *testing.T) {
	for name, sb := range map[string]sandbox.Config{
		"none":               {Mode: sandbox.ModeNone},
		"auto without bwrap": {Mode: sandbox.ModeAuto, Bwrap: "/nonexistent/bwrap"},
	} {
		_, err := newEngineErr(t, Config{Workspace: tools.WorkspaceSession, Sandbox: sb})
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "\n", name)
		require.Contains(t, err.Error(), "WORKSPACE=session", name)
		require.Contains(t, err.Error(), "SANDBOX", name)
	}
	_, err := newEngineErr(t, Config{Workspace: tools.WorkspaceShared, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	require.NoError(t, err, "shared mode runs without the sandbox, as before")
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// W2: in session mode a script_* command is found in the tools file's
// folder and runs in the session's workspace, seeing no other; one whose
// program lies in TOOLS_WORKDIR is refused at start.
func TestSessionModeScripts(t *testing.T) {
	requireBwrap(t)
	conf := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(conf, "where.sh"), []byte("#!/bin/sh\npwd\nls -A ..\ncat ../a/secret.txt 2>/dev/null && echo READ-A\ntrue\n"), 0o755))
	cfgFile := filepath.Join(conf, "tools.json")
	writeJSON(t, cfgFile, map[string]any{"tools": []map[string]any{{
		"name": "script_where", "description": "Say where it runs.", "parameters": map[string]any{"type": "object"},
		"command": []string{"./where.sh"},
	}}})
	e, err := newEngineErr(t, Config{Workspace: tools.WorkspaceSession, ToolsConfig: cfgFile, Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap}})
	require.NoError(t, err)
	a, err := e.Workdir.Session("a")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a.Dir(), "secret.txt"), []byte("A"), 0o644))
	def, ok := e.Registry.Lookup("script_where")
	require.True(t, ok)
	res, err := def.Handler(tools.WithSession(context.Background(), "b"), tools.Request{CallID: "c1", SessionID: "b", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	lines := strings.Split(res.Content, "\n")
	require.Equal(t, filepath.Join(e.Workdir.Dir(), tools.SessionsDir, "b"), lines[0], res.Content)
	require.NotContains(t, res.Content, "READ-A")
	require.NotContains(t, res.Content, "\na\n", "the script lists no other workspace")
	_, err = def.Handler(context.Background(), tools.Request{CallID: "c2", Args: json.RawMessage(`{}`)})
	require.ErrorContains(t, err, "session id")

	work := filepath.Join(t.TempDir(), "workdir")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "planted.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	bad := filepath.Join(conf, "bad.json")
	writeJSON(t, bad, map[string]any{"tools": []map[string]any{{
		"name": "script_planted", "description": "A script in the workdir.", "parameters": map[string]any{"type": "object"},
		"command": []string{filepath.Join(work, "planted.sh")},
	}}})
	_, err = newEngineErr(t, Config{Workspace: tools.WorkspaceSession, Workdir: work, ToolsConfig: bad, Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap}})
	require.ErrorContains(t, err, "script_planted")
	require.ErrorContains(t, err, "TOOLS_WORKDIR")
}

// W2: an MCP server whose root lies in TOOLS_WORKDIR is refused at start
// in session mode.
func TestSessionModeRefusesMCPRootedInTheWorkdir(t *testing.T) {
	requireBwrap(t)
	work := filepath.Join(t.TempDir(), "workdir")
	for name, server := range map[string]map[string]any{
		"cwd in the workdir":     {"command": "cat", "cwd": filepath.Join(work, "sub")},
		"cwd is the workdir":     {"command": "cat", "cwd": work},
		"program in the workdir": {"command": filepath.Join(work, "server")},
	} {
		mcpFile := filepath.Join(t.TempDir(), "mcp.json")
		writeJSON(t, mcpFile, map[string]any{"mcpServers": map[string]any{"files": server}})
		_, err := newEngineErr(t, Config{Workspace: tools.WorkspaceSession, Workdir: work, MCPConfig: mcpFile, Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap}})
		require.Error(t, err, name)
		require.Contains(t, err.Error(), `"files"`, name)
		require.Contains(t, err.Error(), "TOOLS_WORKDIR", name)
	}
}

// W3: WORKSPACE_MAX_BYTES takes bytes or K, M, G; WORKSPACE_TTL a
// duration, and only in session mode.
func TestWorkspaceLimitSettings(t *testing.T) {
	for v, want := range map[string]int64{"1048576": 1 << 20, "10K": 10 << 10, "3m": 3 << 20, "2G": 2 << 30} {
		t.Setenv("WORKSPACE_MAX_BYTES", v)
		c, err := ConfigFromEnv()
		require.NoError(t, err, v)
		require.Equal(t, want, c.WorkspaceMaxBytes, v)
	}
	for _, bad := range []string{"0", "-5", "lots", "1T", "K", "99999999999G"} {
		t.Setenv("WORKSPACE_MAX_BYTES", bad)
		_, err := ConfigFromEnv()
		require.ErrorContains(t, err, "WORKSPACE_MAX_BYTES", bad)
	}
	t.Setenv("WORKSPACE_MAX_BYTES", "")
	t.Setenv("WORKSPACE_TTL", "24h")
	c, err := ConfigFromEnv()
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, c.WorkspaceTTL)
	t.Setenv("WORKSPACE_TTL", "soon")
	_, err = ConfigFromEnv()
	require.ErrorContains(t, err, "WORKSPACE_TTL")

	_, err = newEngineErr(t, Config{WorkspaceTTL: time.Hour, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	require.ErrorContains(t, err, "WORKSPACE_TTL")
	e, err := newEngineErr(t, Config{WorkspaceMaxBytes: 4096, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	require.NoError(t, err)
	require.Equal(t, int64(4096), e.Workdir.MaxBytes())
}
