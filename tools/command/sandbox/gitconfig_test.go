package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// T12: a sanitised config keeps what says how the repository is laid out
// and where its remotes are, values git reads back as they were, and drops
// every setting that can run a program, includes among them.
func TestSanitisedGitConfigKeepsNoProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	kept := map[string]string{
		"core.repositoryformatversion": "1",
		"extensions.objectformat":      "sha1",
		"core.bare":                    "false",
		`remote.o "x\y.url`:            `https://example.com/a "b" \c`,
		"branch.main.remote":           "o",
		"user.name":                    "t\tab\nline",
		"diff.drv.xfuncname":           "^func",
	}
	dropped := map[string]string{
		"diff.external": "x", "diff.drv.textconv": "x", "diff.drv.command": "x", "filter.f.clean": "x",
		"filter.f.smudge": "x", "filter.f.process": "x", "merge.m.driver": "x", "core.fsmonitor": "x",
		"core.hookspath": "x", "core.pager": "x", "pager.log": "x", "core.sshcommand": "x", "alias.st": "!x",
		"include.path": "x", "includeif.gitdir:/.path": "x", "remote.o \"x\\y.uploadpack": "x",
		"submodule.s.update": "!x", "credential.helper": "x", "core.editor": "x", "gpg.program": "x",
		"uploadpack.packobjectshook": "x", "browser.b.cmd": "x", "interactive.difffilter": "x",
	}
	for k, v := range kept {
		out, err := exec.Command("git", "config", "--file", conf, k, v).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	for k, v := range dropped {
		out, err := exec.Command("git", "config", "--file", conf, k, v).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	clean := filepath.Join(dir, "clean")
	require.NoError(t, os.WriteFile(clean, sanitiseGitConfig(conf), 0o644))
	out, err := exec.Command("git", "config", "--file", clean, "--list", "-z").Output()
	require.NoError(t, err)
	got := map[string]string{}
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		k, v, _ := strings.Cut(rec, "\n")
		got[k] = v
	}
	require.Equal(t, kept, got)

	// What git cannot read becomes an empty file.
	require.NoError(t, os.WriteFile(conf, []byte("[core\n\tfsmonitor = x\n"), 0o644))
	require.Empty(t, sanitiseGitConfig(conf))
}

// T12: where the workspace holds more git configs than a command's start
// sanitises, a command a rule approved does not run.
func TestTooManyGitConfigsRefuseARuleCommand(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	for i := 0; i <= maxGitConfigs; i++ {
		d := filepath.Join(wd, "r", strconv.Itoa(i), ".git")
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "config"), nil, 0o644))
	}
	cmd := exec.Command("/bin/true")
	cmd.Dir = wd
	_, err := s.WrapScoped(cmd, "", ScopeReadOnly)
	require.ErrorContains(t, err, "approve the command itself")
	// A person's command runs.
	cmd = exec.Command("/bin/true")
	cmd.Dir = wd
	p, err := s.WrapScoped(cmd, "", "")
	require.NoError(t, err)
	require.NoError(t, p.Start())
	require.NoError(t, cmd.Wait())
	p.Finish()
}

// T12: the git here refuses a repository safe.directory does not name, as
// the fence needs; the worker's start says so where it does not.
func TestGitHereRefusesUnnamedRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	require.Empty(t, gitFenceNote())
}

// T12: binding the folders down to a repository over themselves keeps
// what was read-only so: a repository in the reserved folder stays
// read-only under a write rule (the fence binds nothing there, and the
// protected set's binds come after its own).
func TestGitFenceKeepsTheReservedFolderReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s, wd := newBwrap(t, Config{})
	out, err := exec.Command("git", "init", "-q", filepath.Join(wd, reservedDir, "r")).CombinedOutput()
	require.NoError(t, err, string(out))
	o := runScoped(t, s, wd, ScopeWrite, "echo x > "+reservedDir+"/r/planted")
	require.NotEqual(t, 0, o.code, o.out)
	require.NoFileExists(t, filepath.Join(wd, reservedDir, "r", "planted"))
}
