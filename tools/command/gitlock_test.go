package command

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
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
	attacks := []string{
		"cd r && git status", "cd r && git diff", "cd r && git log -p -1", "cd r && git fetch s", "cd r && git fetch e",
		"cd r && git fetch l", "cd r && git -c credential.helper= fetch https://127.0.0.1:1/x", "cd r && git commit -qam x",
		"cd r && git commit --amend -q", "git -C gd status", "git -C gd fetch", "cd gd && git log", "git -C sub/inner status",
		"cd sub/inner && git status", "git clone -q ext::sh d", "git clone -q r/../local c2",
	}
	for _, a := range attacks {
		_, _ = ruleCall(ctx, tools.Typed(tl.runCommand), a, true) // most fail: what matters is what they ran
		for _, m := range markers {
			require.NoFileExists(t, m, "%q ran a program its configuration names", a)
		}
	}
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
