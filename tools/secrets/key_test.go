package secrets

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeKey(t *testing.T) {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(i * 7)
	}
	std := EncodeKey(key)
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{name: "standard", text: std},
		{name: "surrounding space", text: "  " + std + "\n"},
		{name: "unpadded", text: std[:len(std)-1]},
		{name: "too short", text: EncodeKey(key[:16]), wantErr: "key is 16 bytes, want 32"},
		{name: "not base64", text: "not a key!", wantErr: "not base64"},
		{name: "empty", text: "", wantErr: "key is 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeKey(tt.text)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, key, got)
		})
	}
}

func TestLoadKeyFromConfigKey(t *testing.T) {
	key := testKey(t)
	got, err := Config{Key: EncodeKey(key), KeyFile: filepath.Join(t.TempDir(), "unused")}.LoadKey()
	require.NoError(t, err)
	require.Equal(t, key, got)

	_, err = Config{Key: "abc"}.LoadKey()
	require.ErrorContains(t, err, EnvKey)
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvKey, "k")
	t.Setenv(EnvKeyFile, "/some/file")
	t.Setenv(EnvKeyPrevious, "p")
	require.Equal(t, Config{Key: "k", KeyFile: "/some/file", Previous: "p"}, ConfigFromEnv())
}

func TestLoadKeyCreatesFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "secret.key")
	cfg := Config{KeyFile: path}
	first, err := cfg.LoadKey()
	require.NoError(t, err)
	require.Len(t, first, KeySize)

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	again, err := cfg.LoadKey()
	require.NoError(t, err)
	require.Equal(t, first, again)

	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

func TestLoadKeyConcurrentCreatorsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = Config{KeyFile: path}.LoadKey()
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, keys[0], keys[i])
	}
}

func TestLoadKeyRefusesOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	require.NoError(t, os.WriteFile(path, []byte(EncodeKey(testKey(t))), 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	_, err := Config{KeyFile: path}.LoadKey()
	require.ErrorContains(t, err, "chmod 600")
}

func TestLoadKeyRejectsBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	require.NoError(t, os.WriteFile(path, []byte("garbage!"), 0o600))
	_, err := Config{KeyFile: path}.LoadKey()
	require.ErrorContains(t, err, "not base64")
}

func TestDefaultKeyFile(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	got, err := DefaultKeyFile()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(xdg, "toolround", "secret.key"), got)

	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", home)
	got, err = DefaultKeyFile()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, ".config", "toolround", "secret.key"), got)

	key, err := Config{}.LoadKey()
	require.NoError(t, err)
	again, err := Config{KeyFile: got}.LoadKey()
	require.NoError(t, err)
	require.Equal(t, key, again)
}
