package command

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// W3: a command runs with RLIMIT_FSIZE at the room its workspace has
// left, so a file cannot grow past it; a command that leaves the
// workspace over WORKSPACE_MAX_BYTES ends error workspace_full, its files
// kept; under the limit it is an ordinary result.
func TestCommandsKeepToTheWorkspaceLimit(t *testing.T) {
	tl, wd := newSandboxed(t, sandbox.Config{})
	wd.SetMaxBytes(1 << 20)
	ctx := context.Background()

	_, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "head -c 2000000 /dev/zero > big"}`)
	require.Error(t, err)
	fi, serr := os.Stat(filepath.Join(wd.Dir(), "big"))
	require.NoError(t, serr)
	require.LessOrEqual(t, fi.Size(), int64(1<<20), "RLIMIT_FSIZE stopped the file at the room left")

	require.Contains(t, err.Error(), "the room its workspace had left", "the cut names the workspace's limit")
	_, err = call(ctx, tools.Typed(tl.runCommand), `{"command": "rm big"}`)
	require.NoError(t, err)

	// Many files, each under the room, add up past the limit.
	_, err = call(ctx, tools.Typed(tl.runCommand), `{"command": "for i in 1 2 3; do head -c 400000 /dev/zero > f$i; done"}`)
	require.Error(t, err)
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), err.Error())
	require.Contains(t, err.Error(), "over its limit")
	require.FileExists(t, filepath.Join(wd.Dir(), "f3"), "its files stay")

	_, err = call(ctx, tools.Typed(tl.backgroundCall), `{"command": "true", "wait_seconds": 5}`)
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "%v", err)

	_, err = call(ctx, tools.Typed(tl.runCommand), `{"command": "echo x > s"}`)
	require.Error(t, err, "over the limit, a command can write nothing")
	_, err = call(ctx, tools.Typed(tl.runCommand), `{"command": "rm f1 f2 f3"}`)
	require.NoError(t, err, "removing makes room")
	res, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "echo small > s"}`)
	require.NoError(t, err, "under the limit again")
	require.Contains(t, res.Content, "exit code 0")
}

// W3: a command's private /tmp and home count towards the room its
// workspace has left: files there, each under that room, cannot add up
// past it, so the worker's disk is not filled through them either.
func TestCommandsTmpKeepsToTheWorkspaceLimit(t *testing.T) {
	tl, wd := newSandboxed(t, sandbox.Config{})
	wd.SetMaxBytes(1 << 20)
	ctx := context.Background()

	for _, dir := range []string{"/tmp", "~"} {
		_, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "for i in 1 2 3 4 5 6 7 8; do head -c 400000 /dev/zero > `+dir+`/f$i || exit 7; done"}`)
		require.Error(t, err, "%s took 3.2 MB under a 1 MB limit", dir)
		require.Contains(t, err.Error(), "exit code 7", "the write past the room failed: %v", err)
	}
	res, err := call(ctx, tools.Typed(tl.runCommand), `{"command": "head -c 400000 /dev/zero > /tmp/f && head -c 400000 /dev/zero > ~/g && echo fits"}`)
	require.NoError(t, err, "what fits in the room is written")
	require.Contains(t, res.Content, "fits")
}
