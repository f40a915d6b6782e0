package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMalformedSessionsStopTheConsole: a malformed sessions= value is one
// line naming the file and its line, and no tokens.
func TestMalformedSessionsStopTheConsole(t *testing.T) {
	for _, bad := range []string{"sessions=", "sessions=team-a/*", "sessions=[team", "sessions=a,,b", "scope=team-a"} {
		path := filepath.Join(t.TempDir(), "tokens")
		require.NoError(t, os.WriteFile(path, []byte("# tokens\nabcdefghijklmnop alice approver\nqrstuvwxyz012345 bot agent "+bad+"\n"), 0o600))
		t.Setenv("CONSOLE_TOKENS", path)
		ts, _, err := loadTokens()
		require.Error(t, err, bad)
		require.Nil(t, ts)
		require.Contains(t, err.Error(), path, bad)
		require.Contains(t, err.Error(), "line 3", bad)
		require.NotContains(t, err.Error(), "\n", bad)
	}

	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("qrstuvwxyz012345 bot agent sessions=team-a-*,shared\n"), 0o600))
	t.Setenv("CONSOLE_TOKENS", path)
	ts, _, err := loadTokens()
	require.NoError(t, err)
	require.Equal(t, []string{"team-a-*", "shared"}, ts[0].Sessions)
}
