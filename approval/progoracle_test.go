package approval

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
)

// runIn runs a command with sh in dir, stdin empty, for at most 10s.
func runIn(dir, cmd string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir, c.Stdin = dir, strings.NewReader("")
	_ = c.Run()
}

// entries are the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestFindAndSplitRulesNeverRunAProgram: findutils and coreutils
// themselves are the oracles. Every generated find and split command
// that `find *` or `split *` matches is run in a folder inside another;
// none runs `touch RAN`, and none writes beside the folder.
func TestFindAndSplitRulesNeverRunAProgram(t *testing.T) {
	for _, p := range []string{"find", "split"} {
		if _, err := exec.LookPath(p); err != nil {
			testenv.Unavailable(t, "no %s on PATH", p)
		}
	}
	outer := t.TempDir()
	dir := filepath.Join(outer, "w")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("1\n2\n3\n"), 0o644))
	run := "'sh -c \"touch RAN\"'"
	find := []string{"-exec", "-execdir", "-ok", "-okdir", "-exe", "sh", "-c", "'touch RAN'", "';'", "+", "{}", "-name", "a.txt", "-type",
		"f", "-print", "-fprint", "../out", "out2", "-fprintf", "-fls", "-printf", "%p", "-o", "!", "-maxdepth", "1", "-newer",
		"a.txt", "-D", "exec", "-files0-from", "-", "-H", "-L", "sub", ".", "-delete", "-path", "'*'"}
	split := []string{"--filter=" + run, "--filter", run, "--fil=" + run, "--f=" + run, "--fi=" + run, "-l", "1", "--lines=1",
		"-b", "1", "-n", "2", "a.txt", "p.", "../p.", "-d", "--verbose", "--additional-suffix=.x", "-a", "3", "-e", "-"}
	r := rand.New(rand.NewSource(13))
	matched := 0
	for k := 0; k < 3000; k++ {
		prog, words, rule := "find", find, "find *"
		if k%2 == 1 {
			prog, words, rule = "split", split, "split *"
		}
		cmd := prog
		for j := 0; j < 1+r.Intn(6); j++ {
			cmd += " " + words[r.Intn(len(words))]
		}
		if !matchAt(TablesV2, cmdRules(rule), cmd) {
			continue
		}
		matched++
		runIn(dir, cmd)
		require.NoFileExists(t, filepath.Join(dir, "RAN"), "%q ran a program", cmd)
		require.Equal(t, []string{"w"}, entries(t, outer), "%q wrote beside the folder", cmd)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("1\n2\n3\n"), 0o644)) // -delete
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	}
	require.Greater(t, matched, 100)
	// The oracle sees the probes.
	runIn(dir, "split -l 1 --fil="+run+" a.txt")
	require.FileExists(t, filepath.Join(dir, "RAN"))
}

// TestMakeRuleRunsOnlyTheMakefile: GNU make itself is the oracle. A rule
// over make is consent to run the Makefile, never code the command's own
// words bring: every generated make command that `make *` matches is run
// beside a Makefile that runs nothing; none runs `touch RAN`.
func TestMakeRuleRunsOnlyTheMakefile(t *testing.T) {
	if v, err := exec.Command("make", "--version").Output(); err != nil || !strings.Contains(string(v), "GNU Make") {
		testenv.Unavailable(t, "no GNU make on PATH")
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	mk := "build:\n\t@echo ok\nall: build\n"
	for _, f := range []string{"Makefile", "sub/Makefile", "other.mk"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(mk), 0o644))
	}
	shell := "'$(shell touch RAN)'"
	words := []string{"--eval=x:=" + shell, "--eval", "x:=" + shell, "-E", "--ev=x:=" + shell, "--e=x:=" + shell,
		"X=" + shell, "SHELL=/bin/sh", "'.SHELLFLAGS=-c touch RAN;'", "build", "all", "-n", "-j2", "-j", "-C", "sub", "-k",
		"-s", "--debug", "-p", "-f", "other.mk", "--file=other.mk", "/dev/stdin", "-I", ".", "--include-dir=.", "-B",
		"-W", "build", "--what-if=build", "-e", "-r", "-R", "--trace", "-q", "-i", "-o", "build"}
	rules := cmdRules("make *")
	r := rand.New(rand.NewSource(17))
	matched := 0
	for k := 0; k < 700; k++ {
		cmd := "make"
		for j := 0; j < r.Intn(5); j++ {
			cmd += " " + words[r.Intn(len(words))]
		}
		if !matchAt(TablesV2, rules, cmd) {
			continue
		}
		matched++
		runIn(dir, cmd)
		require.NoFileExists(t, filepath.Join(dir, "RAN"), "%q ran code of its own words", cmd)
		require.NoFileExists(t, filepath.Join(dir, "sub", "RAN"), "%q ran code of its own words", cmd)
	}
	require.Greater(t, matched, 50)
	runIn(dir, "make --ev=x:="+shell+" build")
	require.FileExists(t, filepath.Join(dir, "RAN"), "the oracle sees --eval")
}
