package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every tool that takes a path refuses ones that leave the workdir or name
// its reserved folder.
func TestPathTraversal(t *testing.T) {
	e := newEnv(t, nil)
	outside := filepath.Join(filepath.Dir(e.dir), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))

	bad := []struct{ path, want string }{
		{"../outside.txt", "outside the workdir"},
		{"a/../../outside.txt", "outside the workdir"},
		{"/etc/passwd", "outside the workdir"},
		{outside, "outside the workdir"},
		{".toolround/versions", "reserved"},
		{"./.toolround/x", "reserved"},
	}
	for _, b := range bad {
		for _, tc := range []struct {
			tool string
			args any
		}{
			{"read_files", m{"paths": []string{b.path}}},
			{"find_files", m{"pattern": "*", "path": b.path}},
			{"edit_file", m{"path": b.path, "new_text": "pwned"}},
			{"remove_file", m{"path": b.path}},
			{"restore_file", m{"path": b.path}},
			{"file_history", m{"path": b.path}},
			{"download_file", m{"url": "http://127.0.0.1:1/x", "path": b.path}},
		} {
			err := e.fail(tc.tool, tc.args)
			require.Contains(t, err.Error(), b.want, "%s %s", tc.tool, b.path)
		}
	}
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "outside\n", string(b))

	// An absolute path inside the workdir is fine.
	abs := filepath.Join(e.dir, "sub", "in.txt")
	res := e.ok("edit_file", m{"path": abs, "new_text": "inside\n"})
	require.Equal(t, []string{"sub/in.txt"}, res.Touched)
	require.Contains(t, e.ok("read_files", m{"paths": []string{abs}}).Content, "     1\tinside")
	require.Equal(t, "inside\n", e.content("sub/in.txt"))
}

func TestSymlinks(t *testing.T) {
	e := newEnv(t, nil)
	outDir := filepath.Join(filepath.Dir(e.dir), "outside")
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	secret := filepath.Join(outDir, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("do not read\n"), 0o644))
	require.NoError(t, os.Symlink(secret, e.abs("out.txt")))
	require.NoError(t, os.Symlink("../outside/secret.txt", e.abs("rel-out.txt")))
	require.NoError(t, os.Symlink(outDir, e.abs("outdir")))
	require.NoError(t, os.Symlink(".toolround", e.abs("state")))

	t.Run("the root itself refuses an escaping link", func(t *testing.T) {
		_, err := e.wd.Root().Open("outdir/secret.txt")
		require.Error(t, err)
		require.Contains(t, plainErr(err).Error(), "outside the workdir")
	})

	for _, p := range []string{"out.txt", "rel-out.txt", "outdir/secret.txt", "outdir/new.txt", "state/versions"} {
		t.Run(p, func(t *testing.T) {
			for _, tc := range []struct {
				tool string
				args any
			}{
				{"read_files", m{"paths": []string{p}}},
				{"edit_file", m{"path": p, "new_text": "pwned"}},
				{"edit_file", m{"path": p, "new_text": "pwned", "old_text": "do not"}},
				{"remove_file", m{"path": p}},
				{"restore_file", m{"path": p}},
				{"download_file", m{"url": "http://127.0.0.1:1/x", "path": p}},
			} {
				err := e.fail(tc.tool, tc.args)
				require.Regexp(t, "outside the workdir|reserved folder", err.Error(), "%s %s", tc.tool, p)
			}
		})
	}
	require.ErrorContains(t, e.fail("find_files", m{"pattern": "*", "path": "outdir"}), "outside the workdir")
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	require.Equal(t, "do not read\n", string(b))
	_, err = os.Stat(filepath.Join(outDir, "new.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)

	t.Run("links inside the workdir are followed", func(t *testing.T) {
		e.write("real/target.txt", "one\ntwo\n")
		require.NoError(t, os.Symlink("real/target.txt", e.abs("link.txt")))
		require.NoError(t, os.Symlink(e.abs("real/target.txt"), e.abs("abslink.txt")))
		require.NoError(t, os.Symlink("real", e.abs("reallink")))

		require.Contains(t, e.ok("read_files", m{"paths": []string{"abslink.txt"}}).Content, "     2\ttwo")
		res := e.ok("edit_file", m{"path": "link.txt", "old_text": "two", "new_text": "TWO"})
		require.Equal(t, []string{"link.txt", "real/target.txt"}, res.Touched)
		require.Contains(t, res.Content, "through the symbolic link to real/target.txt")
		require.Equal(t, "one\nTWO\n", e.content("real/target.txt"))
		fi, err := os.Lstat(e.abs("link.txt"))
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link stays a link")

		require.Contains(t, e.ok("file_history", m{"path": "real/target.txt"}).Content, "version 1")
		find := e.ok("find_files", m{"pattern": "*.txt", "path": "reallink"}).Content
		require.Contains(t, find, "reallink/target.txt")
	})

	t.Run("a link to a sensitive file needs its own name", func(t *testing.T) {
		e.write(".env", "TOKEN=x\n")
		require.NoError(t, os.Symlink(".env", e.abs("notes.txt")))
		err := e.fail("read_files", m{"paths": []string{"notes.txt"}})
		require.Contains(t, err.Error(), "may hold keys")
		require.NotContains(t, err.Error(), "TOKEN")
	})

	t.Run("link loops end", func(t *testing.T) {
		require.NoError(t, os.Symlink("loop2", e.abs("loop1")))
		require.NoError(t, os.Symlink("loop1", e.abs("loop2")))
		require.ErrorContains(t, e.fail("edit_file", m{"path": "loop1", "new_text": "x"}), "too many levels")
	})
}

func TestResolve(t *testing.T) {
	e := newEnv(t, nil)
	ft, err := newFileTools(Config{Workdir: e.wd})
	require.NoError(t, err)
	e.write("d/f.txt", "x")
	require.NoError(t, os.Symlink("d", e.abs("dl")))
	require.NoError(t, os.Symlink("../d/f.txt", e.abs("d/self")))
	for _, tc := range []struct{ in, given, real string }{
		{".", ".", "."},
		{"d/f.txt", "d/f.txt", "d/f.txt"},
		{"./d//f.txt", "d/f.txt", "d/f.txt"},
		{"dl/f.txt", "dl/f.txt", "d/f.txt"},
		{"dl/self", "dl/self", "d/f.txt"},
		{"dl/new/deeper.txt", "dl/new/deeper.txt", "d/new/deeper.txt"},
		{"missing/x", "missing/x", "missing/x"},
	} {
		tg, err := ft.resolve(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, target{given: tc.given, real: tc.real}, tg, tc.in)
	}
	_, err = ft.resolve(strings.Repeat("../", 3))
	require.Error(t, err)
}
