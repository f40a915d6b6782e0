package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGitIgnoresWhatRunsLeave: what `make run`, the examples and the
// clients' setups leave in the checkout (builds, virtual environments,
// node_modules, the scripts' state, the default workdir) is ignored, so that
// `git status` shows only one's own changes.
func TestGitIgnoresWhatRunsLeave(t *testing.T) {
	if err := exec.Command("git", "-C", "..", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	for _, p := range []string{
		"bin/worker", ".run/worker.log", ".tools/python/bin/python", "workdir/notes.md",
		".venv/bin/python", "examples/python/.venv/bin/python", "clients/python/.venv/bin/python",
		"node_modules/x/index.js", "examples/typescript/node_modules/x/index.js", "clients/typescript/dist/index.js", "clients/typescript/toolround-0.1.0.tgz",
		"examples/python/__pycache__/quickstart.cpython-312.pyc", "clients/python/src/toolround.egg-info/PKG-INFO",
	} {
		p = notBeyondALink(p)
		out, err := exec.Command("git", "-C", "..", "check-ignore", "--no-index", "-v", p).CombinedOutput()
		require.NoError(t, err, "%s is not ignored: %s", p, out)
	}
}

// notBeyondALink is p, or its first folder that is a symbolic link in the
// checkout (the examples link node_modules to the client's once they ran),
// which git checks as a file of its own.
func notBeyondALink(p string) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		if fi, err := os.Lstat(filepath.Join("..", prefix)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return prefix
		}
	}
	return p
}
