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

// TestTarRuleNeverRunsAProgram: GNU tar itself is the oracle. Every
// command of random words (clusters with and without a dash, long options
// and their abbreviations that run a program, remote archives) that
// `tar *` matches is run in a folder with an archive; none may run
// `touch PWNED`.
func TestTarRuleNeverRunsAProgram(t *testing.T) {
	if v, err := exec.Command("tar", "--version").Output(); err != nil || !strings.Contains(string(v), "GNU tar") {
		testenv.Unavailable(t, "no GNU tar on PATH")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, exec.Command("tar", "-C", dir, "-cf", filepath.Join(dir, "a.tar"), "a.txt").Run())
	require.NoError(t, os.Mkdir(filepath.Join(dir, "out"), 0o755))
	run := "'sh -c \"touch PWNED\"'"
	// A first word (a cluster, with or without a dash), the values its
	// letters take in their order, then options.
	firsts := []string{"x", "t", "-x", "-t", "xf", "-xf", "xvf", "xIf", "xFf", "Ixf", "fxI", "-xIf", "xMf", "tFf", "xzf", "-xvIf"}
	archives := []string{"a.tar", "h:a.tar", "./a.tar"}
	options := []string{"-I " + run, "-I" + run, "-F " + run, "-M", "--to-command=" + run, "--to-c=" + run, "--to " + run,
		"--use-compress-program=" + run, "--use=" + run, "--us " + run, "--checkpoint=1 --checkpoint-action=exec=" + run,
		"--checkpoint=1 --checkpoint-a=exec=" + run, "--check=1 --checkpoint-ac=exec=" + run, "--info-script=" + run,
		"--info=" + run, "--new-volume-script=" + run, "--new-v=" + run, "--multi", "--rsh-command=" + run, "--rsh=" + run,
		"--rmt-command=" + run, "--force-local", "-v", "-C out", "-O", "--to-stdout", "--index-file=idx", "--ext", "--gzip",
		"-f a.tar", "--file=h:a.tar", "--fi=a.tar", "-a", "--auto", "--wildcards", "--exclude=x"}
	rules := cmdRules("tar *")
	r := rand.New(rand.NewSource(5))
	matched := 0
	for k := 0; k < 3000; k++ {
		first := firsts[r.Intn(len(firsts))]
		cmd := "tar " + first
		for _, c := range strings.TrimPrefix(first, "-") {
			switch c {
			case 'I', 'F':
				cmd += " " + run
			case 'f':
				cmd += " " + archives[r.Intn(len(archives))]
			}
		}
		for j := 0; j < r.Intn(4); j++ {
			cmd += " " + options[r.Intn(len(options))]
		}
		if !matchAt(TablesV2, rules, cmd) {
			continue
		}
		matched++
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.Dir = dir
		c.Stdin = strings.NewReader("")
		_ = c.Run()
		cancel()
		require.NoFileExists(t, filepath.Join(dir, "PWNED"), "%q ran a program", cmd)
	}
	require.Greater(t, matched, 100)
	// The oracle sees the probe.
	probe := "tar xf a.tar --to-c='touch PWNED'"
	require.False(t, matchAt(TablesV2, rules, probe))
	c := exec.Command("sh", "-c", probe)
	c.Dir = dir
	_ = c.Run()
	require.FileExists(t, filepath.Join(dir, "PWNED"))
}
