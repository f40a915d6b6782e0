package approval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of T11: a pattern over a program matches only what the
// program's table classifies. Each case was found approved by the matcher
// of TablesLegacy (the probes), or is a variant of one.

func matchAt(tables int, rules []Rule, script string) bool {
	return MatchAt(tables, rules, KindCommand, "run_command", cmdArgs(script))
}

// tablesApproved are the scripts of scripts that rules approve with tables.
func tablesApproved(tables int, rules []Rule, scripts []string) []string {
	var out []string
	for _, s := range scripts {
		if matchAt(tables, rules, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestTablesRefuseTheProbes: every probe and its variants, under the rule
// over its program, asks with the tables (T11). TablesLegacy approved
// some of each group.
func TestTablesRefuseTheProbes(t *testing.T) {
	for _, p := range tableProbes {
		require.Empty(t, tablesApproved(TablesV2, cmdRules(p.rule), p.scripts), "under %q", p.rule)
	}
	legacy := 0
	for _, p := range tableProbes {
		legacy += len(tablesApproved(TablesLegacy, cmdRules(p.rule), p.scripts))
	}
	require.Greater(t, legacy, 100, "the legacy matcher approved these")
}

// TestTablesMatch: ordinary commands of tabled programs still match.
func TestTablesMatch(t *testing.T) {
	cases := []struct {
		rule    string
		scripts []string
	}{
		{"git *", []string{"git status", "git status --porcelain=v1", "git status -sb", "git log --oneline -5", "git log -n 3 --stat",
			"git diff", "git diff --cached --stat", "git diff HEAD~1 -- src", "git show HEAD --stat", "git -C sub status",
			"git --no-pager log", "git config --get user.name", "git config -l", "git config --list --show-origin",
			"git config --get-regexp '^remote'", "git config --get-all remote.origin.url", "git config --get core.pager x",
			"git rev-parse --abbrev-ref HEAD", "git rev-parse --show-toplevel", "git branch -a", "git branch --show-current",
			"git ls-files -m", "git add -u", "git add -A", "git add src/a.go", "git commit -m 'a message'", "git commit -am x",
			"git blame -L 1,5 a.go", "git show HEAD:src/a.go", "git diff HEAD:a.go b.go", "git describe --tags --always", "git log --format=%H -1", "git log -L1,5:a.go", "git log -L :main:src/a.go", "git log --pretty=oneline"}},
		{"tar *", []string{"tar xzf a.tgz", "tar -xzf a.tgz", "tar tf a.tar", "tar tvf a.tar", "tar xf h:a.tar --force-local",
			"tar --extract --file a.tar", "tar --ext --file=a.tar", "tar --extr --verbo --gunz --file=a.tar", "tar xf a.tar -C out", "tar -x -f a.tar -C out --strip-components=1",
			"tar xjf a.tbz", "tar -tzf a.tgz", "tar xf a.tar --exclude='*.md'", "tar -xvf a.tar"}},
		{"split *", []string{"split -l 10 a part.", "split -b 1M a", "split --lines=5 a"}},
		{"sort *", []string{"sort -u a", "sort -o out.txt a", "sort -k 2,2 -t , a", "sort --rev a", "sort -n -r a b"}},
		{"grep *", []string{"grep -n foo a.go", "grep -E 'a|b' src/x.go", "grep -c x a", "grep --count x a", "grep --cou x a",
			"grep -e a -e b a", "grep -i -- -x a", "grep -A 2 x a", "grep -C2 x a", "grep -l x a b", "grep --color=never x a"}},
		{"sed *", []string{"sed 's/a/b/g' a", "sed -n '1,5p' a", "sed -E 's/(a)/\\1/' a", "sed '/x/d' a", "sed -i 's/a/b/' a.go",
			"sed -e 's/a/b/' -e '/c/d' a", "sed '1i\\\nhello' a", "sed '$!N;s/\\n/ /' a", "sed 'y/abc/xyz/' a",
			"sed -n '/start/,/end/{p;}' a", "sed 's|/usr|/opt|2' a", "sed '1~2d' a", "sed '$d' a", "sed = a", "sed 's/a/b/I' a",
			"sed -n 'l 40' a", "sed 'q5' a"}},
		{"find *", []string{"find . -name '*.go'", "find src -type f -print", "find . -fprint out.txt", "find . -maxdepth 1 -type d",
			"find . \\( -name a -o -name b \\) -print", "find . ! -name x", "find . -newer a.go", "find -L . -name x",
			"find . -name x -delete", "find . -printf '%p\\n'"}},
		{"cat *", []string{"cat a b", "cat -n a", "cat --number a"}},
		{"head *", []string{"head -5 a", "head -n 5 a", "head -c 10 a", "head --lines=5 a"}},
		{"tail *", []string{"tail -n +5 a", "tail -f a", "tail -20 a"}},
		{"wc *", []string{"wc -l a", "wc a b"}},
		{"ls *", []string{"ls", "ls -la src/", "ls -R", "ls --color=auto", "ls -- ?.txt", "ls src/?.go"}},
		{"make *", []string{"make", "make build", "make -j4 test", "make -C sub build", "make -n"}},
		{"npm *", []string{"npm run build", "npm test", "npm run lint -- --fix"}},
		{"python3 *", []string{"python3 tool.py", "python3 -u tool.py --flag x", "python3 scripts/a.py -c x"}},
		{"node *", []string{"node a.js", "node a.js -e x"}},
		{"go *", []string{"go test ./...", "go test -run TestX -count=1 ./approval/", "go build ./...", "go vet ./...",
			"go test -race -v .", "go build -o bin/x ./cmd/x", "go version", "go env GOPATH"}},
		{"echo *", []string{"echo hi", "echo -n x"}},
		{"cd *", []string{"cd sub", "cd src/x"}},
	}
	for _, c := range cases {
		var refused []string
		for _, s := range c.scripts {
			if !matchAt(TablesV2, cmdRules(c.rule), s) {
				refused = append(refused, s)
			}
		}
		require.Empty(t, refused, "under %q", c.rule)
	}
}

// TestTablesUntabledProgramsNeverMatch: a pattern over a program without a
// table is no valid pattern, and a stored one matches nothing; an exact
// rule still matches its command.
func TestTablesUntabledProgramsNeverMatch(t *testing.T) {
	for _, p := range []string{"rm *", "curl *", "id", "./build.sh", "'my tool' *", "tcpdump *", "nc *", "socat *", "diff *"} {
		require.Error(t, ValidatePatternAt(TablesV2, KindCommand, "run_command", p), p)
		require.NoError(t, ValidatePatternAt(TablesLegacy, KindCommand, "run_command", p), p)
	}
	require.False(t, matchAt(TablesV2, cmdRules("rm *"), "rm x"))
	require.True(t, matchAt(TablesLegacy, cmdRules("rm *"), "rm x"))
	require.True(t, matchAt(TablesV2, []Rule{{Tool: "run_command", Args: cmdArgs("rm x")}}, "rm x"))
	for _, p := range []string{"git *", "tar *", "go test ./...", "bash build.sh", "/usr/bin/git *"} {
		require.NoError(t, ValidatePatternAt(TablesV2, KindCommand, "run_command", p), p)
	}
	_, err := RememberAt(TablesV2, KindCommand, "run_command", cmdArgs("rm x"), "rm *")
	require.Error(t, err)
	_, err = RememberAt(TablesLegacy, KindCommand, "run_command", cmdArgs("rm x"), "rm *")
	require.NoError(t, err)
}

// TestTablesPolicyVersion: Needs reads the version of its Policy; zero is
// the legacy matcher, as rounds recorded before T11 ran.
func TestTablesPolicyVersion(t *testing.T) {
	probe := Call{Tool: "run_command", Args: cmdArgs("tar xIf 'sh -c id>PWN_TAR' a.tar")}
	rules := cmdRules("tar *")
	require.False(t, needsTool(probe, Policy{Rules: rules}).Ask)
	require.False(t, needsTool(probe, Policy{Rules: rules, Tables: TablesLegacy}).Ask)
	require.True(t, needsTool(probe, Policy{Rules: rules, Tables: TablesV2}).Ask)
	require.False(t, needsTool(Call{Tool: "run_command", Args: cmdArgs("tar xf a.tar")}, Policy{Rules: rules, Tables: TablesV2}).Ask)
}

// TestTablesEnvironment: TAR_OPTIONS and GIT_* in a command's environment
// ask, as any variable that loads configuration.
func TestTablesEnvironment(t *testing.T) {
	rules := cmdRules("tar *", "git *")
	require.Empty(t, tablesApproved(TablesV2, rules, []string{"TAR_OPTIONS=-Iid tar xf a.tar", "env TAR_OPTIONS=x tar tf a",
		"GIT_EXTERNAL_DIFF=id git diff", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log",
		"env GIT_DIR=x git status", "GIT_PAGER=id git log"}))
}

// TestTablesExpandingWords: a word the shell expands is an operand only,
// never where it could become an option (a file named --to-command=...).
func TestTablesExpandingWords(t *testing.T) {
	rules := cmdRules("tar *", "cat *", "grep *")
	require.Empty(t, tablesApproved(TablesV2, rules, []string{"tar xf *", "cat *", "cat ?", "grep x [a-z]*", "tar xf a.tar *"}))
	require.Empty(t, tablesApproved(TablesV2, rules, []string{"cat src/*.go"}), "secrets.go")
	require.Len(t, tablesApproved(TablesV2, rules, []string{"cat docs/a?.md", "cat -- ?.txt", "grep x ./b*.txt"}), 3)
}

// TestReadOnlyCommand: the classification rule scopes are to read: a command of
// pure programs without write forms is read-only.
func TestReadOnlyCommand(t *testing.T) {
	for _, s := range []string{"git status", "git log -p", "cat a | grep x", "sed -n 1p a", "find . -name x", "tar tf a.tar",
		"ls -la > /dev/null", "sort -u a", "grep -c x a && wc -l a"} {
		require.True(t, ReadOnlyCommand(s), s)
	}
	for _, s := range []string{"sort -o out a", "find . -fprint x", "sed -i s/a/b/ a", "tar xf a.tar", "split a",
		"git add x", "git commit -m x", "git diff --output=x", "cat a > b", "make", "go test ./...", "python3 a.py", "rm x", "tar xIf id a.tar",
		"find . -delete", "npm test"} {
		require.False(t, ReadOnlyCommand(s), s)
	}
}

// TestRulePrograms: the programs a rule may start (an execve oracle checks a
// command's execve calls against them).
func TestRulePrograms(t *testing.T) {
	progs, class, ok := RulePrograms("tar *")
	require.True(t, ok)
	require.Equal(t, ClassPure, class)
	require.Contains(t, progs, "tar")
	require.Contains(t, progs, "gzip")
	// The wrappers the matcher unwraps run the command after their
	// options: they are in every rule's set (the oracle of T13 found
	// `nice git log` approved under `git *`), and the rest is not.
	progs, _, _ = RulePrograms("git log *")
	require.Equal(t, []string{"git", "env", "nice", "nohup", "time", "timeout"}, progs)
	_, class, ok = RulePrograms("make build")
	require.True(t, ok)
	require.Equal(t, ClassRunsWorkspaceCode, class)
	_, class, _ = RulePrograms("sed *")
	require.Equal(t, ClassScripted, class)
	_, _, ok = RulePrograms("rm *")
	require.False(t, ok)
}

// TestTablesCiteTheirManual: every table names the version and manual it
// was written from.
func TestTablesCiteTheirManual(t *testing.T) {
	for name, p := range programTables {
		require.NotEmpty(t, p.Cite, name)
		require.NotEmpty(t, p.Class, name)
	}
}

// TestLegacyRefusalsHoldWithTables: what the tests written for the legacy
// matcher refuse, TablesV2 refuses too.
func TestLegacyRefusalsHoldWithTables(t *testing.T) {
	testTables = TablesV2
	defer func() { testTables = TablesLegacy }()
	TestShellNeverOverMatches(t)
	TestShellsRunOnlyWhatWasApproved(t)
	TestShellLimits(t)
	TestCommandArgsShape(t)
	TestExactRules(t)
	TestWhichReportsEveryRuleUsed(t)
	requireNoneMatch(t, gitWriteRules, gitDirWrites)
}

// TestTablesAgreeWithTheirHelp: every long option a table lists is one of
// its program's --help of the cited version, so an abbreviation is read
// against the program's whole list.
func TestTablesAgreeWithTheirHelp(t *testing.T) {
	for name, p := range programTables {
		p.init()
		if p.Longs == "" {
			continue
		}
		help := setOf(strings.Fields(p.Longs)...)
		for n := range p.byName {
			if l, ok := strings.CutPrefix(n, "--"); ok {
				require.True(t, help[l], "%s --%s is not in its --help", name, l)
			}
		}
	}
}
