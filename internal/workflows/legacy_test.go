package workflows

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/builtin"
)

// The unsigned rules of rounds recorded before the approvals version.
func TestPastRuleMatches(t *testing.T) {
	tests := []struct {
		tool, pattern, subject string
		want                   bool
	}{
		{"run_command", "git status", "git status", true},
		{"run_command", "git status", "git status && rm -rf /", false},
		{"run_command", "git *", "git log --oneline", true},
		{"run_command", "git *", "gitk", false},
		// The findings of the approvals issue: a wildcard over the text.
		{"run_command", "git *", "git status; touch X", false},
		{"run_command", "git *", "git $(touch X)", false},
		{"run_command", "git *", "git log | sh", false},
		{"run_command", "ls *.txt", "ls ; touch X #.txt", false},
		{"run_command", "ls *.txt", "ls *.txt", true},
		{"edit_file", "*.md", "a.md", true},
		{"edit_file", "**/*.md", "docs/a/b.md", true},
		{"edit_file", "*.md", "docs/a/b.md", false},
		{"edit_file", "src/*/x.go", "src/a/b/x.go", false},
		{"edit_file", "src/**", "src/../../etc/passwd", false},
		{"http_request", "GET https://api.example.com/*", "GET https://api.example.com/v1", true},
		{"http_request", "GET https://api.example.com/*", "GET https://api.example.com.evil.net/", false},
		{"http_request", "GET https://api.example.com/*", "GET https://api.example.com@evil.net/", false},
		{"fetch_page", "GET https://docs.example.com/*", "https://docs.example.com/a", true},
		{"download_file", "https://x.com/* **", "a.tgz", false},
		{"download_file", "a.tgz", "a.tgz", true},
		{"t", "*", "anything", true},
		{"t", "a*", "abc", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, pastRuleMatches(tt.tool, tt.pattern, tt.tool, tt.subject), "%s: %s ~ %s", tt.tool, tt.pattern, tt.subject)
	}
	require.False(t, pastRuleMatches("t", "*", "u", "x"), "rules are per tool")
}

// TestPastFactsAreTheDefinitions: the built-ins' definitions give a new
// round the facts that older rounds knew by name, so both decide alike.
func TestPastFactsAreTheDefinitions(t *testing.T) {
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	reg := tools.NewRegistry()
	b, err := builtin.Register(reg, builtin.Config{Workdir: wd, SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	for _, d := range reg.Definitions() {
		want, known := pastFacts[d.Name]
		if !known {
			continue // newer than every round recorded without facts
		}
		got := pastFact{kind: d.Rules, reason: d.Reason, readsPaths: d.ReadsPaths, touchesPath: d.TouchesPath, cached: d.CacheKey != nil}
		require.Equal(t, want, got, d.Name)
	}
	for name := range pastFacts {
		_, ok := reg.Lookup(name)
		require.True(t, ok, name)
	}
}
