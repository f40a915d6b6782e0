package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

func TestScriptInSandbox(t *testing.T) {
	dir := t.TempDir()
	sb, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeBwrap}, dir)
	if err != nil {
		testenv.Unavailable(t, "bubblewrap: %v", err)
	}
	t.Cleanup(sb.Close)
	outside := t.TempDir()
	marker := filepath.Join(outside, "escaped")
	reg := register(t, Config{Sandbox: sb, Tools: []ToolConfig{
		scriptTool("script_ok", `echo in > inside.txt && cat inside.txt`, nil),
		scriptTool("script_escape", fmt.Sprintf(`touch %s; cat /proc/%d/environ; exit 3`, marker, os.Getpid()), nil),
		scriptTool("script_leave", `setsid sh -c 'sleep 1; touch `+marker+`' >/dev/null 2>&1 </dev/null & echo left`, nil),
	}}, dir)

	res, err := run(t, reg, "script_ok", `{}`)
	require.NoError(t, err)
	require.Equal(t, "in\n\n[sandbox: bwrap, network none]", res.Content)

	_, err = run(t, reg, "script_escape", `{}`)
	require.ErrorContains(t, err, "exit status 3")
	require.ErrorContains(t, err, "[sandbox: bwrap, network none]")

	res, err = run(t, reg, "script_leave", `{}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "left")
	// The setsid process would touch the marker a second after the call; its
	// namespace ended with the call, so the marker must still be absent a
	// while past that.
	time.Sleep(1500 * time.Millisecond)
	_, err = os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist, "a sandboxed script wrote outside the workdir or outlived its call")
}

// W3: a script keeps to WORKSPACE_MAX_BYTES as run_command does: no file
// it writes grows past the room its workspace had left, and a script (a
// test_tool run included) that leaves the workspace over the limit ends
// workspace_full, its files kept. Without the sandbox, the reaper that
// runs the script sets the file size limit.
func TestScriptsKeepToTheWorkspaceLimit(t *testing.T) {
	t.Run("bwrap", func(t *testing.T) {
		dir := t.TempDir()
		sb, err := sandbox.New(sandbox.Config{Mode: sandbox.ModeBwrap}, dir)
		if err != nil {
			testenv.Unavailable(t, "bubblewrap: %v", err)
		}
		t.Cleanup(sb.Close)
		scriptsKeepToTheLimit(t, dir, sb)
	})
	t.Run("none", func(t *testing.T) { scriptsKeepToTheLimit(t, t.TempDir(), nil) })
}

func scriptsKeepToTheLimit(t *testing.T, dir string, sb *sandbox.Sandbox) {
	wd, err := tools.OpenWorkdir(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	wd.SetMaxBytes(1 << 20)
	reg := tools.NewRegistry()
	require.NoError(t, RegisterIn(reg, Config{Sandbox: sb, Tools: []ToolConfig{
		scriptTool("script_big", `head -c 2000000 /dev/zero > big`, nil),
		scriptTool("script_many", `for i in 1 2 3; do head -c 400000 /dev/zero > f$i; done`, nil),
		scriptTool("script_clean", `rm -f big f1 f2 f3`, nil),
	}}, wd))

	_, err = run(t, reg, "script_big", `{}`)
	require.Error(t, err)
	if sb != nil {
		require.ErrorContains(t, err, "the room its workspace had left")
	}
	fi, err := os.Stat(filepath.Join(dir, "big"))
	require.NoError(t, err)
	require.LessOrEqual(t, fi.Size(), int64(1<<20), "RLIMIT_FSIZE stopped the file at the room left")
	_, err = run(t, reg, "script_clean", `{}`)
	require.NoError(t, err)

	_, err = run(t, reg, "script_many", `{}`)
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "%v", err)
	require.FileExists(t, filepath.Join(dir, "f3"), "its files stay")
	_, err = run(t, reg, "script_clean", `{}`)
	require.NoError(t, err, "removing makes room")

	def, ok := reg.Lookup("script_many")
	require.True(t, ok)
	_, err = def.Handler(context.Background(), tools.Request{CallID: "t1", Args: json.RawMessage(`{}`), Test: true})
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "a test_tool run keeps to the limit too: %v", err)
}
