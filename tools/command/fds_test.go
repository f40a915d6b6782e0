//go:build linux

package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// TestCommandsInheritNoDescriptors: a descriptor the worker holds without
// close-on-exec (left by its parent or a library) never reaches a command,
// in either mode and for either tool.
func TestCommandsInheritNoDescriptors(t *testing.T) {
	leaked := testenv.LeakDescriptors(t)
	for _, mode := range []string{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(mode, func(t *testing.T) {
			var tl *Tools
			if mode == sandbox.ModeBwrap {
				tl, _ = newSandboxed(t, sandbox.Config{})
			} else {
				tl, _ = newTools(t, nil)
			}
			for _, tool := range []string{"run_command", "background_command"} {
				h, args := tools.Typed(tl.runCommand), `{"command": "ls -l /proc/self/fd"}`
				if tool == "background_command" {
					h, args = tools.Typed(tl.backgroundCommand), `{"command": "ls -l /proc/self/fd", "wait_seconds": 10}`
				}
				res, err := call(context.Background(), h, args)
				require.NoError(t, err)
				require.Contains(t, res.Content, " 2 -> ", "%s: no listing: %s", tool, res.Content)
				require.Empty(t, testenv.StrayDescriptors(res.Content), "%s in mode %s inherited descriptors (the leaked file is %s):\n%s", tool, mode, leaked, res.Content)
			}
		})
	}
}
