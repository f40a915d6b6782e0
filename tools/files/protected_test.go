package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// TestRuleApprovedChangesNeverReachTheProtectedSet (T12): a rule matched a
// path's name, so a call a rule approved does not change, through a
// symbolic link whose name the rule matched, a file of the protected set
// (.git, key files, ...). A person's approval of the same call does.
func TestRuleApprovedChangesNeverReachTheProtectedSet(t *testing.T) {
	e := newEnv(t, nil)
	for _, f := range []string{".env", ".git/info/exclude", "plain.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, f), []byte("original\n"), 0o644))
	}
	require.NoError(t, os.Symlink(".env", filepath.Join(e.dir, "settings")))
	require.NoError(t, os.Symlink(".git", filepath.Join(e.dir, "g")))
	require.NoError(t, os.Symlink("plain.txt", filepath.Join(e.dir, "p")))
	ruled := func(name string, args any) (tools.Result, error) {
		return e.defs[name].Handler(context.Background(), tools.Request{CallID: "c1", Args: rawArgs(t, args), RuleApproved: true})
	}
	for name, c := range map[string]struct {
		tool string
		args any
		real string
	}{
		"edit a key file":       {"edit_file", map[string]any{"path": "settings", "new_text": "planted\n"}, ".env"},
		"edit a file of .git":   {"edit_file", map[string]any{"path": "g/info/exclude", "new_text": "planted\n"}, ".git/info/exclude"},
		"remove a key file":     {"remove_file", map[string]any{"path": "settings"}, ".env"},
		"remove a file of .git": {"remove_file", map[string]any{"path": "g/info/exclude"}, ".git/info/exclude"},
	} {
		_, err := ruled(c.tool, c.args)
		require.ErrorContains(t, err, "in the protected set", name)
		got, rerr := os.ReadFile(filepath.Join(e.dir, c.real))
		require.NoError(t, rerr, name)
		require.Equal(t, "original\n", string(got), name)
	}
	// A download into a folder takes its file name from the URL, which no
	// rule's glob saw.
	_, err := ruled("download_file", map[string]any{"url": "https://example.com/.gitattributes", "path": "in/"})
	require.ErrorContains(t, err, "in the protected set")
	require.NoFileExists(t, filepath.Join(e.dir, "in", ".gitattributes"))
	_, err = ruled("edit_file", map[string]any{"path": "p", "new_text": "changed\n"})
	require.NoError(t, err, "a link to a file outside the set")
	e.ok("edit_file", map[string]any{"path": "settings", "new_text": "by a person\n"})
	got, err := os.ReadFile(filepath.Join(e.dir, ".env"))
	require.NoError(t, err)
	require.Equal(t, "by a person\n", string(got))
}
