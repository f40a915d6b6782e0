package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
)

func TestAllowRule(t *testing.T) {
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
		require.Equal(t, tt.want, AllowRule{Tool: tt.tool, Pattern: tt.pattern}.Matches(tt.tool, tt.subject), "%s: %s ~ %s", tt.tool, tt.pattern, tt.subject)
	}
	require.False(t, AllowRule{Tool: "t", Pattern: "*"}.Matches("u", "x"), "rules are per tool")
}

func TestApprovalCall(t *testing.T) {
	get := &Definition{Name: "http_request", SideEffect: AtMostOnce, Effect: func(a json.RawMessage) SideEffect {
		if strings.Contains(string(a), "POST") {
			return AtMostOnce
		}
		return ReadOnly
	}}
	c := ApprovalCall(get, `{"url":"https://x/"}`, json.RawMessage(`{"url":"https://x/"}`))
	require.Equal(t, approval.Call{Tool: "http_request", Args: `{"url":"https://x/"}`, ReadOnly: true}, c)
	require.False(t, approval.Needs(c, approval.Policy{}).Ask)
	require.False(t, ApprovalCall(get, `{}`, json.RawMessage(`{"method":"POST"}`)).ReadOnly)

	mcp := &Definition{Name: "mcp_fs_rm", SideEffect: ReadOnly, Source: SourceMCP}
	c = ApprovalCall(mcp, `{}`, json.RawMessage(`{}`))
	require.True(t, c.MCP && c.ReadOnly && !c.TrustReadOnlyHints)
	require.True(t, approval.Needs(c, approval.Policy{}).Ask, "an untrusted server's readOnlyHint does not skip approval")
	mcp.TrustReadOnlyHints = true
	require.False(t, approval.Needs(ApprovalCall(mcp, `{}`, json.RawMessage(`{}`)), approval.Policy{}).Ask)

	todo := &Definition{Name: "write_todo", SideEffect: AtMostOnce, Confirm: ConfirmNever}
	require.True(t, ApprovalCall(todo, `{}`, nil).ConfirmNever)
	read := &Definition{Name: "read_files", SideEffect: ReadOnly, Sensitive: func(json.RawMessage) bool { return true }}
	require.True(t, ApprovalCall(read, `{}`, nil).Sensitive)
}
