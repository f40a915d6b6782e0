package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/workspace"
)

// W3: starter workspace ls and du read TOOLS_WORKDIR; bad arguments are
// usage errors; move says what it needs.
func TestWorkspaceCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TOOLS_WORKDIR", dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sessions", "s1", ".toolround"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sessions", "s1", "f"), []byte("hello"), 0o644))
	ctx := context.Background()

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"workspace", "ls"}, nil, &out, &bytes.Buffer{}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, out.String())
	require.Regexp(t, `^s1\s+5\s+1\s+\d{4}-`, lines[1])

	out.Reset()
	require.NoError(t, run(ctx, []string{"workspace", "ls", "--json"}, nil, &out, &bytes.Buffer{}))
	var list []workspace.Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &list))
	require.Len(t, list, 1)
	require.Equal(t, int64(5), list[0].Bytes)

	out.Reset()
	require.NoError(t, run(ctx, []string{"workspace", "du", "s1"}, nil, &out, &bytes.Buffer{}))
	var info workspace.Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &info))
	require.Equal(t, "s1", info.Session)

	for _, args := range [][]string{{"workspace"}, {"workspace", "shrink"}, {"workspace", "du"}, {"workspace", "du", ".."}, {"workspace", "rm", "../x"}, {"workspace", "ls", "--all"}} {
		var stderr bytes.Buffer
		require.Equal(t, exitUsage, report(run(ctx, args, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr), "%v", args)
		require.True(t, strings.HasPrefix(stderr.String(), "starter: "), stderr.String())
	}
	var stderr bytes.Buffer
	require.Equal(t, exitFailed, report(run(ctx, []string{"workspace", "du", "nobody"}, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr))
	require.Contains(t, stderr.String(), "has no workspace")
	stderr.Reset()
	require.Equal(t, exitFailed, report(run(ctx, []string{"workspace", "rm", "nobody"}, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr))
	require.Contains(t, stderr.String(), "has no workspace")
	stderr.Reset()
	require.Equal(t, exitFailed, report(run(ctx, []string{"workspace", "move", "s1", "host-2"}, nil, &bytes.Buffer{}, &bytes.Buffer{}), &stderr))
	require.Contains(t, stderr.String(), "WORKSPACE_PLACEMENT=host")
	require.DirExists(t, filepath.Join(dir, "sessions", "s1"))

	out.Reset()
	require.NoError(t, run(ctx, []string{"help"}, nil, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "workspace ls|du|rm|move")
	out.Reset()
	require.NoError(t, run(ctx, []string{"workspace", "--help"}, nil, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "usage: starter workspace")
}
