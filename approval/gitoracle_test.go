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

// gitConfigCorpus generates git config commands: the forms of
// git-config(1) of 2.39, in random order and number.
func gitConfigCorpus(r *rand.Rand) string {
	words := []string{"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--add", "--replace-all",
		"--unset", "--unset-all", "--rename-section", "--remove-section", "--local", "--worktree", "--type=bool", "--bool",
		"--int", "--path", "-z", "--null", "--name-only", "--show-origin", "--show-scope", "--includes", "--fixed-value",
		"--default=x", "-f", "--file=c2", "c2", "diff.external", "core.pager", "user.name", "'echo PWNED > PWN;:'", "get",
		"x", "'^$'", "filter.f.clean", "include.path", "alias.x", "section", "new"}
	cmd := "git config"
	for j := 0; j < 1+r.Intn(4); j++ {
		cmd += " " + words[r.Intn(len(words))]
	}
	return cmd
}

// TestGitConfigRuleNeverWrites: git itself is the oracle. Every generated
// git config command that `git *` matches is run in a repository; none
// changes a configuration file.
func TestGitConfigRuleNeverWrites(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Unavailable(t, "no git on PATH")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	sh := func(cmd string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.Dir, c.Env, c.Stdin = dir, env, strings.NewReader("")
		_ = c.Run()
	}
	sh("git init -q . && git config user.name t && printf '[core]\\n\\tpager = cat\\n' > c2")
	read := func() string {
		a, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
		b, _ := os.ReadFile(filepath.Join(dir, "c2"))
		return string(a) + "\x00" + string(b)
	}
	before := read()
	rules := cmdRules("git *")
	r := rand.New(rand.NewSource(9))
	matched := 0
	for k := 0; k < 2000; k++ {
		cmd := gitConfigCorpus(r)
		if !matchAt(TablesV2, rules, cmd) {
			continue
		}
		matched++
		sh(cmd)
		require.Equal(t, before, read(), "%q wrote a configuration file", cmd)
	}
	require.Greater(t, matched, 50)
	// The oracle sees the probe.
	require.False(t, matchAt(TablesV2, rules, "git config diff.external 'echo PWNED > PWN;:' get"))
	sh("git config diff.external 'echo PWNED > PWN;:' get")
	require.NotEqual(t, before, read())
}
