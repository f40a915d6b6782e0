package preview

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

type fakeSecrets map[string]map[string]string

func (f fakeSecrets) Names(_ context.Context, session string) ([]string, error) {
	var out []string
	for n := range f[session] {
		out = append(out, n)
	}
	return out, nil
}

func (f fakeSecrets) Get(_ context.Context, session, name string) (string, error) {
	return f[session][name], nil
}

type downSecrets struct{}

func (downSecrets) Names(context.Context, string) ([]string, error) {
	return nil, errors.New("redis is down")
}
func (downSecrets) Get(context.Context, string, string) (string, error) { return "", nil }

func key(t *testing.T) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k
}

func TestPreviewFileRedactsSecretsAndSealsToTheKey(t *testing.T) {
	dir := t.TempDir()
	wd, err := tools.OpenWorkspaces(dir, tools.WorkspaceSession)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	s, err := wd.Session("s1")
	require.NoError(t, err)
	const secret = "hunter2-value-xyz"
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "config.txt"), []byte("user=me\npassword="+secret+"\n"), 0o644))
	a := &Activities{Workdir: wd, Secrets: fakeSecrets{"s1": {"db": secret}}}
	k := key(t)
	out, err := a.PreviewFile(context.Background(), Input{Session: "s1", Path: "config.txt", PublicKey: k.PublicKey().Bytes()})
	require.NoError(t, err)
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "user=me", "the answer the server keeps is sealed")
	p, err := Open(k, out)
	require.NoError(t, err)
	require.Equal(t, []string{"user=me", "password=[secret:db]"}, p.Lines)
	require.Equal(t, int64(len("user=me\npassword="+secret+"\n")), p.Size)
	_, err = Open(key(t), out)
	require.Error(t, err, "another key does not open it")
}

func TestPreviewFileFailsWhenTheSecretsCannotBeRead(t *testing.T) {
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	require.NoError(t, os.WriteFile(filepath.Join(wd.Dir(), "a.txt"), []byte("text\n"), 0o644))
	a := &Activities{Workdir: wd, Secrets: downSecrets{}}
	_, err = a.PreviewFile(context.Background(), Input{Session: "s1", Path: "a.txt", PublicKey: key(t).PublicKey().Bytes()})
	require.ErrorContains(t, err, "redis is down")
}

func TestPreviewFileMakesNoWorkspaceAndRefusesOutside(t *testing.T) {
	dir := t.TempDir()
	wd, err := tools.OpenWorkspaces(dir, tools.WorkspaceSession)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	a := &Activities{Workdir: wd}
	k := key(t)
	out, err := a.PreviewFile(context.Background(), Input{Session: "fresh", Path: "a.txt", PublicKey: k.PublicKey().Bytes()})
	require.NoError(t, err)
	p, err := Open(k, out)
	require.NoError(t, err)
	require.False(t, p.Exists)
	_, err = os.Lstat(filepath.Join(dir, tools.SessionsDir, "fresh"))
	require.True(t, os.IsNotExist(err), "a preview makes no workspace")

	_, err = wd.Session("s2")
	require.NoError(t, err)
	_, err = a.PreviewFile(context.Background(), Input{Session: "s2", Path: "../fresh/a.txt", PublicKey: k.PublicKey().Bytes()})
	require.ErrorContains(t, err, "outside the workdir")
	_, err = a.PreviewFile(context.Background(), Input{Session: "../s2", Path: "a.txt", PublicKey: k.PublicKey().Bytes()})
	require.Error(t, err)
	_, err = a.PreviewFile(context.Background(), Input{Session: "s2", Path: "a.txt", PublicKey: []byte("short")})
	require.True(t, err != nil && strings.Contains(err.Error(), "public key"))
}
