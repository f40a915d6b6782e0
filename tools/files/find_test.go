package files

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindFiles(t *testing.T) {
	e := newEnv(t, nil)
	for _, f := range []string{
		"main.go", "README.md", "a.txt", "b.txt", "c.txt",
		"src/app.go", "src/app_test.go", "src/util/strings.go", "src/util/strings_test.go",
		"docs/guide.md", "docs/api/ref.md",
		".git/config", ".git/objects/ab/cdef",
		"vendor/.git/HEAD",
	} {
		e.write(f, "x")
	}
	e.ok("edit_file", m{"path": "main.go", "new_text": "package main\n"}) // fills .toolround/versions

	lines := func(s string) []string { return strings.Split(s, "\n")[1:] }
	for _, tc := range []struct {
		name string
		args m
		head string
		want []string
	}{
		{"a name at any depth", m{"pattern": "*.go"}, `find_files: 5 matches for "*.go" in the workdir`,
			[]string{"main.go", "src/app.go", "src/app_test.go", "src/util/strings.go", "src/util/strings_test.go"}},
		{"doublestar", m{"pattern": "src/**/*_test.go"}, `find_files: 2 matches`, []string{"src/app_test.go", "src/util/strings_test.go"}},
		{"a path pattern stays at its depth", m{"pattern": "src/*.go"}, `find_files: 2 matches`, []string{"src/app.go", "src/app_test.go"}},
		{"in a folder", m{"pattern": "*.md", "path": "docs"}, `find_files: 2 matches for "*.md" in docs`, []string{"docs/api/ref.md", "docs/guide.md"}},
		{"relative to the folder", m{"pattern": "api/*", "path": "docs"}, `find_files: 1 match`, []string{"docs/api/ref.md"}},
		{"braces", m{"pattern": "{a,c}.txt"}, `find_files: 2 matches`, []string{"a.txt", "c.txt"}},
		{"folders end with a slash", m{"pattern": "util"}, `find_files: 1 match`, []string{"src/util/"}},
		{"a leading ./", m{"pattern": "./src/util/*.go"}, `find_files: 2 matches`, []string{"src/util/strings.go", "src/util/strings_test.go"}},
		{"no match", m{"pattern": "*.rs"}, `find_files: nothing in the workdir matches "*.rs"`, nil},
		{"skips .git and the reserved folder", m{"pattern": "**"}, `find_files:`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.ok("find_files", tc.args).Content
			require.True(t, strings.HasPrefix(got, tc.head), got)
			for _, l := range lines(got) {
				require.NotContains(t, l, ".git")
				require.NotContains(t, l, ".toolround")
				require.NotContains(t, l, "index.json")
			}
			if tc.want != nil {
				require.Equal(t, tc.want, lines(got))
			}
		})
	}
	abs := e.ok("find_files", m{"pattern": e.dir + "/docs/*.md"}).Content
	require.Equal(t, []string{"docs/guide.md"}, lines(abs))

	for _, tc := range []struct {
		args m
		want string
	}{
		{m{"pattern": "["}, "not a valid glob"},
		{m{"pattern": "../*"}, "leaves the search folder"},
		{m{"pattern": "/etc/*"}, "outside the workdir"},
		{m{"pattern": "./"}, "names the search folder itself"},
		{m{"pattern": "*", "path": "main.go"}, "main.go is a file, not a folder"},
		{m{"pattern": "*", "path": "nowhere"}, "nowhere: no such file or folder"},
	} {
		require.ErrorContains(t, e.fail("find_files", tc.args), tc.want, tc.args)
	}
}

func TestFindFilesCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxFindResults = 3 })
	for i := range 7 {
		e.write(fmt.Sprintf("d/f%d.log", i), "x")
	}
	got := e.ok("find_files", m{"pattern": "*.log"}).Content
	require.Equal(t, strings.Join([]string{
		`find_files: 7 matches for "*.log" in the workdir`,
		"d/f0.log", "d/f1.log", "d/f2.log",
		"[4 more matches not shown (limit 3); narrow the pattern or the path]",
	}, "\n"), got)
}
