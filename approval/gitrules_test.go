package approval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitWriteRules approve git and the programs that copy, move and write
// files; none of them names a program that could run another.
var gitWriteRules = cmdRules("git *", "cp *", "mv *", "tee *", "cat *", "echo *", "mkdir *", "ln *", "touch *", "ls *", "rm *", "install *")

// gitDirWrites never match under gitWriteRules.
var gitDirWrites = []string{
	// the finding: a bare repository whose config the script writes
	"git init --bare gd; git hash-object -w evil; git cat-file -p 1234 > gd/config; git -C gd fetch",
	"git cat-file -p 1234 > gd/config", "git show HEAD:evil >> gd/config", "echo '[core]' > x/config",
	"git show HEAD:evil > gd/config.worktree", "echo ../x > gd/commondir", "echo x > gd/HEAD", "echo x > gd/gitdir",
	"cp evil gd/config", "cp evil gd/CONFIG", "mv evil gd/config", "ln -s ../evil gd/config", "install evil gd/config",
	"tee gd/config < evil", "tee -a gd/config", "cat evil > gd/config", "cp -r evil gd/hooks", "mkdir gd/hooks",
	"mkdir -p gd/hooks", "cp evil gd/hooks/pre-commit", "tee gd/hooks/post-checkout", "tee .git/hooks/pre-commit",
	"mv x gd/hooks/", "cp evil gd/config/", "cp evil gd/./config", "mv evil gd/HEAD", "ln -s x gd/HEAD",
	"echo x | tee gd/hooks/fsmonitor-watchman", "cp evil sub/gd/hooks/pre-push", "touch gd/hooks/pre-commit",
	// separate and explicit git directories
	"git init --separate-git-dir=gd w", "git init --separate-git-dir gd w", "git init --sep=gd w",
	"git clone --separate-git-dir=gd a b", "git --git-dir=gd status", "git --git-dir gd status", "git --bare log",
	"git -C gd --bare fetch", "git --work-tree=. status", "GIT_DIR=gd git status", "env GIT_DIR=gd git status",
	"GIT_WORK_TREE=. git status", "env -i git status", "env -i GOOS=linux git status", "env -u GIT_CONFIG_COUNT git status",
	"env --unset=GIT_CONFIG_GLOBAL git status", "env -uGIT_CONFIG_NOSYSTEM git status", "env --ignore-environment git status",
	// settings and options that name a program
	"git -c core.sshCommand='touch X' fetch", "git -c core.fsmonitor='touch X' status", "git config core.fsmonitor 'touch X'",
	"git config --local core.fsmonitor 'touch X'", "git config --global core.hooksPath .", "git -c alias.x='!sh' x",
	"git difftool -x sh", "git log --output=gd/config", "git archive --remote=ext::sh HEAD", "git archive --remote 'ext::sh -c x' HEAD",
	"git clone ext::sh", "git clone 'ext::sh -c touch% X' d", "git fetch 'ext::sh -c x'", "git remote add o ext::sh",
	"git remote add o 'fd::3'", "git submodule foreach touch X", "git submodule update", "git pull --upload-pack=x",
	"git fetch --upload-pac=x", "git config --file gd/config core.fsmonitor x", "git config -f gd/config --get x",
	"git mergetool", "git -c core.hooksPath=. commit", "git --exec-path=. status",
}

// TestRulesNeverWriteAGitDirectory: under rules, no command writes the
// config, HEAD or hooks of any git directory (not only one named .git), nor
// uses a git directory that git did not discover as the workdir's own, nor
// passes git an option or setting that names a program (T4).
func TestRulesNeverWriteAGitDirectory(t *testing.T) {
	requireNoneMatch(t, gitWriteRules, gitDirWrites)
	// What these rules are for still matches.
	requireAllMatch(t, gitWriteRules, []string{
		"git status", "git diff HEAD", "git log HEAD~1", "git reset HEAD a.go", "git diff HEAD~1", "git log main~2..HEAD", "git config --get user.name",
		"git -C sub status", "git init", "git init --bare gd", "git clone https://example.com/x.git",
		"cp a.go b.go", "cat config/app.yml", "cat src/hooks/useThing.ts", "mkdir -p src/hooks/auth",
		"echo x > out/config.yml", "git show HEAD:a.go > a.orig", "tee notes.txt", "cat src/config.go",
	})
}

// TestExpandingWordsCheckedAsEveryName: a word the shell expands (a glob,
// a bracket, a brace list, a tilde) is checked against the key-file and git
// rules as every name it could become; it matches a pattern only through
// its final `*` (T4).
func TestExpandingWordsCheckedAsEveryName(t *testing.T) {
	requireNoneMatch(t, gitWriteRules, []string{
		// the findings
		"cat .en?", "cp evil repo/.gi?/config",
		// the same through other globs, brackets, braces and tildes
		"cat .e*", "cat .[e]nv", "cat .[a-z]nv", "cat .[!x]nv", "cat .e{nv,x}", "cat {.env,x}", "cat .en{u..w}",
		"cat *", "cat ./*", "cat src/*", "cat secrets.*", "cat *.pem", "cat *.json", "cat id_*", "cat k?y.pem",
		"cat ?env", "cat .ss?/id_rsa", "cat .ssh/*", "cat .s*/x", "cat .aws/cred*", "cat x/.k*/config",
		"cat .config/gclou?/x", "cat .con*/gcloud/x", "cat ~/.en?", "cat ~/.ssh/id_rsa", "cat ~root/x", "cat ~+/x",
		"cp evil repo/.g*/config", "cp evil repo/.GI?/config", "cp evil repo/.[g]it/config", "cp evil repo/.gi{t,x}/config",
		"cp evil {repo/.git,x}/config", "cp evil gd/confi?", "cp evil gd/*", "cp evil gd/c*g", "cp evil gd/HEA?",
		"cp evil gd/hook?/pre-commit", "cp evil gd/h*/pre-commit", "cp evil gd/hooks/pre-*", "cp evil gd/{config,x}", "cp -r evil gd/hoo[k]s",
		"echo x > .en?", "echo x > gd/confi?", "ls .g*", "ls .git*", "rm -rf .gi?", "cp x .gi?/hooks/pre-commit",
		"cat '.en'?", "cat .\\e*", "cat \".e\"*",
		// a glob over any name could be secrets.go or credentials.json
		"cat src/*.go", "ls *.go", "rm -f build/*.o", "cat doc/*.md",
	})
	requireAllMatch(t, gitWriteRules, []string{
		"cat '*'.go", "cat \\*", "echo {a,b}", "echo a{1,2}.go", "ls ~", "ls ~/src", "ls src/[a-c].go", "ls ?.txt",
		"cat src/x_[0-9].go", "rm -f build/?.o",
	})
}

// TestInterpreterRulesNeverRunStdin: a rule for an interpreter alone never
// approves a program fed to it on stdin, and a shell pattern must name a
// script (T4).
func TestInterpreterRulesNeverRunStdin(t *testing.T) {
	rules := cmdRules("python", "python3", "node", "perl", "ruby", "echo *", "cat *", "python3 *", "node *", "awk *", "make *")
	requireNoneMatch(t, rules, []string{
		"echo 'import os' | python", "python < f.py", "python - < f.py", "python3 - < f.py", "cat f | python3 -",
		"echo x | node", "node < f.js", "perl < f.pl", "ruby <<EOF\nputs 1\nEOF", "python 0< f.py", "python <&3",
		"echo x | env python", "echo x | timeout 5 python", "echo x | { python; }", "echo x | (python)",
		"cat f | python3 /dev/stdin", "cat f | node /dev/fd/0", "echo x | awk -f -", "echo x | awk -f /dev/stdin",
		"echo all: | make -f -", "cat f | python3 -i", "python3 <> f.py", "echo x | nice python",
	})
	requireAllMatch(t, rules, []string{
		"python", "echo x | python3 tool.py", "echo x | awk '{print}'", "cat f | node tool.js", "make build",
		"python3 -c 'print(1)'",
	})
	shRules := cmdRules("bash build.sh", "sh ci.sh", "echo *", "cat *")
	requireNoneMatch(t, shRules, []string{
		"echo 'rm -rf x' | bash build.sh -s", "bash < build.sh", "echo x | sh", "cat build.sh | bash", "bash <<EOF\nx\nEOF",
		"sh < ci.sh", "echo x | bash -s", "echo x | sh -c 'bash'", "echo x | sh -c 'cat | sh'",
	})
	requireAllMatch(t, shRules, []string{"bash build.sh", "echo x | bash build.sh"}) // build.sh is the program; stdin its data
	var accepted []string
	for _, p := range []string{"bash", "sh", "dash", "bash -x", "sh -s", "bash -", "sh /dev/stdin", "bash -c"} {
		if validateTool("run_command", p) == nil {
			accepted = append(accepted, p)
		}
	}
	require.Empty(t, accepted, "shell patterns without a script")
}

// requireNoneMatch fails with every script of scripts that rules approve.
func requireNoneMatch(t *testing.T, rules []Rule, scripts []string) {
	t.Helper()
	var approved []string
	for _, s := range scripts {
		if matcher(rules, "run_command", cmdArgs(s)) {
			approved = append(approved, s)
		}
	}
	require.Empty(t, approved, "approved %d of %d", len(approved), len(scripts))
}

// requireAllMatch fails with every script of scripts that rules refuse.
func requireAllMatch(t *testing.T, rules []Rule, scripts []string) {
	t.Helper()
	var refused []string
	for _, s := range scripts {
		if !matcher(rules, "run_command", cmdArgs(s)) {
			refused = append(refused, s)
		}
	}
	require.Empty(t, refused, "refused %d of %d", len(refused), len(scripts))
}

// TestExpandingWordLimits: a long or wide expanding word is taken as any
// name, quickly.
func TestExpandingWordLimits(t *testing.T) {
	long := "cat " + strings.Repeat("a*", 3000)
	wide := "cat " + strings.Repeat("{a,b}", 12)
	requireNoneMatch(t, gitWriteRules, []string{long, wide})
	// Nested braces become names with braces in them, never a key file.
	requireAllMatch(t, gitWriteRules, []string{"cat x{a,b}{c,d}.go", "cat " + strings.Repeat("{", 500) + "a,b" + strings.Repeat("}", 500)})
}
