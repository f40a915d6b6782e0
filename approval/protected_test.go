package approval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFileRulesNeverMatchProtected: no file-tool rule, whatever its glob,
// matches a path of the protected set (T12, C4), read after cleaning and in
// any letter case.
func TestFileRulesNeverMatchProtected(t *testing.T) {
	protected := []string{
		".git/config", ".git/info/exclude", "./.git/HEAD", "a/../.git/config", ".git", ".git/",
		"sub/.GIT/hooks/pre-commit", ".Git/Config", "vendor/x/.git/objects/ab/cd",
		"bare.git/config", "repo/config", "repo/hooks/pre-commit", "repo/hooks", "repo/HOOKS/Post-Checkout",
		".gitattributes", "src/.gitattributes", "sub/.GitModules", ".gitmodules",
		".toolround/state", "./.toolround", "x/.toolround/y",
		".env", ".env.local", "app/.ENV.production", "certs/server.pem", "certs/SERVER.PEM",
		"id_rsa", "home/.ssh2/id_ed25519.pub", "keys/ID_ecdsa",
	}
	globs := []string{"**", "**/*", "*", ".git/**", ".git/config", "**/config", "**/.gitattributes",
		".toolround/**", ".env*", "**/*.pem", "**/id_*", "{.git,src}/**", "[.]git/**", "**/.env*", "**/*.PEM"}
	for _, p := range protected {
		require.True(t, ProtectedPath(p), "ProtectedPath(%q)", p)
		for _, g := range globs {
			for _, tool := range []string{"edit_file", "write_file", "read_files", "remove_file"} {
				require.False(t, MatchAt(TablesCurrent, []Rule{{Tool: tool, Pattern: g}}, KindPath, tool, jsonArgs(map[string]any{"path": p, "new_text": "x"})),
					"%s %q ~ %q", tool, g, p)
			}
			dl := []Rule{{Tool: "download_file", Pattern: "https://example.com/* " + g}}
			require.False(t, MatchAt(TablesCurrent, dl, KindDownload, "download_file", jsonArgs(map[string]any{"url": "https://example.com/x", "path": p})),
				"download_file %q ~ %q", g, p)
		}
		require.False(t, MatchAt(TablesCurrent, []Rule{{Tool: "read_files", Pattern: "**"}}, KindPath, "read_files", jsonArgs(map[string]any{"paths": []string{"ok.md", p}})),
			"read_files with %q", p)
	}
	for _, p := range []string{".gitignore", "src/config.go", "src/hooks/useThing.ts", "docs/env.md", "environment/x", "src/a.go", "pem/x.txt", "ids/x"} {
		require.False(t, ProtectedPath(p), "ProtectedPath(%q)", p)
		require.True(t, MatchAt(TablesCurrent, []Rule{{Tool: "edit_file", Pattern: "**"}}, KindPath, "edit_file", jsonArgs(map[string]any{"path": p})), "%q", p)
	}
}

// TestProtectedPathsEarlierTables: rounds recorded with TablesV2 or before
// replay as they decided, where a rule naming .git matched inside it.
func TestProtectedPathsEarlierTables(t *testing.T) {
	r := []Rule{{Tool: "edit_file", Pattern: ".git/info/exclude"}}
	args := jsonArgs(map[string]any{"path": ".git/info/exclude"})
	require.True(t, MatchAt(TablesV2, r, KindPath, "edit_file", args))
	require.True(t, MatchAt(TablesLegacy, r, KindPath, "edit_file", args))
	require.False(t, MatchAt(TablesV3, r, KindPath, "edit_file", args))
	r = []Rule{{Tool: "edit_file", Pattern: "**"}}
	require.True(t, MatchAt(TablesV2, r, KindPath, "edit_file", jsonArgs(map[string]any{"path": ".env"})))
	require.False(t, MatchAt(TablesV3, r, KindPath, "edit_file", jsonArgs(map[string]any{"path": ".env"})))
}
