package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
)

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
