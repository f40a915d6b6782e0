package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func age(t *testing.T, dir string, when time.Time) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, when, when)
	}))
}

// W3: WORKSPACE_TTL removes a workspace idle that long, and never one in
// use: a round or agent run of the session open, a background command
// still running, or a change within the TTL.
func TestSweepRemovesOnlyIdleWorkspaces(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	mk := func(s string) string {
		ws := filepath.Join(dir, "sessions", s)
		write(t, filepath.Join(ws, "f"), 10)
		return ws
	}
	idle, open, fresh, bg, ended := mk("idle"), mk("open"), mk("fresh"), mk("bg"), mk("ended")
	write(t, filepath.Join(bg, ".toolround", "background", "bg-1.json"), 0)
	require.NoError(t, os.WriteFile(filepath.Join(bg, ".toolround", "background", "bg-1.json"), []byte(`{"id":"bg-1","pid":1}`), 0o644))
	write(t, filepath.Join(ended, ".toolround", "background", "bg-2.json"), 0)
	require.NoError(t, os.WriteFile(filepath.Join(ended, ".toolround", "background", "bg-2.json"), []byte(`{"id":"bg-2","pid":1,"ended":"2026-01-01T00:00:00Z","exit_code":0}`), 0o644))
	for _, ws := range []string{idle, open, bg, ended} {
		age(t, ws, old)
	}
	l := &sessionLister{open: map[string]bool{"open": true}}
	var told []string
	j := &Janitor{Workdir: dir, TTL: time.Hour, Lister: l, Now: func() time.Time { return now }, Removed: func(s string) { told = append(told, s) }}
	removed, err := j.Sweep(context.Background())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"idle", "ended"}, removed)
	require.ElementsMatch(t, removed, told)
	require.NoDirExists(t, idle)
	require.NoDirExists(t, ended)
	for _, ws := range []string{open, fresh, bg} {
		require.DirExists(t, ws)
	}

	l.err = context.DeadlineExceeded
	age(t, open, old)
	removed, err = j.Sweep(context.Background())
	require.Error(t, err, "a session whose workflows cannot be listed is kept")
	require.Empty(t, removed)
	require.DirExists(t, open)
}

type sessionLister struct {
	open map[string]bool
	err  error
}

func (l *sessionLister) Open(_ context.Context, query string) ([]string, error) {
	if l.err != nil {
		return nil, l.err
	}
	for s := range l.open {
		if strings.Contains(query, "/"+s+"/") {
			return []string{"toolround/" + s + "/r/1"}, nil
		}
	}
	return nil, nil
}
