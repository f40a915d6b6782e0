package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// runScoped runs script in the workdir with a rule's scope (T12).
func runScoped(t *testing.T, s *Sandbox, wd, scope, script string) outcome {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Dir = wd
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := s.WrapScoped(cmd, "", scope)
	require.NoError(t, err)
	require.NoError(t, p.Start())
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return outcome{out: out.String(), code: code, cut: p.Finish()}
}

// protectedTree writes a workdir holding one path of each kind of the
// protected set, and a plain file.
func protectedTree(t *testing.T, wd string) []string {
	files := []string{".git/config", ".git/hooks/pre-commit", ".git/HEAD", ".gitattributes", "sub/.gitattributes", "sub/.gitmodules",
		".env", "sub/.env.local", "key.pem", "sub/id_ed25519", "bare.git/config", "bare.git/hooks/post-update",
		"vendor/lib/.git"}
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "bare.git", "objects"), 0o755))
	for _, f := range append(files, "plain.txt", "bare.git/HEAD") {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(wd, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(wd, f), []byte("original\n"), 0o644))
	}
	return files
}

// T12: a command run with a read-only rule's scope changes nothing in the
// workspace; its private /tmp stays its own to write.
func TestBwrapReadOnlyScopeCannotWriteTheWorkspace(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	files := protectedTree(t, wd)
	for _, f := range files {
		o := runScoped(t, s, wd, ScopeReadOnly, "echo planted > '"+f+"'")
		require.NotEqual(t, 0, o.code, "wrote %s: %s", f, o.out)
	}
	o := runScoped(t, s, wd, ScopeReadOnly, "cat plain.txt && echo scratch > /tmp/x && cat /tmp/x")
	require.Equal(t, 0, o.code, o.out)
	require.Equal(t, "original\nscratch\n", o.out)
	for name, script := range map[string]string{
		"write a file":      "echo changed > plain.txt",
		"create a file":     "echo new > new.txt",
		"remove a file":     "rm plain.txt",
		"rename a file":     "mv plain.txt moved.txt",
		"make a folder":     "mkdir made",
		"touch a file":      "touch plain.txt",
		"write in a folder": "echo new > sub/new.txt",
	} {
		o := runScoped(t, s, wd, ScopeReadOnly, script)
		require.NotEqual(t, 0, o.code, "%s succeeded: %s", name, o.out)
	}
	got, err := os.ReadFile(filepath.Join(wd, "plain.txt"))
	require.NoError(t, err)
	require.Equal(t, "original\n", string(got))
	for _, p := range []string{"new.txt", "moved.txt", "made", "sub/new.txt"} {
		require.NoFileExists(t, filepath.Join(wd, p))
	}
}

// T12: a command run with a write rule's scope changes the workspace but
// nothing of the protected set: git's files, key files, .toolround.
func TestBwrapWriteScopeCannotWriteTheProtectedSet(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	files := protectedTree(t, wd)
	o := runScoped(t, s, wd, ScopeWrite, "echo changed > plain.txt && echo new > sub/new.txt")
	require.Equal(t, 0, o.code, o.out)
	for _, f := range files {
		for how, script := range map[string]string{
			"write":  "echo planted > '" + f + "'",
			"append": "echo planted >> '" + f + "'",
			"remove": "rm -rf '" + f + "'",
			"rename": "mv '" + f + "' moved-away",
		} {
			o := runScoped(t, s, wd, ScopeWrite, script)
			require.NotEqual(t, 0, o.code, "%s %s succeeded: %s", how, f, o.out)
		}
		got, err := os.ReadFile(filepath.Join(wd, f))
		require.NoError(t, err, f)
		require.Equal(t, "original\n", string(got), f)
	}
	for name, script := range map[string]string{
		"a new hook":          "echo x > .git/hooks/post-checkout",
		"replace .git":        "rm -rf .git",
		"rename .git":         "mv .git g",
		"write .toolround":    "echo x > .toolround/x",
		"a bare repo's hooks": "echo x > bare.git/hooks/pre-receive",
	} {
		o := runScoped(t, s, wd, ScopeWrite, script)
		require.NotEqual(t, 0, o.code, "%s succeeded: %s", name, o.out)
	}
	require.NoFileExists(t, filepath.Join(wd, ".git", "hooks", "post-checkout"))
	require.NoFileExists(t, filepath.Join(wd, "bare.git", "hooks", "pre-receive"))
	got, err := os.ReadFile(filepath.Join(wd, "plain.txt"))
	require.NoError(t, err)
	require.Equal(t, "changed\n", string(got), "the workspace itself is writable")
}

func TestWrapScopedRefusesAnUnknownScope(t *testing.T) {
	s, _ := newBwrap(t, Config{})
	_, err := s.WrapScoped(exec.Command("/bin/true"), "", "everything")
	require.ErrorContains(t, err, "unknown scope")
}

// T12: a command run with a write rule's scope cannot leave behind a path
// of the protected set that was not there when it started: what it
// creates there is removed when it ends, and the result says so. What it
// creates elsewhere stays.
func TestBwrapWriteScopeCannotCreateAProtectedPath(t *testing.T) {
	s, wd := newBwrap(t, Config{})
	protectedTree(t, wd)
	require.NoError(t, os.Remove(filepath.Join(wd, ".gitattributes")))
	for name, tc := range map[string]struct{ script, gone string }{
		"a .gitattributes":     {"echo '* filter=x' > .gitattributes", ".gitattributes"},
		"a nested .gitmodules": {"mkdir -p new/deeper && echo x > new/deeper/.gitmodules", "new/deeper/.gitmodules"},
		"a new repository":     {"mkdir -p nested/.git/hooks && echo x > nested/.git/hooks/pre-commit", "nested/.git"},
		"a key file":           {"echo KEY=1 > sub/.env.production", "sub/.env.production"},
		"a key file by case":   {"echo KEY=1 > .ENV", ".ENV"},
		"a pem":                {"echo x > new.pem", "new.pem"},
		"an id_ file":          {"echo x > sub/id_rsa", "sub/id_rsa"},
		"a .toolround":         {"mkdir -p sub/.toolround && echo x > sub/.toolround/x", "sub/.toolround"},
		"a link":               {"ln -s plain.txt .gitmodules", ".gitmodules"},
		"a bare repository":    {"mkdir -p bare2/objects bare2/hooks && echo ref > bare2/HEAD && echo '[core]' > bare2/config", "bare2/config"},
	} {
		kept := "kept-" + strings.ReplaceAll(name, " ", "-") + ".txt"
		o := runScoped(t, s, wd, ScopeWrite, tc.script+" && echo made > "+kept)
		require.Equal(t, 0, o.code, "%s: %s", name, o.out)
		_, err := os.Lstat(filepath.Join(wd, tc.gone))
		require.True(t, os.IsNotExist(err), "%s: %s is still there", name, tc.gone)
		require.FileExists(t, filepath.Join(wd, kept), name)
		require.Contains(t, strings.Join(o.cut, "\n"), "removed "+tc.gone, name)
	}
	require.NoFileExists(t, filepath.Join(wd, "bare2", "hooks", "x"))
	// A protected path moved with its folder is the same file: it stays.
	o := runScoped(t, s, wd, ScopeWrite, "mv sub moved")
	require.Equal(t, 0, o.code, o.out)
	got, err := os.ReadFile(filepath.Join(wd, "moved", ".env.local"))
	require.NoError(t, err)
	require.Equal(t, "original\n", string(got))
}

// T12: a protected path that is a symbolic link, or a link inside a
// protected folder, cannot be bound over itself (bubblewrap would bind its
// target, and the command could replace the link): a rule's command does
// not run there, and says why.
func TestBwrapWriteScopeRefusesProtectedLinks(t *testing.T) {
	for name, link := range map[string][2]string{
		".env to a file":          {".env", "secrets/real.env"},
		".git/config to a file":   {".git/config", "../secrets/real.env"},
		".git/hooks to a folder":  {".git/hooks", "../secrets"},
		"a nested .gitattributes": {"sub/.gitattributes", "../secrets/real.env"},
	} {
		s, wd := newBwrap(t, Config{})
		protectedTree(t, wd)
		require.NoError(t, os.MkdirAll(filepath.Join(wd, "secrets"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(wd, "secrets", "real.env"), []byte("original\n"), 0o644))
		require.NoError(t, os.RemoveAll(filepath.Join(wd, link[0])))
		require.NoError(t, os.Symlink(link[1], filepath.Join(wd, link[0])))
		cmd := exec.Command("/bin/sh", "-c", "echo planted > "+link[0])
		cmd.Dir = wd
		_, err := s.WrapScoped(cmd, "", ScopeWrite)
		require.ErrorContains(t, err, link[0]+" is a symbolic link", name)
		got, rerr := os.ReadFile(filepath.Join(wd, "secrets", "real.env"))
		require.NoError(t, rerr)
		require.Equal(t, "original\n", string(got), name)
		// Under read-only the whole workspace is read-only: it runs.
		o := runScoped(t, s, wd, ScopeReadOnly, "cat plain.txt")
		require.Equal(t, 0, o.code, "%s: %s", name, o.out)
	}
}
