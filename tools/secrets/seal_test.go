package secrets

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := GenerateKey()
	require.NoError(t, err)
	return key
}

func TestSealOpenRoundTrip(t *testing.T) {
	key := testKey(t)
	for _, plain := range []string{"", "hunter2", "ünïcode ✓ 秘密", strings.Repeat("x", 100_000), "sealed:v1:not really"} {
		sealed, err := Seal(key, plain)
		require.NoError(t, err)
		require.True(t, IsSealed(sealed))
		if plain != "" {
			require.NotContains(t, sealed[len(SealedPrefix):], plain)
		}
		got, err := Open(key, sealed)
		require.NoError(t, err)
		require.Equal(t, plain, got)
	}
}

func TestSealUsesFreshNonces(t *testing.T) {
	key := testKey(t)
	a, err := Seal(key, "same")
	require.NoError(t, err)
	b, err := Seal(key, "same")
	require.NoError(t, err)
	require.NotEqual(t, a, b)
}

func TestOpenFailures(t *testing.T) {
	key := testKey(t)
	sealed, err := Seal(key, "hunter2")
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, SealedPrefix))
	require.NoError(t, err)
	raw[len(raw)-1] ^= 0xff
	tampered := SealedPrefix + base64.StdEncoding.EncodeToString(raw)

	tests := []struct {
		name    string
		key     []byte
		sealed  string
		wantErr string
		isOpen  bool
	}{
		{name: "wrong key", key: testKey(t), sealed: sealed, isOpen: true},
		{name: "tampered", key: key, sealed: tampered, isOpen: true},
		{name: "not sealed", key: key, sealed: "hunter2", wantErr: "does not start with"},
		{name: "bad base64", key: key, sealed: SealedPrefix + "!!!", wantErr: "not valid base64"},
		{name: "too short", key: key, sealed: SealedPrefix + "AAAA", wantErr: "too short"},
		{name: "short key", key: []byte("short"), sealed: sealed, wantErr: "want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Open(tt.key, tt.sealed)
			require.Error(t, err)
			require.Empty(t, got)
			require.NotContains(t, err.Error(), "hunter2")
			if tt.isOpen {
				require.True(t, errors.Is(err, ErrOpen), err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestSealRejectsBadKey(t *testing.T) {
	_, err := Seal(make([]byte, 16), "x")
	require.ErrorContains(t, err, "want 32")
}
