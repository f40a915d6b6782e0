package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/console"
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

// O3: one of several consoles refuses to start with anything of its own
// (generated tokens, no session key, a link key from a file), naming each.
func TestReplicasNeedSharedKeysO3(t *testing.T) {
	key := make([]byte, 32)
	tokens := []console.Token{{Secret: "abcdefghijklmnop", Name: "alice", Role: console.RoleApprover}}
	t.Setenv("CONSOLE_REPLICAS", "2")
	t.Setenv("NOTIFY_LINK_KEY", "")
	err := replicasReady(nil, "generated-token", nil, nil)
	require.EqualError(t, err, "CONSOLE_REPLICAS=2: every console must share CONSOLE_TOKENS, CONSOLE_SESSION_KEY, NOTIFY_LINK_KEY from the environment; none is generated")
	t.Setenv("NOTIFY_LINK_KEY", "AAAA")
	require.ErrorContains(t, replicasReady(tokens, "", key, nil), "need Redis")
	t.Setenv("CONSOLE_REPLICAS", "1")
	require.NoError(t, replicasReady(nil, "generated-token", nil, nil))
	t.Setenv("CONSOLE_REPLICAS", "two")
	require.ErrorContains(t, replicasReady(tokens, "", key, nil), "want a number")

	t.Setenv("CONSOLE_SESSION_KEY", "c2hvcnQ=")
	_, err = sessionKey()
	require.ErrorContains(t, err, "32 bytes")
}

// The one-time sign-in link is printed for CONSOLE_SIGNIN's token, else
// for the generated one; a console with CONSOLE_TOKENS and no
// CONSOLE_SIGNIN prints none.
func TestSignInLinkIsForCONSOLE_SIGNINOrTheGeneratedToken(t *testing.T) {
	t.Setenv("CONSOLE_SIGNIN", "")
	require.Equal(t, "console", signInName("generated-token"))
	require.Equal(t, "", signInName(""))
	t.Setenv("CONSOLE_SIGNIN", "alice")
	require.Equal(t, "alice", signInName(""))
	require.Equal(t, "alice", signInName("generated-token"))
}
