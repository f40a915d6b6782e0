package ext

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
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
