package mcp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

// TestTrustReadOnlyHints: a server's readOnlyHint reaches the definition as
// a read-only class, but only the operator's trust_read_only_hints marks it
// as able to skip confirmation (T5).
func TestTrustReadOnlyHints(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {
		"a": {"url": "https://example.test/mcp", "trust_read_only_hints": true},
		"b": {"url": "https://example.test/mcp"}}}`))
	require.NoError(t, err)
	require.True(t, cfg.Servers[0].TrustReadOnlyHints)
	require.False(t, cfg.Servers[1].TrustReadOnlyHints)

	srv := fixture.New()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	_, reg := connect(t, Config{Servers: []ServerConfig{
		{Name: "trusted", URL: ts.URL, TrustReadOnlyHints: true},
		{Name: "other", URL: ts.URL},
	}})
	trusted, ok := reg.Lookup("mcp_trusted_echo")
	require.True(t, ok)
	require.Equal(t, tools.ReadOnly, trusted.SideEffect)
	require.True(t, trusted.TrustReadOnlyHints)
	other, ok := reg.Lookup("mcp_other_echo")
	require.True(t, ok)
	require.Equal(t, tools.ReadOnly, other.SideEffect)
	require.False(t, other.TrustReadOnlyHints)
}
