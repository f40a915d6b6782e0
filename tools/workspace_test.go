package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openSessions(t *testing.T) *Workdir {
	t.Helper()
	w, err := OpenWorkspaces(t.TempDir(), WorkspaceSession)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// W1: each session acts in TOOLS_WORKDIR/sessions/<id>/ with its own
// .toolround/; shared mode is the workdir itself for every session.
func TestSessionWorkspaceIsItsOwnFolder(t *testing.T) {
	w := openSessions(t)
	a, err := w.Session("alpha")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(w.Dir(), SessionsDir, "alpha"), a.Dir())
	require.DirExists(t, filepath.Join(a.Dir(), ReservedDir))
	require.Equal(t, "alpha", a.SessionID())
	again, err := w.Session("alpha")
	require.NoError(t, err)
	require.Same(t, a, again, "one workspace a session while its folder stays")

	shared, err := OpenWorkspaces(t.TempDir(), WorkspaceShared)
	require.NoError(t, err)
	defer shared.Close()
	s, err := shared.Session("alpha")
	require.NoError(t, err)
	require.Same(t, shared, s)
	require.NoDirExists(t, filepath.Join(shared.Dir(), SessionsDir))
}

// W1: the session id becomes a folder name, so it is checked as one.
func TestSessionIDIsAPathComponent(t *testing.T) {
	w := openSessions(t)
	for _, id := range []string{"", ".", "..", "../x", "a/b", "/abs", "a\x00b", "a\\b", strings.Repeat("x", 129), " lead", "-x", ".hidden", "ü"} {
		_, err := w.Session(id)
		require.Error(t, err, "%q", id)
	}
	entries, err := os.ReadDir(filepath.Join(w.Dir(), SessionsDir))
	require.NoError(t, err)
	require.Empty(t, entries, "no folder is made for a refused id")
	_, err = w.Session(strings.Repeat("x", 128))
	require.NoError(t, err)
}

// W2: a folder swapped for a link to another session's is not followed.
func TestSessionWorkspaceRefusesALinkedFolder(t *testing.T) {
	w := openSessions(t)
	a, err := w.Session("a")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(a.Dir(), filepath.Join(w.Dir(), SessionsDir, "b")))
	_, err = w.Session("b")
	require.ErrorContains(t, err, "not a folder")
	// A relative link, which os.Root would follow inside the workdir, is
	// refused the same way: b never gets a's files.
	require.NoError(t, a.Root().WriteFile("secret", []byte("a's"), 0o644))
	require.NoError(t, os.Symlink("a", filepath.Join(w.Dir(), SessionsDir, "c")))
	c, err := w.Session("c")
	require.ErrorContains(t, err, "not a folder")
	require.Nil(t, c)
}

// A workspace removed from outside (starter workspace rm) is made anew on
// the next call instead of acting in the deleted folder.
func TestSessionWorkspaceReopensAfterRemoval(t *testing.T) {
	w := openSessions(t)
	a, err := w.Session("a")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(a.Dir()))
	b, err := w.Session("a")
	require.NoError(t, err)
	require.NotSame(t, a, b)
	require.NoError(t, b.Root().WriteFile("f", []byte("x"), 0o644))
	require.FileExists(t, filepath.Join(w.Dir(), SessionsDir, "a", "f"))
}

func TestWorkspaceFromContext(t *testing.T) {
	w := openSessions(t)
	_, err := w.For(context.Background())
	require.ErrorContains(t, err, "session id")
	got, err := w.For(WithSession(context.Background(), "s1"))
	require.NoError(t, err)
	require.Equal(t, "s1", got.SessionID())
}

func TestUnknownWorkspaceMode(t *testing.T) {
	_, err := OpenWorkspaces(t.TempDir(), "per-user")
	require.ErrorContains(t, err, "shared or session")
}

// W1: on a file system that folds case, session mode refuses to start.
func TestSessionModeRefusesCaseFolding(t *testing.T) {
	dir := t.TempDir()
	folds, err := foldsCase(dir)
	require.NoError(t, err)
	require.False(t, folds, "the test's temp folder keeps case")
	old := foldsCase
	foldsCase = func(string) (bool, error) { return true, nil }
	defer func() { foldsCase = old }()
	_, err = OpenWorkspaces(dir, WorkspaceSession)
	require.ErrorContains(t, err, "folds case")
	w, err := OpenWorkspaces(dir, WorkspaceShared)
	require.NoError(t, err, "shared mode does not care")
	_ = w.Close()
}

// PerSession gives each session its own definitions, built once per
// workspace, and routes Handler, Changed and Reconcile by the call's session.
func TestPerSessionRoutesBySession(t *testing.T) {
	w := openSessions(t)
	builds := 0
	build := func(wd *Workdir) ([]Definition, func(), error) {
		builds++
		d := Definition{Name: "where", SideEffect: ReadOnly,
			Handler: func(context.Context, Request) (Result, error) { return Text(wd.Dir()), nil },
			Changed: func(context.Context, map[string]FileState) []string { return []string{wd.SessionID()} },
			Reconcile: func(context.Context, Request) (Reconciliation, error) {
				return Reconciliation{Verdict: VerdictApplied, Content: wd.SessionID()}, nil
			},
		}
		return []Definition{d}, nil, nil
	}
	defs, closeAll, err := PerSession(w, build)
	require.NoError(t, err)
	defer closeAll()
	d := defs[0]
	ctxA, ctxB := WithSession(context.Background(), "a"), WithSession(context.Background(), "b")
	ra, err := d.Handler(ctxA, Request{})
	require.NoError(t, err)
	rb, err := d.Handler(ctxB, Request{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(w.Dir(), SessionsDir, "a"), ra.Content)
	require.Equal(t, filepath.Join(w.Dir(), SessionsDir, "b"), rb.Content)
	_, _ = d.Handler(ctxA, Request{})
	require.Equal(t, []string{"b"}, d.Changed(ctxB, nil))
	rec, err := d.Reconcile(ctxA, Request{})
	require.NoError(t, err)
	require.Equal(t, "a", rec.Content)
	require.Equal(t, 3, builds, "the template and one set per session")

	_, err = d.Handler(context.Background(), Request{})
	require.ErrorContains(t, err, "session id")
	require.Equal(t, []string{"x"}, d.Changed(context.Background(), map[string]FileState{"x": {}}), "no workspace: every file counts as changed")
	rec, err = d.Reconcile(context.Background(), Request{})
	require.NoError(t, err)
	require.Equal(t, VerdictUnknown, rec.Verdict)
}

func TestPerSessionSharedIsOneSet(t *testing.T) {
	w, err := OpenWorkspaces(t.TempDir(), WorkspaceShared)
	require.NoError(t, err)
	defer w.Close()
	closed := 0
	defs, closeAll, err := PerSession(w, func(wd *Workdir) ([]Definition, func(), error) {
		return []Definition{{Name: "x", Handler: noop}}, func() { closed++ }, nil
	})
	require.NoError(t, err)
	require.Len(t, defs, 1)
	closeAll()
	require.Equal(t, 1, closed)
	_, _, err = PerSession(w, func(*Workdir) ([]Definition, func(), error) { return nil, nil, errors.New("bad") })
	require.ErrorContains(t, err, "bad")
}

// W3: every call's use of a workspace shows in its newest modification
// time, which WORKSPACE_TTL counts idleness from.
func TestSessionUseIsMarked(t *testing.T) {
	w := openSessions(t)
	a, err := w.Session("a")
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour)
	reserved := filepath.Join(a.Dir(), ReservedDir)
	require.NoError(t, os.Chtimes(reserved, old, old))
	a.marked = time.Time{}
	_, err = w.Session("a")
	require.NoError(t, err)
	fi, err := os.Stat(reserved)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute)
}

// A workspace made anew, or forgotten after its removal, has its old
// definitions stopped (its background commands end) and dropped, so a
// worker keeps state for the workspaces that exist only.
func TestPerSessionDropsTheSetsOfRemovedWorkspaces(t *testing.T) {
	w := openSessions(t)
	stopped := map[string]int{}
	defs, closeAll, err := PerSession(w, func(wd *Workdir) ([]Definition, func(), error) {
		return []Definition{{Name: "x", Handler: noop}}, func() { stopped[wd.SessionID()]++ }, nil
	})
	require.NoError(t, err)
	ctx := func(s string) context.Context { return WithSession(context.Background(), s) }
	_, err = defs[0].Handler(ctx("a"), Request{})
	require.NoError(t, err)
	_, err = defs[0].Handler(ctx("b"), Request{})
	require.NoError(t, err)

	a, err := w.Session("a")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(a.Dir()))
	_, err = defs[0].Handler(ctx("a"), Request{})
	require.NoError(t, err)
	require.Equal(t, 1, stopped["a"], "the set of the old folder was stopped")

	b, err := w.Session("b")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(b.Dir()))
	w.Forget("b")
	_, err = defs[0].Handler(ctx("a"), Request{})
	require.NoError(t, err)
	require.Equal(t, 1, stopped["b"], "a forgotten workspace's set is stopped at the next call of any session")
	closeAll()
	require.Equal(t, 2, stopped["a"])
	require.Equal(t, 1, stopped["b"], "stopped once")
}
