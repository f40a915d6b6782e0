//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// TestCommandsDoNotInheritTheWorkersDescriptors: a worker started with open
// descriptors beyond its standard streams (a file and a pipe, as a careless
// parent leaves them) passes none of them to run_command, background_command
// or script_* processes, with SANDBOX=bwrap and SANDBOX=none (T8).
func TestCommandsDoNotInheritTheWorkersDescriptors(t *testing.T) {
	requireBwrap(t)
	dir := t.TempDir()
	toolsConfig := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(toolsConfig, []byte(`{"tools":[{"name":"script_fds","description":"List the descriptors.",
		"parameters":{"type":"object"},"read_only":true,"command":["ls","-l","/proc/self/fd"]}]}`), 0o600))
	for _, mode := range []string{"bwrap", "none"} {
		t.Run(mode, func(t *testing.T) {
			inherited := filepath.Join(t.TempDir(), "inherited-by-the-worker")
			require.NoError(t, os.WriteFile(inherited, []byte("x"), 0o600))
			f, err := os.Open(inherited)
			require.NoError(t, err)
			defer f.Close()
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			defer w.Close()

			e := newEnv(t, "SANDBOX="+mode, "TOOLS_CONFIG="+toolsConfig)
			e.startWorkerCmd(workerBin, []*os.File{f, r, w})
			in := e.input(1, "claude-code", &round.RunState{Fetched: append(allTools, "background_command", "script_fds")},
				call("r", "run_command", map[string]any{"command": "ls -l /proc/self/fd"}),
				call("b", "background_command", map[string]any{"command": "ls -l /proc/self/fd", "wait_seconds": 20}),
				call("s", "script_fds", map[string]any{}))
			in.AutoApprove = true
			res := byID(e.round(in))
			for _, id := range []string{"r", "b", "s"} {
				require.Equal(t, round.StatusOK, res[id].Status, res[id].Content)
				require.Contains(t, res[id].Content, " 2 -> ", "%s: no listing: %s", id, res[id].Content)
				require.Empty(t, testenv.StrayDescriptors(res[id].Content), "%s inherited the worker's descriptors (%s and a pipe):\n%s", id, inherited, res[id].Content)
			}
		})
	}
}
