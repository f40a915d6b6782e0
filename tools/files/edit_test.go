package files

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditFile(t *testing.T) {
	e := newEnv(t, nil)

	res := e.ok("edit_file", m{"path": "deep/er/new.txt", "new_text": "a\nb\n"})
	require.Equal(t, "edit_file: created deep/er/new.txt (4 bytes, 2 lines); version 1 records that the file did not exist (restore_file undoes this)", res.Content)
	require.Equal(t, []string{"deep/er/new.txt"}, res.Touched)
	require.Equal(t, "a\nb\n", e.content("deep/er/new.txt"))

	res = e.ok("edit_file", m{"path": "deep/er/new.txt", "new_text": "rewritten\n"})
	require.Equal(t, "edit_file: overwrote deep/er/new.txt (was 4 bytes, now 10 bytes); the previous content is version 2 (restore_file brings it back)", res.Content)
	require.Equal(t, "rewritten\n", e.content("deep/er/new.txt"))

	res = e.ok("edit_file", m{"path": "deep/er/new.txt", "new_text": "rewritten\n"})
	require.Contains(t, res.Content, "is unchanged")
	require.Empty(t, res.Touched)

	e.write("code.go", "package x\n\nfunc A() {}\n\nfunc B() {}\n")
	res = e.ok("edit_file", m{"path": "code.go", "old_text": "func B() {}", "new_text": "func B() {\n\treturn\n}"})
	require.Equal(t, "package x\n\nfunc A() {}\n\nfunc B() {\n\treturn\n}\n", e.content("code.go"))
	require.Contains(t, res.Content, "replaced 1 occurrence in code.go at line 5 (1 lines became 3)")
	require.Contains(t, res.Content, "     5\tfunc B() {\n     6\t\treturn\n     7\t}")
	require.Equal(t, []string{"code.go"}, res.Touched)

	res = e.ok("edit_file", m{"path": "code.go", "old_text": "\treturn\n", "new_text": ""})
	require.Equal(t, "package x\n\nfunc A() {}\n\nfunc B() {\n}\n", e.content("code.go"))
	require.Contains(t, res.Content, "at line 6")

	e.write("twice.txt", "x = 1\nx = 1\n")
	e.write("crlf.txt", "one\r\ntwo\r\n")
	e.write("spaced.txt", "    indented\n")
	require.NoError(t, os.MkdirAll(e.abs("folder"), 0o755))
	for _, tc := range []struct {
		name string
		args m
		want string
	}{
		{"not found", m{"path": "code.go", "old_text": "func C()", "new_text": "x"}, "old_text was not found in code.go; read the file again"},
		{"found twice", m{"path": "twice.txt", "old_text": "x = 1", "new_text": "x = 2"}, "old_text occurs 2 times in twice.txt"},
		{"crlf", m{"path": "crlf.txt", "old_text": "one\ntwo", "new_text": "x"}, "CRLF line endings"},
		{"whitespace", m{"path": "spaced.txt", "old_text": "  indented  \n\n", "new_text": "x"}, "different leading or trailing whitespace"},
		{"line numbers", m{"path": "code.go", "old_text": "     3\tfunc A() {}x", "new_text": "x"}, "line numbers of read_files"},
		{"missing file", m{"path": "nope.txt", "old_text": "a", "new_text": "b"}, "nope.txt: no such file; omit old_text to create it"},
		{"a folder", m{"path": "folder", "new_text": "x"}, "folder is a folder"},
		{"the workdir", m{"path": ".", "new_text": "x"}, "names the workdir itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, e.fail("edit_file", tc.args), tc.want)
		})
	}
	require.Equal(t, "x = 1\nx = 1\n", e.content("twice.txt"))
	e.missing("nope.txt")

	t.Run("keeps the file mode", func(t *testing.T) {
		e.write("run.sh", "echo hi\n")
		require.NoError(t, os.Chmod(e.abs("run.sh"), 0o750))
		e.ok("edit_file", m{"path": "run.sh", "old_text": "hi", "new_text": "there"})
		fi, err := os.Stat(e.abs("run.sh"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
	})

	t.Run("leaves no temporary files", func(t *testing.T) {
		var leftovers []string
		require.NoError(t, walkAll(e.dir, func(p string) {
			if strings.Contains(p, ".toolround-tmp-") {
				leftovers = append(leftovers, p)
			}
		}))
		require.Empty(t, leftovers)
	})

	t.Run("a file too large to edit by replacement", func(t *testing.T) {
		small := newEnv(t, func(c *Config) { c.MaxEditBytes = 10 })
		small.write("big.txt", "0123456789abc")
		require.ErrorContains(t, small.fail("edit_file", m{"path": "big.txt", "old_text": "abc", "new_text": "x"}), "more than the 10 bytes")
		res := small.ok("edit_file", m{"path": "big.txt", "new_text": "short"})
		require.Contains(t, res.Content, "was 13 bytes, now 5 bytes")
	})
}

func TestLooksNumbered(t *testing.T) {
	require.True(t, looksNumbered("     1\tfoo\n     2\tbar"))
	require.False(t, looksNumbered("foo\n     2\tbar"))
	require.False(t, looksNumbered("a\tb"))
}

func TestExcerpt(t *testing.T) {
	data := []byte(strings.Repeat("x\n", 30))
	got := excerpt(data, 3, 15)
	require.Equal(t, 11, strings.Count(got, "\n")+1)
	require.Contains(t, got, "     3\tx")
	require.Contains(t, got, "… 5 more changed lines")
	long := excerpt([]byte(strings.Repeat("é", 300)), 1, 1)
	require.Less(t, len(long), 220)
}
