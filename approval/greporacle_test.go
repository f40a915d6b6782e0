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

// TestGrepRuleNeverReadsAKeyFile: GNU grep itself is the oracle. In a
// folder whose key files (.env, sub/.env, sub/id_rsa) hold a marker,
// every command of random option words that `grep *` matches is run; none
// may print a key file's line (recursion, --include, -d recurse in any
// spelling or abbreviation).
func TestGrepRuleNeverReadsAKeyFile(t *testing.T) {
	if v, err := exec.Command("grep", "--version").Output(); err != nil || !strings.Contains(string(v), "GNU grep") {
		testenv.Unavailable(t, "no GNU grep on PATH")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{".env": "SECRETKEY=1\n", "sub/.env": "SECRETKEY=2\n", "sub/id_rsa": "SECRETKEY=3\n",
		"a.txt": "hello\n", "sub/b.txt": "world\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	words := []string{"-r", "-R", "-rn", "-nr", "-i", "-n", "-c", "-H", "-h", "--recursive", "--recur", "--rec", "--r",
		"--dereference-recursive", "--deref", "--de", "-d", "recurse", "-drecurse", "--directories=recurse", "--dir=recurse",
		"--directories", "--d=recurse", "--include=.env", "--incl=*", "--include", "'*'", "--exclude=x", "--exclude-dir=x",
		"-e", "--", "-A1", "-5", "-s", ".", "sub", "a.txt", "sub/b.txt", "'.e*'", "-E", "-F", "-a", "--null-data", "-z"}
	rules := cmdRules("grep *")
	r := rand.New(rand.NewSource(3))
	matched := 0
	for k := 0; k < 3000; k++ {
		cmd := "grep SECRETKEY"
		for j := 0; j < 1+r.Intn(5); j++ {
			cmd += " " + words[r.Intn(len(words))]
		}
		if !matchAt(TablesV2, rules, cmd) {
			continue
		}
		matched++
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.Dir = dir
		out, _ := c.Output()
		cancel()
		require.NotContains(t, string(out), "SECRETKEY=", "%q read a key file", cmd)
	}
	require.Greater(t, matched, 50)
	require.False(t, matchAt(TablesV2, rules, "grep -r SECRETKEY ."))
	out, _ := exec.Command("sh", "-c", "cd "+dir+" && grep -r SECRETKEY .").Output()
	require.Contains(t, string(out), "SECRETKEY=", "the oracle sees a recursive read")
}
