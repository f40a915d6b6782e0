package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// TestScriptToolsRunInTheWorkersSandbox: the worker hands its sandbox to the
// script_* tools of TOOLS_CONFIG (T8), so with SANDBOX=bwrap a script sees
// neither a host file outside the workdir nor the worker's process, and runs
// in a PID namespace of its own.
func TestScriptToolsRunInTheWorkersSandbox(t *testing.T) {
	host := filepath.Join(t.TempDir(), "host-only")
	require.NoError(t, os.WriteFile(host, []byte("host"), 0o600))
	script := fmt.Sprintf(`test -e %s && echo sees-the-host-file; test -e /proc/%d && echo sees-the-worker; echo "pid $$"`, host, os.Getpid())
	cfgFile := filepath.Join(t.TempDir(), "tools.json")
	b, err := json.Marshal(map[string]any{"tools": []map[string]any{{
		"name": "script_where", "description": "Say where it runs.", "parameters": map[string]any{"type": "object"},
		"command": []string{"sh", "-c", script},
	}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgFile, b, 0o600))

	if _, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeBwrap}, t.TempDir()); err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	e := newTestEngine(t, Config{ToolsConfig: cfgFile, Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap}})
	def, ok := e.Registry.Lookup("script_where")
	require.True(t, ok)
	res, err := def.Handler(context.Background(), tools.Request{CallID: "c1", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.NotContains(t, res.Content, "sees-the-host-file", "a script_* tool ran outside the sandbox")
	require.NotContains(t, res.Content, "sees-the-worker", "a script_* tool ran outside the sandbox")
	var pid int
	_, err = fmt.Sscanf(res.Content, "pid %d", &pid)
	require.NoError(t, err, res.Content)
	require.Less(t, pid, 10, "the script's shell is not in a PID namespace of its own: %s", res.Content)
	require.Contains(t, res.Content, "[sandbox: bwrap, network none]")
}
