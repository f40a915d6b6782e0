package command

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// gitFixture makes, in the workdir, a repository r whose config, hooks and
// remotes each name a program that creates a marker file in the workdir, a
// bare repository gd with such a config (as `git init --bare` and a written
// config make it), and a folder sub that holds one; it returns the markers.
func gitFixture(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	m := func(n string) string { return filepath.Join(dir, "MARK-"+n) }
	script := `set -e
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git init -q r && cd r
git config user.name t && git config user.email t@example.com
echo a > a && git add a && git commit -qm a && echo b > a
git config core.fsmonitor 'touch ` + m("fsmonitor") + `; false'
git config core.sshCommand 'touch ` + m("ssh") + `; false'
git config core.pager 'touch ` + m("pager") + `; cat'
git config core.editor 'touch ` + m("editor") + `; false'
git config credential.helper '!touch ` + m("credential") + `; false'
git config commit.gpgSign true && git config gpg.program 'touch ` + m("gpg") + `; false'
git config protocol.ext.allow always && git remote add e 'ext::sh -c touch% ` + m("ext") + `'
git remote add s ssh://example.invalid/x
git init -q --bare ../local && git remote add l ../local
git config remote.l.uploadpack 'touch ` + m("uploadpack") + `; git-upload-pack'
printf '#!/bin/sh\ntouch ` + m("hook") + `\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
cd .. && git init -q --bare gd && git -C gd config core.fsmonitor 'touch ` + m("bare") + `; false'
mkdir sub && git init -q --bare sub/inner && git -C sub/inner config core.fsmonitor 'touch ` + m("nested") + `; false'
`
	out, err := exec.Command("sh", "-c", "cd "+dir+" && "+script).CombinedOutput()
	require.NoError(t, err, string(out))
	return []string{m("fsmonitor"), m("ssh"), m("pager"), m("editor"), m("credential"), m("gpg"), m("ext"),
		m("uploadpack"), m("hook"), m("bare"), m("nested")}
}

func ruleCall(ctx context.Context, h tools.Handler, command string, rule bool) (tools.Result, error) {
	b, _ := json.Marshal(map[string]string{"command": command})
	return h(ctx, tools.Request{CallID: "call_1", Args: b, RuleApproved: rule})
}

// TestRuleApprovedGitRunsNoConfiguredProgram: a command that a rule
// approved runs git with its configuration locked down: no program that a
// repository's config or hooks name runs, and no bare repository that git
// would discover is used (T4); a person-approved command runs git as the
// repository says.
func TestRuleApprovedGitRunsNoConfiguredProgram(t *testing.T) {
	tl, wd := newTools(t, nil)
	markers := gitFixture(t, wd.Dir())
	ctx := context.Background()
	// What rules are for still works.
	for _, ok := range []string{"cd r && git status --short", "cd r && git diff --stat", "cd r && git log --oneline",
		"cd r && echo e > a && git add a && git commit -qm b", "git init -q --bare gd2 && git --git-dir=gd2 log 2>&1 | grep -q 'does not have any commits'"} {
		res, err := ruleCall(ctx, tools.Typed(tl.runCommand), ok, true)
		require.NoError(t, err, "%q: %s", ok, res.Content)
	}
	// The same command approved by a person runs what the repository says:
	// the markers above could have appeared.
	_, _ = ruleCall(ctx, tools.Typed(tl.runCommand), "cd r && echo c > a && git status", false)
	require.FileExists(t, markers[0])
	require.NoError(t, os.Remove(markers[0]))

	// background_command is locked down the same way.
	res, err := tools.Typed(tl.backgroundCommand)(ctx, tools.Request{CallID: "bg", Args: json.RawMessage(`{"command":"cd r && echo d > a && git status","wait_seconds":5}`), RuleApproved: true})
	require.NoError(t, err)
	require.Contains(t, res.Content, "exited", res.Content)
	require.NoFileExists(t, markers[0])
}

// hostileRepo makes, in dir, a repository whose config, included config,
// hooks and .gitattributes name, for every setting of git that runs a
// program, one that says so on stderr (RAN:<setting>) and leaves a
// marker MARK-<setting> in dir; folders sub and d1/r holding other such
// repositories, cx and gf whose git directories take their config from a
// common directory that is not one (commondir, a .git file); and evil.tar, an archive of a third one, w2, with its .git.
// The person makes them all, as a workspace can come.
func hostileRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	evil := func(n, tail string) string {
		// The text of the config is not what the program prints.
		return "printf 'R%sN:" + n + "\\n' A >&2; touch " + filepath.Join(dir, "MARK-"+n) + "; " + tail
	}
	keys := [][2]string{
		{"diff.external", evil("diff.external", "true")},
		{"diff.drv.textconv", evil("textconv", "cat")},
		{"diff.drv.command", evil("diff.command", "true")},
		{"filter.flt.clean", evil("clean", "cat")},
		{"filter.flt.smudge", evil("smudge", "cat")},
		{"filter.flp.process", evil("process", "false")},
		{"merge.mrg.driver", evil("merge.driver", "false")},
		{"core.pager", evil("pager", "cat")},
		{"pager.log", evil("pager.log", "cat")},
		{"core.fsmonitor", evil("fsmonitor", "false")},
		{"core.hooksPath", "hooks2"},
		{"core.sshCommand", evil("ssh", "false")},
		{"core.gitProxy", evil("gitproxy", "false")},
		{"core.editor", evil("editor", "false")},
		{"sequence.editor", evil("sequence.editor", "false")},
		{"core.askPass", evil("askpass", "false")},
		{"core.alternateRefsCommand", evil("alternaterefs", "false")},
		{"commit.gpgSign", "true"},
		{"gpg.program", evil("gpg", "false")},
		{"credential.helper", "!" + evil("credential", "false")},
		{"alias.st", "!" + evil("alias", "false")},
		{"uploadpack.packObjectsHook", evil("packobjectshook", "false")},
		{"interactive.diffFilter", evil("difffilter", "cat")},
		{"web.browser", "x"},
		{"browser.x.cmd", evil("browser", "false")},
		{"include.path", "../inc.conf"},
		{"includeIf.gitdir:/.path", "../inc.conf"},
		{"protocol.allow", "always"},
		{"remote.l.url", "../local"},
		{"remote.l.fetch", "+refs/heads/*:refs/remotes/l/*"},
		{"remote.l.uploadpack", evil("uploadpack", "git-upload-pack")},
		{"remote.l.receivepack", evil("receivepack", "git-receive-pack")},
		{"submodule.s.update", "!" + evil("submodule.update", "false")},
	}
	var set strings.Builder
	for _, k := range keys {
		set.WriteString("git config '" + k[0] + "' '" + strings.ReplaceAll(k[1], "'", `'\''`) + "'\n")
	}
	hooks := ""
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "post-index-change", "pre-auto-gc"} {
		hooks += "printf '#!/bin/sh\\n" + evil("hook."+h, "true") + "\\n' > .git/hooks/" + h + " && chmod +x .git/hooks/" + h + "\n"
		hooks += "mkdir -p hooks2 && cp .git/hooks/" + h + " hooks2/\n"
	}
	repo := `git init -q && git config user.name t && git config user.email t@example.com
printf 'one\ntwo\n' > a && printf 'p\n' > p && printf 'b\n' > b
printf 'a diff=drv filter=flt merge=mrg\np filter=flp\n' > .gitattributes
git add a p b .gitattributes && git commit -qm first && printf 'one\nthree\n' > a
`
	script := `set -e
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
cd ` + dir + `
printf '[diff "drv"]\n\ttextconv = ` + evil("included.textconv", "cat") + `\n' > inc.conf
git init -q --bare local
` + repo + `git branch side && git -c core.hooksPath=/dev/null push -q local HEAD:main
` + set.String() + hooks + `
mkdir sub && cd sub && ` + repo + set.String() + hooks + `cd ..
mkdir d1 && cp -a sub d1/r
mkdir -p cx/.git && cp sub/.git/HEAD cx/.git/ && echo ../../evc > cx/.git/commondir && cp sub/a cx/a
cp -a sub/.git evc && rm evc/HEAD && mkdir gf && echo 'gitdir: ../gfdir' > gf/.git && cp -a sub/.git gfdir && rm gfdir/HEAD && cp cx/.git/HEAD gfdir/ && echo ../evc > gfdir/commondir
mkdir -p ../w2src/w2 && cd ../w2src/w2 && ` + repo + set.String() + hooks + `cd .. && tar cf ` + dir + `/evil.tar w2 && cd ` + dir + `
`
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestRuleScopedGitRunsNoProgramTheRepositoryNames (T12): a command a rule
// approved runs git over a configuration that names no program, whatever
// the repository's own config, the config it includes, its hooks and its
// .gitattributes name: the workspace's repository, a nested one, one a
// person unpacked before, one an earlier write-rule command unpacked, and
// one the same command unpacks before running git (which git refuses to
// use). What needs none of those programs still works.
func TestRuleScopedGitRunsNoProgramTheRepositoryNames(t *testing.T) {
	tl, wd := newSandboxed(t, sandbox.Config{})
	dir := wd.Dir()
	hostileRepo(t, dir)
	run := tools.Typed(tl.runCommand)
	ctx := context.Background()
	clean := func(what string, res tools.Result, err error) {
		t.Helper()
		out := res.Content
		if err != nil {
			out = err.Error()
		}
		require.NotContains(t, out, "RAN:", "%s ran a program the repository names", what)
		marks, _ := filepath.Glob(filepath.Join(dir, "MARK-*"))
		require.Empty(t, marks, "%s ran a program the repository names: %s", what, out)
	}
	// A repository an earlier write-rule command unpacked is removed when
	// that command ends (the protected set); one a person unpacked is the
	// workspace's.
	res, err := scopedCall(ctx, run, sandbox.ScopeWrite, `{"command":"tar xf evil.tar && test -d w2/.git"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "removed w2/.git")
	clean("tar xf", res, err)
	out, err := exec.Command("tar", "xf", filepath.Join(dir, "evil.tar"), "-C", dir).CombinedOutput()
	require.NoError(t, err, string(out))

	// What rules are for still works, in the repository and nested ones.
	for cmd, want := range map[string]string{
		"git status --short":                  " M a\n",
		"git diff --stat":                     "1 file changed",
		"git diff":                            "+three",
		"git log --oneline":                   "first",
		"git -C sub diff":                     "+three",
		"git -C w2 status --short":            " M a\n",
		"git diff --no-index a b; true":       "+b",
		"git show HEAD:b":                     "b\n",
		"git config --get remote.l.url":       "../local",
		"git blame b":                         "b",
		"git rev-parse --is-inside-work-tree": "true",
	} {
		res, err := scopedCall(ctx, run, sandbox.ScopeReadOnly, cmdArgs(t, map[string]any{"command": cmd}))
		require.NoError(t, err, "%q", cmd)
		require.Contains(t, res.Content, want, "%q", cmd)
		clean(cmd, res, nil)
	}
	// Under a write rule the workspace's files change, its .git does not
	// (the protected set).
	res, err = scopedCall(ctx, run, sandbox.ScopeWrite, `{"command":"echo four >> b && git diff b && git -C sub status --short"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "+four")
	require.Contains(t, res.Content, " M a\n")
	clean("write", res, nil)

	attacks := []string{
		"git status", "git status --short", "git diff", "git diff HEAD", "git diff --cached", "git log -p", "git log -p --format=%H%n%s",
		"git show", "git show HEAD:a", "git blame a", "git grep two", "git grep --textconv two", "git diff --no-index a b",
		"git st", "git -C sub diff", "git -C sub log -p", "git -C sub status", "git archive HEAD >/dev/null",
		"git -C w2 diff", "git -C w2 log -p", "git -C w2 status", "cd w2 && git diff", "git -C d1/r diff", "cd d1/r && git log -p",
		"git -C cx diff HEAD", "git -C cx log -p", "git -C gf diff HEAD", "git -C gf log -p",
		"git fetch l", "git fetch ../local", "git pull -q l main", "git ls-remote ../local", "git fetch file://" + dir + "/../local",
		"git diff --ext-diff --textconv", "git help -w log", "git web--browse x", "git submodule update --init",
		"git config --list", "git cat-file --textconv HEAD:a",
	}
	writes := []string{
		"git add a && git commit -qm second", "git add p && git commit -qm third", "git commit --amend -qm amended",
		"cd w2 && git add a p b && git commit -qm w2",
		"git checkout -q side && git checkout -q -", "git checkout -- p a", "echo x >> a && git stash -q && git stash pop -q",
		"git merge -q side", "git cherry-pick side", "git rebase -q HEAD~1", "git reset -q --hard HEAD",
		"git push -q l HEAD:main", "git gc -q --auto",
		// A repository the same command makes: git refuses it.
		"tar xf evil.tar --transform s/^w2/w3/ && git -C w3 diff; git -C w3 status; git -C w3 log -p; git -C w3 add -A",
		"tar xf evil.tar --transform s/^w2/w4/ && cd w4 && git diff; git log -p",
		// A nested repository moved away and one unpacked in its place.
		"mv sub gone && mkdir sub && tar xf evil.tar -C sub --strip-components=1 && git -C sub diff; git -C sub log -p",
		"mv w2 gone2 && tar xf evil.tar && git -C w2 diff; git -C w2 log -p",
		"mv d1 d1x && mkdir -p d1/r && tar xf evil.tar -C d1/r --strip-components=1 && git -C d1/r diff",
		"rm -rf d1; mkdir -p d1/r && tar xf evil.tar -C d1/r --strip-components=1 && git -C d1/r diff",
	}
	for _, scope := range []string{sandbox.ScopeReadOnly, sandbox.ScopeWrite} {
		for _, a := range attacks {
			res, err := scopedCall(ctx, run, scope, cmdArgs(t, map[string]any{"command": a}))
			clean(scope+" "+a, res, err)
		}
	}
	for _, a := range writes {
		res, err := scopedCall(ctx, run, sandbox.ScopeWrite, cmdArgs(t, map[string]any{"command": a}))
		clean("write "+a, res, err)
	}

	// A person's command runs what the repository says.
	_, err = call(ctx, run, `{"command":"git status"}`)
	require.ErrorContains(t, err, "RAN:fsmonitor")
}
