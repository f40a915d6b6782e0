package engine

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
)

// T11: the worker probes each tabled program's version at start; a
// program outside its table's tested range is returned, sorted, and named
// in one log line each; one that is missing is left out; one that prints
// no version is out of range.
func TestProbeTablesNamesProgramsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"git":  "echo 'git version 2.25.1'",
		"tar":  "echo 'tar (GNU tar) 1.34'; echo 'Copyright'",
		"sed":  "echo 'sed: illegal option -- -' >&2; exit 1",
		"go":   `[ "$1" = version ] && echo 'go version go1.22.3 linux/amd64'`,
		"node": "echo v23.1.0",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	}
	look := func(p string) (string, error) {
		f := filepath.Join(dir, p)
		if _, err := os.Stat(f); err != nil {
			return "", exec.ErrNotFound
		}
		return f, nil
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	got := probeTables(context.Background(), logger, approval.VersionProbes(), look)
	require.Equal(t, []string{"git", "node", "sed"}, got)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 3, logs.String())
	require.Contains(t, lines[0], "program=git version=2.25.1 tested=2.30-2.49")
	require.Contains(t, lines[1], "program=node version=23.1.0")
	require.Contains(t, lines[2], "program=sed version=unknown")
	require.Contains(t, lines[0], "its rules match exact commands only")
}
