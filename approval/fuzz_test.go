package approval

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// overMatchForms join an allowed command (%[1]s) and a forbidden one
// (%[2]s) through every connector, substitution and wrapper form.
var overMatchForms = []string{
	"%s; %s", "%s\n%s", "%s && %s", "%s || %s", "%s | %s", "%s & %s", "%s |& %s", "%[2]s; %[1]s",
	"%s $(%s)", "%s `%s`", "%s <(%s)", "%s >(%s)", "%s ${x:-$(%s)}", "%s \"$(%s)\"", "%s \"${x:=`%s`}\"",
	"%s; ( %s )", "%s; { %s; }", "%s; sh -c '%s'", "%s; bash -c \"%s\"", "sh -c '%s; %s'", "bash -ec \"%s && %s\"",
	"%s && env X=1 %s", "%s; timeout 5 %s", "%s; nice -n 5 %s", "%s; nohup %s", "%s; time %s", "%s; env -i %s",
	"if %s; then %s; fi", "if %[2]s; then %[1]s; fi", "while %s; do %s; done", "%s; if true; then :; else %s; fi",
	"%s <<EOF\n$(%s)\nEOF", "%s <<EOF\n`%s`\nEOF", "%s; eval '%s'", "%s | xargs %s", "%s; exec %s", "%s; command %s",
	"! %s || %s", "%s > $(%s)", "%s 2>&1 | sh -c '%s'", "%s; x=$(%s)", "%s && for i in 1; do %s; done",
	"case a in a) %s;; esac; %s", "%s; f() { %s; }; f", "%s; coproc %s", "%s; [[ $(%s) ]]", "%s; echo $((`%s`))",
	"%s; sh -c \"sh -c '%s'\"", "timeout 5 sh -c '%s || %s'", "%s\r\n%s", "%s;%s", "%s&&%s", "%s||%s", "%s|%s",
}

var forbiddenForms = []string{
	"touch PWNED", "t''ouch PWNED", "\\touch PWNED", "\"touch\" PWNED", "/usr/bin/touch PWNED", "X=1 touch PWNED",
	"touch PWNED # git status", "to\\\nuch PWNED",
}

var fuzzRules = cmdRules("git *", "ls *", "go test ./...")

// tabledRules reach every kind of table, for panics.
var tabledRules = cmdRules("tar *", "sed *", "git *", "grep *", "find *", "go *", "make *", "npm *", "python3 *", "sort *", "split *", "printf *", "test *", "cd *")

// FuzzRuleNeverOverMatches: a script that joins an allowed command with
// `touch PWNED` through any form is never approved by rules that do not
// name touch (T4); and no input makes the matcher panic. An approved
// arbitrary script names, in every command the parser shows, only a program
// the rules or the wrappers name.
func FuzzRuleNeverOverMatches(f *testing.F) {
	f.Add("status", uint8(0), uint8(0), "git status")
	f.Add("log -5", uint8(8), uint8(1), "git $(touch PWNED)")
	f.Add("-la src", uint8(30), uint8(2), "ls ; touch X #.txt")
	f.Add("", uint8(17), uint8(3), "sh -c 'git status' && ls")
	f.Add("x", uint8(255), uint8(255), "cat <<EOF\n$(touch X)\nEOF")
	// git directories, expanding words and stdin scripts (issue 32)
	for _, s := range []string{
		"git init --bare gd; git hash-object -w evil; git cat-file -p 1234 > gd/config; git -C gd fetch",
		"git --git-dir=x status", "git -c core.sshCommand=x fetch", "git config core.fsmonitor x",
		"git init --separate-git-dir=x w", "GIT_DIR=x git status", "git -C sub status", "ls repo/.gi?/config",
		"ls > .git/hooks/pre-commit", "git submodule foreach sh", "git -c alias.x='!sh' x", "git difftool -x sh",
		"git log --output=x", "git archive --remote=ext::sh HEAD", "git clone ext::sh", "ls .en?", "ls .e{nv,x}",
		"ls ~/.ss?/id_rsa", "ls gd/confi?", "ls gd/hoo[k]s/pre-commit", "ls | sh", "ls | bash -s", "bash < x",
		"sh <<EOF\nls\nEOF", "ls | env sh", "env -i git status", "git --bare log", "ls x > gd/HEAD",
		// the option tables (T11)
		"tar xIf 'sh -c id' a.tar", "sed 's/a/b/e' x", "git config a.b c get", "find . -fprintf x '%p' -name y",
		"go test -run=X -count=1 ./...", "make -j4 -C sub build", "npm run x -- --y", "sed -e '1{' -e 'p;}' x",
	} {
		f.Add("status", uint8(0), uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, allowed string, form, variant uint8, raw string) {
		good := []string{"git ", "ls ", "go test ./..."}[int(form)%3]
		if good != "go test ./..." {
			good += sanitizeWords(allowed)
		}
		script := fmt.Sprintf(overMatchForms[int(form)%len(overMatchForms)], strings.TrimSpace(good), forbiddenForms[int(variant)%len(forbiddenForms)])
		for _, tables := range []int{TablesLegacy, TablesV2} {
			if _, ok := which(tables, fuzzRules, KindCommand, "run_command", cmdArgs(script)); ok {
				t.Fatalf("approved %q (tables %d)", script, tables)
			}
		}

		// Arbitrary input: no panic anywhere, and an approval is consistent
		// with an independent walk of the parsed script.
		_ = validateTool("run_command", raw)
		_ = validateTool("http_request", raw)
		_ = validateTool("edit_file", raw)
		_ = validateTool("download_file", raw)
		for _, tool := range []string{"edit_file", "http_request", "download_file", "read_files"} {
			_, _ = which(TablesV2, []Rule{{Tool: tool, Pattern: "**"}, {Tool: tool, Pattern: "GET https://x.com/*"}}, kindOf(tool), tool, raw)
		}
		_, _ = which(TablesV2, []Rule{{Tool: "run_command", Pattern: raw}}, KindCommand, "run_command", cmdArgs("git status"))
		_ = ReadOnlyCommand(raw)
		_, _ = which(TablesV2, tabledRules, KindCommand, "run_command", cmdArgs(raw))
		for _, tables := range []int{TablesLegacy, TablesV2} {
			if _, ok := which(tables, fuzzRules, KindCommand, "run_command", cmdArgs(raw)); !ok {
				continue
			}
			// The tool sees the command as JSON decodes it (invalid UTF-8
			// becomes U+FFFD), and so does the matcher.
			var seen struct{ Command string }
			if err := json.Unmarshal([]byte(cmdArgs(raw)), &seen); err != nil {
				t.Fatal(err)
			}
			checkApprovedScript(t, seen.Command)
		}
	})
}

func sanitizeWords(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" ./_-", r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var approvedNames = setOf("git", "ls", "go", "true", "false", ":", "set", "env", "timeout", "nice", "nohup", "time", "sh", "bash", "dash")

func checkApprovedScript(t *testing.T, script string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatalf("approved a script that does not parse: %q", script)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.FuncDecl:
			t.Fatalf("approved %q with a %T", script, n)
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			w, ok := evalWord(n.Args[0])
			if !ok || !approvedNames[path.Base(w.val)] {
				t.Fatalf("approved %q that runs %q", script, w.val)
			}
			for _, a := range n.Args[1:] {
				checkApprovedWord(t, script, a)
			}
		case *syntax.Redirect:
			if n.Word != nil {
				checkApprovedWord(t, script, n.Word)
			}
		case *syntax.BinaryCmd:
			// A shell on the right of a pipe reads its script from it.
			if n.Op == syntax.Pipe {
				if ce, ok := n.Y.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
					w, _ := evalWord(ce.Args[0])
					if shells[path.Base(w.val)] && !strings.Contains(script, "-c") && !strings.Contains(script, "c ") {
						t.Fatalf("approved %q that feeds a shell its script", script)
					}
				}
			}
		}
		return true
	})
}

// guardedNames are names no approved word may be or become: keys, and the
// files of a git directory that name programs.
var guardedNames = []string{".env", ".git/config", "repo/.git/config", ".git/hooks/pre-commit", "gd/config",
	"gd/hooks/pre-commit", "gd/config.worktree", "secrets.go", "credentials", ".ssh/id_rsa", "x/.aws/config"}

// checkApprovedWord is an independent look at one word of an approved
// script: path.Match stands for the shell's globbing.
func checkApprovedWord(t *testing.T, script string, a *syntax.Word) {
	w, ok := evalWord(a)
	if !ok {
		return
	}
	v := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(w.val, "~/"), "./"))
	for _, g := range guardedNames {
		if v == g || strings.HasSuffix(v, "/"+g) {
			t.Fatalf("approved %q that names %q", script, g)
		}
		if w.expands && !strings.ContainsAny(w.val, "{\\") {
			if m, _ := path.Match(v, g); m {
				t.Fatalf("approved %q whose %q can be %q", script, w.val, g)
			}
		}
	}
}
