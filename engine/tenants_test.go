package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sessions of one scoped token share a tenant; another token's sessions,
// and sessions no scoped token covers, are in others (H10, K4).
func TestTenantsFollowTheTokensScopes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("aaaaaaaaaaaaaaaa alice approver\n"+
		"bbbbbbbbbbbbbbbb team-a agent sessions=a-*\n"+
		"cccccccccccccccc team-b agent sessions=b-*,shared-b\n"), 0o600))
	tenant, err := tenants(path)
	require.NoError(t, err)
	require.Equal(t, tenant("a-1"), tenant("a-2"))
	require.NotEqual(t, tenant("a-1"), tenant("b-1"))
	require.Equal(t, tenant("b-1"), tenant("shared-b"))
	require.Equal(t, "", tenant("other"))
	require.NotEqual(t, "", tenant("a-1"))

	none, err := tenants("")
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = tenants(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "CONSOLE_TOKENS")
}
