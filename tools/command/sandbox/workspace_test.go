package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// W2: a command of one session's workspace sees an empty workdir with only
// its own workspace in it, and that workspace's .toolround read-only.
func TestBwrapWorkspaceSeesOnlyItsOwn(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	a, b := filepath.Join(wd, "sessions", "a"), filepath.Join(wd, "sessions", "b")
	for _, d := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, ".toolround"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(a, "secret.txt"), []byte("A-SECRET"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "top.txt"), []byte("TOP"), 0o644))

	o := runIn(t, s, b, b, "echo mine > mine.txt && ls -A "+wd+" && ls -A "+filepath.Join(wd, "sessions"))
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "sessions\nb\n", o.out, "the workdir holds nothing but the path to this workspace")
	got, err := os.ReadFile(filepath.Join(b, "mine.txt"))
	require.NoError(t, err)
	require.Equal(t, "mine\n", string(got))

	for name, script := range map[string]string{
		"read A by absolute path": "cat " + filepath.Join(a, "secret.txt"),
		"read A by relative path": "cat ../a/secret.txt",
		"read the top":            "cat " + filepath.Join(wd, "top.txt"),
		"find A":                  "find " + wd + " -name secret.txt | grep .",
		"write the reserved":      "echo x > .toolround/x",
		"link to A and read":      "ln -s " + filepath.Join(a, "secret.txt") + " l && cat l",
		"hard link to A":          "ln " + filepath.Join(a, "secret.txt") + " h",
		"write into A":            "echo x > " + filepath.Join(a, "planted"),
	} {
		o := runIn(t, s, b, b, script)
		require.NotEqual(t, 0, o.code, "%s succeeded: %s", name, o.out)
		require.NotContains(t, o.out, "A-SECRET", name)
	}
	require.NoFileExists(t, filepath.Join(a, "planted"))
	require.NoFileExists(t, filepath.Join(b, "h"))
	require.FileExists(t, filepath.Join(wd, "top.txt"), "the empty workdir is the sandbox's own")

	cmd := exec.Command("/bin/true")
	_, err = s.WrapIn(cmd, t.TempDir())
	require.ErrorContains(t, err, "not inside the workdir")
	_, err = s.WrapIn(exec.Command("/bin/true"), filepath.Join(wd, "sessions", "gone"))
	require.Error(t, err)
}
