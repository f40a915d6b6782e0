package approval

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// diffVocab is what TestShellsRunOnlyWhatWasApproved builds scripts from:
// allowed commands, forbidden ones, and the syntax where the parser and a
// real shell might read the same text differently.
var diffVocab = []string{
	"git status", "ls", "cat", "#", "# x", "\\\n", "\n", ";", "&&", "||", "'", "\"", "<<EOF", "<<'EOF'", "<<-EOF",
	"EOF", "\tEOF", "\t", " ", "touch X", "echo PWNED", "$(", ")", "`", "\\", "{", "}", "(", "|", "&", ">", "x", "\r", "\\#",
	"<<E\\OF", "<<\"EOF\"", "${", "$", "!", "if", "then", "fi", "do", "done", "while", "case", "esac", "in", "--", "=", "a=b",
	"\\'", "\\\"", "<<", "<", "\\\r\n", "#!", " #", "$#", "${#}", "$'\\n'", "\\\\", ";;", "ls # \\", "git status #\\", "\n#",
	"sh -c '", "bash -c \"", "env ", "timeout 1 ", "nice ", "nohup ", "time ", "sh -c 'touch X'", "sh -c \"echo PWNED\"",
	"'touch X'", "\"echo PWNED\"", "t''ouch X", "\\touch X", "2>&1", ">/dev/null", "> out", "! ", "$((1))", "~", "*", "?",
	"[", "]", "{a,b}", "=(", "((", "))", "[[", "]]", "-c", "-e", "x=1", "PATH=.", "\\\\\n", "<<<", "&>", "|&", ">&", "<&",
	"<<EOF\nx\nEOF\n", "<<'E'\n", "\nE\n", "cat <<EOF", "EOF\n", "'\\''", "\"\\\"\"", "\\\n#", "sh -ec '", "bash -c '",
	"'\"'\"'", "x\\ y", "-n", "5", "-u", "PATH", "-i", "-s", "KILL", "-k", "<<-'EOF'\n\tx\n\tEOF\n", "\t#", "2>", "0<",
}

// TestShellsRunOnlyWhatWasApproved runs, under dash and bash, every
// generated script that the rules `git *`, `ls *` and `cat *` approve, with
// a PATH of stand-ins, and fails when the shell runs `touch` or prints from
// `echo PWNED`: the parser's reading and the shell's must agree. The
// disagreements it found (comments ending in a backslash, carriage
// returns, &>) are refused in plainText and redirectOK. SHELL_DIFF_N sets
// how many scripts (default 20000), SHELL_DIFF_SEED the seed.
func TestShellsRunOnlyWhatWasApproved(t *testing.T) {
	if testing.Short() {
		t.Skip("runs shells")
	}
	shells := []string{}
	for _, sh := range []string{"/bin/dash", "/bin/bash"} {
		if _, err := os.Stat(sh); err == nil {
			shells = append(shells, sh)
		}
	}
	if len(shells) == 0 {
		t.Skip("no dash or bash")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{bin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"git", "ls", "cat"} {
		write(p, "#!/bin/sh\necho \"RAN:"+p+" $*\" >> \"$LOGF\"\n")
	}
	write("time", "#!/bin/sh\nwhile [ \"$1\" = \"-p\" ]; do shift; done\n[ \"$1\" = \"--\" ] && shift\nexec \"$@\"\n")
	for _, p := range []string{"env", "nohup", "nice", "timeout"} {
		if real, err := exec.LookPath(p); err == nil {
			_ = os.Symlink(real, filepath.Join(bin, p))
		}
	}
	for _, sh := range shells {
		_ = os.Symlink(sh, filepath.Join(bin, filepath.Base(sh)))
	}
	_ = os.Symlink(shells[0], filepath.Join(bin, "sh"))

	n, _ := strconv.Atoi(os.Getenv("SHELL_DIFF_N"))
	if n <= 0 {
		n = 20000
	}
	seed, err := strconv.ParseInt(os.Getenv("SHELL_DIFF_SEED"), 10, 64)
	if err != nil {
		seed = 1
	}
	r := rand.New(rand.NewSource(seed))
	rules := cmdRules("git *", "ls *", "cat *")
	ran := 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j, k := 0, 2+r.Intn(13); j < k; j++ {
			b.WriteString(diffVocab[r.Intn(len(diffVocab))])
			if r.Intn(2) == 0 {
				b.WriteString(" ")
			}
		}
		s := b.String()
		if !strings.Contains(s, "touch X") && !strings.Contains(s, "echo PWNED") || !matchTool(rules, "run_command", cmdArgs(s)) {
			continue
		}
		for _, sh := range shells {
			ran++
			_ = os.Remove(filepath.Join(work, "X"))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			cmd := exec.CommandContext(ctx, sh, "-c", s)
			cmd.Dir = work
			cmd.Env = []string{"PATH=" + bin, "LOGF=" + filepath.Join(dir, "log")}
			out, _ := cmd.CombinedOutput()
			cancel()
			for _, line := range strings.Split(string(out), "\n") {
				if strings.TrimSpace(line) == "PWNED" || strings.Contains(line, "touch: not found") || strings.Contains(line, "touch: command not found") {
					t.Errorf("%s ran what was not approved: %q\n%s", sh, s, out)
				}
			}
			if _, err := os.Stat(filepath.Join(work, "X")); err == nil {
				t.Errorf("%s created X: %q", sh, s)
			}
		}
	}
	t.Logf("%d approved runs", ran)
}

// TestWordValuesAgreeWithShells: the value evalWord gives a word is the
// argument dash and bash pass to a program, so that `sh -c WORD` is checked
// on the script the shell really runs.
func TestWordValuesAgreeWithShells(t *testing.T) {
	if testing.Short() {
		t.Skip("runs shells")
	}
	chars := []string{"a", "b", "\\", "\"", "'", "\\\\", "\\\"", "\\'", "\\n", "\n", " ", "#", "*", "~", "{", "}", ",", "\\\n", "\t", "-", "=", "!", ";", "|", "&", "(", ")", "<", ">", "?", "[", "]", ":", "%", "^"}
	n, _ := strconv.Atoi(os.Getenv("SHELL_DIFF_N"))
	if n <= 0 {
		n = 400
	}
	seed, err := strconv.ParseInt(os.Getenv("SHELL_DIFF_SEED"), 10, 64)
	if err != nil {
		seed = 7
	}
	r := rand.New(rand.NewSource(seed))
	checked := 0
	for i := 0; i < 20*n && checked < n; i++ {
		var b strings.Builder
		for j, k := 0, 1+r.Intn(8); j < k; j++ {
			b.WriteString(chars[r.Intn(len(chars))])
		}
		src := "printf '[%s]' " + b.String()
		if !plainText(src) {
			continue
		}
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) > 0 {
			continue
		}
		call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) != 3 || len(call.Assigns) > 0 {
			continue
		}
		w, ok := evalWord(call.Args[2])
		if !ok || w.expands {
			continue
		}
		checked++
		for _, sh := range []string{"/bin/dash", "/bin/bash"} {
			if _, err := os.Stat(sh); err != nil {
				continue
			}
			out, err := exec.Command(sh, "-c", src).Output()
			if err != nil {
				t.Errorf("%s %q: %v", sh, src, err)
				continue
			}
			if string(out) != "["+w.val+"]" {
				t.Errorf("%s reads %q as %q, evalWord as %q", sh, b.String(), out, "["+w.val+"]")
			}
		}
	}
	t.Logf("%d words checked", checked)
}
