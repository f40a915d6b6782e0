package keyfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var testKind = Kind{Prefix: "test: key", FileName: "test.key", EnvKey: "TEST_KEY", EnvFile: "TEST_KEY_FILE"}

func TestLoadCreatesTheFileOnceAndReadsItAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "test.key")
	first, err := testKind.Load("", path)
	require.NoError(t, err)
	require.Len(t, first, Size)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	again, err := testKind.Load("", path)
	require.NoError(t, err)
	require.Equal(t, first, again, "the second load reads the key the first one wrote")
}

func TestLoadRefusesAFileOthersCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.key")
	require.NoError(t, os.WriteFile(path, []byte(Encode(make([]byte, Size))), 0o644))
	_, err := testKind.Load("", path)
	require.ErrorContains(t, err, "test: key file "+path+" is open to other users")
}

func TestTextWinsAndIsChecked(t *testing.T) {
	key := make([]byte, Size)
	key[0] = 7
	got, err := testKind.Load(Encode(key), "/nonexistent/never/read")
	require.NoError(t, err)
	require.Equal(t, key, got)
	_, err = testKind.Load("c2hvcnQ=", "")
	require.ErrorContains(t, err, "test: key: TEST_KEY: key is 5 bytes, want 32")
	_, err = testKind.Load("not base64!", "")
	require.ErrorContains(t, err, "key is not base64")
}

func TestPreviousKeyIsOptionalAndChecked(t *testing.T) {
	none, err := testKind.LoadPrevious("  ")
	require.NoError(t, err)
	require.Nil(t, none, "no previous key set: none")
	key, err := Generate()
	require.NoError(t, err)
	got, err := testKind.LoadPrevious(Encode(key))
	require.NoError(t, err)
	require.Equal(t, key, got)
	_, err = testKind.LoadPrevious("c2hvcnQ=")
	require.ErrorContains(t, err, "TEST_KEY_PREVIOUS", "the error names the variable")
}
