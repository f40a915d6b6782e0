package files

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestReadFiles(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "alpha\nbeta\ngamma\n")
	e.write("nonl.txt", "one\ntwo")
	e.write("empty.txt", "")
	e.write("crlf.txt", "x\r\ny\r\n")
	e.write("img.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	e.write("latin1.txt", "caf\xe9 au lait\n")
	e.write("utf8.txt", "café ☕\n")
	e.write("src/main.go", "package main\n")
	e.write("src/sub/x.go", "package sub\n")
	e.ok("edit_file", m{"path": "made.txt", "new_text": "v1"}) // creates .toolround/

	for _, tc := range []struct {
		name string
		args m
		want []string
		not  []string
	}{
		{"numbered lines", m{"paths": []string{"a.txt"}},
			[]string{"==> a.txt (17 bytes, 3 lines) <==\n     1\talpha\n     2\tbeta\n     3\tgamma"}, []string{"     4\t"}},
		{"last line without newline", m{"paths": []string{"nonl.txt"}},
			[]string{"(7 bytes, 2 lines)", "     2\ttwo"}, nil},
		{"empty file", m{"paths": []string{"empty.txt"}}, []string{"==> empty.txt (empty file) <=="}, nil},
		{"crlf", m{"paths": []string{"crlf.txt"}}, []string{"CRLF line endings", "     1\tx\r"}, nil},
		{"binary", m{"paths": []string{"img.png"}}, []string{"==> img.png (binary file, image/png, 16 bytes; not shown) <=="}, []string{"IHDR"}},
		{"invalid utf-8 is binary", m{"paths": []string{"latin1.txt"}}, []string{"latin1.txt (binary file"}, []string{"lait"}},
		{"utf-8 is text", m{"paths": []string{"utf8.txt"}}, []string{"     1\tcafé ☕"}, nil},
		{"offset and limit", m{"paths": []string{"a.txt"}, "offset": 2, "limit": 1},
			[]string{"(17 bytes; lines 2-2 shown)", "     2\tbeta", "[more lines follow: continue with offset=3]"}, []string{"alpha", "gamma"}},
		{"offset to the end", m{"paths": []string{"a.txt"}, "offset": 3},
			[]string{"lines 3-3 shown", "     3\tgamma"}, []string{"more lines"}},
		{"offset past the end", m{"paths": []string{"a.txt"}, "offset": 9}, []string{"offset 9 is past the end: the file has 3 lines"}, nil},
		{"offset just past the end", m{"paths": []string{"nonl.txt"}, "offset": 3}, []string{"the file has 2 lines"}, nil},
		{"folder", m{"paths": []string{"src"}}, []string{"==> src/ (folder, 2 entries) <==\nmain.go (13 bytes)\nsub/"}, nil},
		{"workdir hides its reserved folder", m{"paths": []string{"."}}, []string{"==> ./ (folder,", "a.txt (17 bytes)", "src/"}, []string{".toolround"}},
		{"several files, one missing", m{"paths": []string{"a.txt", "nope.txt", "src/main.go"}},
			[]string{"     1\talpha", "==> nope.txt <==\nerror: no such file or folder; find files with find_files", "==> src/main.go (13 bytes, 1 line) <=="}, nil},
		{"a repeated path is read once", m{"paths": []string{"a.txt", "a.txt"}}, []string{"alpha"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.ok("read_files", tc.args).Content
			for _, w := range tc.want {
				require.Contains(t, got, w)
			}
			for _, n := range tc.not {
				require.NotContains(t, got, n)
			}
		})
	}
	got := e.ok("read_files", m{"paths": []string{"a.txt", "a.txt"}}).Content
	require.Equal(t, 1, strings.Count(got, "==> a.txt"))

	err := e.fail("read_files", m{"paths": []string{"nope.txt", "../x"}})
	require.Contains(t, err.Error(), "nope.txt: no such file or folder")
	require.Contains(t, err.Error(), "../x: path \"../x\" is outside the workdir")

	require.NoError(t, syscall.Mkfifo(e.abs("pipe"), 0o644))
	fifo := make(chan error, 1)
	go func() {
		_, err := e.callRaw("read_files", rawArgs(t, m{"paths": []string{"pipe"}}))
		fifo <- err
	}()
	select {
	case err := <-fifo:
		require.ErrorContains(t, err, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("read_files blocked on a FIFO")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.defs["read_files"].Handler(ctx, tools.Request{Args: rawArgs(t, m{"paths": []string{"a.txt"}})})
	require.ErrorIs(t, err, context.Canceled)
}

func TestReadCaps(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.MaxFileBytes = 200
		c.MaxReadBytes = 400
		c.MaxListEntries = 3
	})
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	e.write("big.txt", b.String())
	e.write("small.txt", "small\n")
	e.write("long.txt", "x"+strings.Repeat("é", 500)+"\nnext\n")
	for i := range 5 {
		e.write(fmt.Sprintf("many/f%d", i), "x")
	}

	got := e.ok("read_files", m{"paths": []string{"big.txt"}}).Content
	require.Contains(t, got, "==> big.txt (900 bytes; lines 1-12 shown) <==")
	require.Contains(t, got, "    12\tline 012\n[truncated at the 200-byte limit: continue with offset=13]")
	require.NotContains(t, got, "line 013")

	got = e.ok("read_files", m{"paths": []string{"big.txt"}, "offset": 13}).Content
	require.Contains(t, got, "    13\tline 013")

	got = e.ok("read_files", m{"paths": []string{"big.txt", "small.txt", "long.txt"}}).Content
	require.Contains(t, got, "     1\tsmall")
	require.Contains(t, got, "==> long.txt <==\n(not read: this call reached its output limit of 400 bytes; read it in another call)")

	got = e.ok("read_files", m{"paths": []string{"long.txt"}}).Content
	require.Contains(t, got, "[truncated: line 1 is longer than the 200-byte limit and only its start is shown; the next line is offset=2]")
	line := strings.Split(got, "\n")[1]
	require.True(t, strings.HasPrefix(line, "     1\t"))
	require.LessOrEqual(t, len(line), 200)
	require.True(t, utf8.ValidString(line), "cut at a character boundary")
	require.Contains(t, e.ok("read_files", m{"paths": []string{"long.txt"}, "offset": 2}).Content, "     2\tnext")

	got = e.ok("read_files", m{"paths": []string{"many"}}).Content
	require.Contains(t, got, "(folder, 5 entries)")
	require.Contains(t, got, "[2 more entries not listed")
}

func TestReadLine(t *testing.T) {
	require.True(t, isBinary([]byte("a\x00b"), false))
	require.False(t, isBinary([]byte("plain"), false))
	require.False(t, isBinary([]byte("caf\xc3"), true), "a character cut at the end of a sample")
	require.True(t, isBinary([]byte("caf\xc3"), false))
}

func TestReadFilesReportsTheRelativePathsItRead(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "alpha\n")
	e.write("src/b.txt", "beta\n")
	res := e.ok("read_files", m{"paths": []string{e.wd.Dir() + "/a.txt", "./src/../src/b.txt", "missing.txt", "a.txt"}})
	require.Equal(t, []string{"a.txt", "src/b.txt", "missing.txt"}, res.Read,
		"pass 3 matches these against later changes (P3.3)")
}
