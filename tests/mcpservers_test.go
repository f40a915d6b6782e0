package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildMCPServer builds the test MCP server tools/mcp/internal/pkg into
// dir as name, and returns its path.
func buildMCPServer(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	server := filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", server, "../tools/mcp/internal/"+pkg).CombinedOutput()
	require.NoError(t, err, string(out))
	return server
}

// writeMCPConfig writes dir/mcp.json, a worker's MCP_CONFIG with servers
// (each server's name and entry), and returns its path.
func writeMCPConfig(t *testing.T, dir string, servers map[string]any) string {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	path := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(path, cfg, 0o600))
	return path
}
