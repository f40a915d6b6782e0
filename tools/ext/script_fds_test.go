//go:build linux

package ext

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// TestScriptsInheritNoDescriptors: a descriptor the worker holds without
// close-on-exec never reaches a script_* process, with no sandbox, in mode
// none or under bubblewrap.
func TestScriptsInheritNoDescriptors(t *testing.T) {
	leaked := testenv.LeakDescriptors(t)
	for _, mode := range []string{"no sandbox", sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			var sb *sandbox.Sandbox
			if mode != "no sandbox" {
				var err error
				sb, err = sandbox.New(sandbox.Config{Mode: mode}, dir)
				if err != nil {
					testenv.Unavailable(t, "bubblewrap: %v", err)
				}
				t.Cleanup(sb.Close)
			}
			reg := register(t, Config{Sandbox: sb, Tools: []ToolConfig{scriptTool("script_fds", `ls -l /proc/self/fd`, nil)}}, dir)
			res, err := run(t, reg, "script_fds", `{}`)
			require.NoError(t, err)
			require.Contains(t, res.Content, " 2 -> ", "no listing: %s", res.Content)
			require.Empty(t, testenv.StrayDescriptors(res.Content), "the script inherited descriptors (the leaked file is %s):\n%s", leaked, res.Content)
		})
	}
}
