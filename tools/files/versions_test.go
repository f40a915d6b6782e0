package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistoryAndRestore(t *testing.T) {
	e := newEnv(t, nil)
	require.Contains(t, e.ok("file_history", m{"path": "a.txt"}).Content, "no versions of a.txt are kept yet")
	require.ErrorContains(t, e.fail("restore_file", m{"path": "a.txt"}), "no versions of a.txt are kept")

	e.ok("edit_file", m{"path": "a.txt", "new_text": "one\n"})
	e.ok("edit_file", m{"path": "a.txt", "old_text": "one", "new_text": "two"})
	hist := e.ok("file_history", m{"path": "a.txt"}).Content
	require.Equal(t, strings.Join([]string{
		"file_history a.txt: 2 versions kept, oldest first; bring one back with restore_file(path, version)",
		"version 1: the file did not exist; replaced by edit_file (created) at 2025-01-02 03:04:01Z",
		"version 2: 4 bytes, made by edit_file (created) at 2025-01-02 03:04:01Z; replaced by edit_file (replaced) at 2025-01-02 03:04:02Z",
		"current: 4 bytes, made by edit_file (replaced) at 2025-01-02 03:04:02Z",
	}, "\n"), hist)

	// The default is the version before the last change; a second restore undoes the first.
	res := e.ok("restore_file", m{"path": "a.txt"})
	require.Equal(t, "one\n", e.content("a.txt"))
	require.Contains(t, res.Content, "restored a.txt to version 2 (4 bytes, made by edit_file (created) at 2025-01-02 03:04:01Z); the previous content is version 3")
	require.Equal(t, []string{"a.txt"}, res.Touched)
	e.ok("restore_file", m{"path": "a.txt"})
	require.Equal(t, "two\n", e.content("a.txt"))

	res = e.ok("restore_file", m{"path": "a.txt", "version": 1})
	require.Contains(t, res.Content, "in which the file did not exist, so it was removed")
	e.missing("a.txt")
	require.Contains(t, e.ok("restore_file", m{"path": "a.txt", "version": 1}).Content, "already matches version 1; nothing changed")

	res = e.ok("restore_file", m{"path": "a.txt", "version": 3})
	require.Equal(t, "two\n", e.content("a.txt"))
	require.Contains(t, res.Content, "version 6 records that the file did not exist")
	require.ErrorContains(t, e.fail("restore_file", m{"path": "a.txt", "version": 99}), "a.txt has no version 99; kept versions are 1 to 6")

	hist = e.ok("file_history", m{"path": "a.txt"}).Content
	require.Contains(t, hist, "6 versions kept")
	require.Contains(t, hist, "version 6: the file did not exist (made by restore_file (version 1) at")
	require.Contains(t, hist, "current: 4 bytes, made by restore_file (version 3)")
}

func TestRemoveAndRestore(t *testing.T) {
	e := newEnv(t, nil)
	e.write("doc.md", "# title\n")
	require.NoError(t, os.Chmod(e.abs("doc.md"), 0o755))
	res := e.ok("remove_file", m{"path": "doc.md"})
	require.Equal(t, "remove_file: removed doc.md (8 bytes); the previous content is version 1 (restore_file brings it back)", res.Content)
	require.Equal(t, []string{"doc.md"}, res.Touched)
	e.missing("doc.md")

	hist := e.ok("file_history", m{"path": "doc.md"}).Content
	require.Contains(t, hist, "version 1: 8 bytes, made by the original, before any recorded change at ")
	require.Contains(t, hist, "replaced by remove_file at")
	require.Contains(t, hist, "current: the file does not exist, made by remove_file")

	res = e.ok("restore_file", m{"path": "doc.md"})
	require.Equal(t, "# title\n", e.content("doc.md"))
	fi, err := os.Stat(e.abs("doc.md"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "a restored file gets back its mode")
	require.Contains(t, res.Content, "version 2 records that the file did not exist")

	require.ErrorContains(t, e.fail("remove_file", m{"path": "gone.txt"}), "gone.txt: no such file or folder")
	require.ErrorContains(t, e.fail("remove_file", m{"path": "."}), "names the workdir itself")
}

func TestRemoveFolder(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxRemoveFiles = 4 })
	e.write("pkg/a.go", "package a\n")
	e.write("pkg/sub/b.go", "package b\n")
	e.write("pkg/sub/deeper/c.txt", "c\n")
	require.NoError(t, os.MkdirAll(e.abs("pkg/empty"), 0o755))
	e.write("pkgother/keep.txt", "keep\n")

	res := e.ok("remove_file", m{"path": "pkg"})
	require.Contains(t, res.Content, "removed folder pkg with 3 files and 4 folders")
	require.Contains(t, res.Content, "\npkg/a.go\npkg/sub/b.go\npkg/sub/deeper/c.txt")
	require.Equal(t, []string{"pkg"}, res.Touched)
	e.missing("pkg")
	require.Equal(t, "keep\n", e.content("pkgother/keep.txt"))

	list := e.ok("file_history", m{"path": "pkg"}).Content
	require.Contains(t, list, "3 files under pkg have versions")
	require.Contains(t, list, "\npkg/a.go: 1 versions, removed; last change remove_file (folder pkg) at")
	require.Contains(t, list, "\npkg/sub/deeper/c.txt:")
	require.NotContains(t, list, "pkgother")

	e.ok("restore_file", m{"path": "pkg/sub/b.go"})
	require.Equal(t, "package b\n", e.content("pkg/sub/b.go"))
	require.Contains(t, e.ok("file_history", m{"path": "pkg"}).Content, "pkg/sub/b.go: 2 versions, exists")

	for i := range 5 {
		e.write(fmt.Sprintf("many/f%d.txt", i), "x")
	}
	require.ErrorContains(t, e.fail("remove_file", m{"path": "many"}), "many holds more than 4 files")
	require.Equal(t, "x", e.content("many/f0.txt"))

	e.write("withlink/a.txt", "a")
	require.NoError(t, os.Symlink("a.txt", e.abs("withlink/l")))
	require.ErrorContains(t, e.fail("remove_file", m{"path": "withlink"}), "withlink/l, which is not a regular file or folder")
	require.Equal(t, "a", e.content("withlink/a.txt"))

	require.NoError(t, os.MkdirAll(e.abs("hollow/inner"), 0o755))
	require.Contains(t, e.ok("remove_file", m{"path": "hollow"}).Content, "removed folder hollow with 0 files and 2 folders")
	e.missing("hollow")
}

func TestVersionLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.MaxVersions = 3
		c.MaxVersionBytes = 20
	})
	for i := 1; i <= 5; i++ {
		e.ok("edit_file", m{"path": "f.txt", "new_text": fmt.Sprintf("content %d\n", i)})
	}
	hist := e.ok("file_history", m{"path": "f.txt"}).Content
	require.Contains(t, hist, "3 versions kept")
	require.NotContains(t, hist, "version 2:")
	require.Contains(t, hist, "version 3: 10 bytes")
	require.Contains(t, hist, "version 5: 10 bytes")
	require.ErrorContains(t, e.fail("restore_file", m{"path": "f.txt", "version": 1}), "kept versions are 3 to 5")

	ft, err := newFileTools(Config{Workdir: e.wd})
	require.NoError(t, err)
	entries, err := os.ReadDir(filepath.Join(e.dir, filepath.FromSlash(ft.versions.dir("f.txt"))))
	require.NoError(t, err)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	require.ElementsMatch(t, []string{"3", "4", "5", "index.json"}, names, "dropped versions leave no content behind")

	e.write("big.txt", strings.Repeat("b", 21))
	res := e.ok("edit_file", m{"path": "big.txt", "new_text": "small"})
	require.Contains(t, res.Content, "the previous content (21 bytes) was larger than the version size limit, so no copy was kept")
	require.Contains(t, e.ok("file_history", m{"path": "big.txt"}).Content, "version 1: 21 bytes, made by the original, before any recorded change")
	require.ErrorContains(t, e.fail("restore_file", m{"path": "big.txt"}), "larger than the version size limit")
	require.Equal(t, "small", e.content("big.txt"))
}

func TestChangesOutsideTheTools(t *testing.T) {
	e := newEnv(t, nil)
	e.ok("edit_file", m{"path": "a.txt", "new_text": "by the tool\n"})
	e.write("a.txt", "by hand\n")
	require.Contains(t, e.ok("file_history", m{"path": "a.txt"}).Content, "current: 8 bytes, changed outside the file tools since edit_file (created)")

	e.ok("edit_file", m{"path": "a.txt", "new_text": "by the tool again\n"})
	hist := e.ok("file_history", m{"path": "a.txt"}).Content
	require.Contains(t, hist, "version 2: 8 bytes, made by a change outside the file tools at")
	e.ok("restore_file", m{"path": "a.txt"})
	require.Equal(t, "by hand\n", e.content("a.txt"), "the hand-made content was kept")
}

func TestDamagedIndex(t *testing.T) {
	e := newEnv(t, nil)
	e.ok("edit_file", m{"path": "a.txt", "new_text": "one"})
	ft, err := newFileTools(Config{Workdir: e.wd})
	require.NoError(t, err)
	index := filepath.Join(e.dir, filepath.FromSlash(ft.versions.dir("a.txt")), "index.json")
	require.NoError(t, os.WriteFile(index, []byte("{not json"), 0o644))

	require.ErrorContains(t, e.fail("file_history", m{"path": "a.txt"}), "the version index of a.txt")
	require.ErrorContains(t, e.fail("restore_file", m{"path": "a.txt"}), "is damaged")

	// A change is never blocked: the damaged index is set aside.
	e.ok("edit_file", m{"path": "a.txt", "new_text": "two"})
	require.Contains(t, e.ok("file_history", m{"path": "a.txt"}).Content, "1 versions kept")
	_, err = os.Stat(index + ".damaged")
	require.NoError(t, err)
	e.ok("restore_file", m{"path": "a.txt"})
	require.Equal(t, "one", e.content("a.txt"))
}

// Changes from concurrent calls (download_file runs concurrently) each keep
// their version; the race detector watches the store.
func TestConcurrentChanges(t *testing.T) {
	e := newEnv(t, nil)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := e.callRaw("edit_file", rawArgs(t, m{"path": "shared.txt", "new_text": fmt.Sprintf("writer %d\n", i)}))
			require.NoError(t, err)
		}()
		go func() {
			defer wg.Done()
			_, err := e.callRaw("edit_file", rawArgs(t, m{"path": fmt.Sprintf("own/%d.txt", i), "new_text": "x"}))
			require.NoError(t, err)
			_, err = e.callRaw("read_files", rawArgs(t, m{"paths": []string{"shared.txt", "own"}}))
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	hist := e.ok("file_history", m{"path": "shared.txt"}).Content
	require.Contains(t, hist, fmt.Sprintf("%d versions kept", n))
	require.NotContains(t, hist, "outside the file tools", "every writer saw the state the one before it left")
}
