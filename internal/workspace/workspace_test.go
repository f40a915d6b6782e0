package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path string, n int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", n)), 0o644))
}

// W3: ls lists every session's workspace with its size, versions and
// background output counted; du is one; rm removes one.
func TestListUsageRemove(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sessions", "a", "f.txt"), 100)
	write(t, filepath.Join(dir, "sessions", "a", ".toolround", "versions", "x", "1"), 50)
	write(t, filepath.Join(dir, "sessions", "b", "sub", "g.txt"), 7)
	write(t, filepath.Join(dir, "top.txt"), 1000)
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "sessions", "b", "link")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sessions", "stray-file"), nil, 0o644))

	list, err := List(dir)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "a", list[0].Session)
	require.Equal(t, int64(150), list[0].Bytes, "versions count")
	require.Equal(t, 2, list[0].Files)
	require.Equal(t, "b", list[1].Session)
	require.Equal(t, 2, list[1].Files, "a link is an entry, not followed")
	require.WithinDuration(t, time.Now(), list[0].Modified, time.Minute)

	u, err := Usage(dir, "b")
	require.NoError(t, err)
	require.Equal(t, list[1].Bytes, u.Bytes)
	_, err = Usage(dir, "missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, bad := range []string{"..", "../x", "", "a/b"} {
		_, err = Usage(dir, bad)
		require.Error(t, err, bad)
		require.Error(t, Remove(dir, bad), bad)
	}

	require.NoError(t, Remove(dir, "a"))
	require.NoDirExists(t, filepath.Join(dir, "sessions", "a"))
	require.FileExists(t, "/etc/passwd")
	require.ErrorIs(t, Remove(dir, "a"), fs.ErrNotExist)
	require.NoError(t, Remove(dir, "b"))
	require.FileExists(t, filepath.Join(dir, "top.txt"))

	empty, err := List(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, empty, "no sessions folder: no workspaces")
}

type fakeLister struct {
	ids   []string
	err   error
	query string
}

func (f *fakeLister) Open(_ context.Context, query string) ([]string, error) {
	f.query += query + "\n"
	return f.ids, f.err
}

func TestBusy(t *testing.T) {
	l := &fakeLister{}
	open, err := OpenWorkflows(context.Background(), l, "s1")
	require.NoError(t, err)
	require.Empty(t, open)
	require.Contains(t, l.query, "toolround/s1/")
	require.Contains(t, l.query, "agentrun/s1/")
	require.Contains(t, l.query, "ExecutionStatus = 'Running'")
	l.ids = []string{"toolround/s1/r/1"}
	open, err = OpenWorkflows(context.Background(), l, "s1")
	require.NoError(t, err)
	require.NotEmpty(t, open)
	l.err = errors.New("down")
	_, err = OpenWorkflows(context.Background(), l, "s1")
	require.ErrorContains(t, err, "down")
	_, err = OpenWorkflows(context.Background(), l, "s'1")
	require.Error(t, err)
}
