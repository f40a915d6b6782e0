package console

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestGatewayToolNamesZ2: names are 1-64 characters of [A-Za-z0-9_.-]; a
// longer or stranger upstream name is shortened with a hash suffix, and
// two names never collide into one.
func TestGatewayToolNamesZ2(t *testing.T) {
	ok := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	require.Equal(t, "read_files", GatewayToolName("read_files"))
	long := "mcp__" + strings.Repeat("server", 10) + "__" + strings.Repeat("tool", 10)
	a, b := GatewayToolName(long+"1"), GatewayToolName(long+"2")
	require.Regexp(t, ok, a)
	require.NotEqual(t, a, b)
	require.Regexp(t, ok, GatewayToolName("weird name/with:chars"))
	require.NotEqual(t, GatewayToolName("a b"), GatewayToolName("a_b"))
}

// TestGatewayPicksAndAnnotatesZ2: the built-ins MCP_GATEWAY_TOOLS allows
// (default the read-only ones, edit_file and run_command, never agent
// tools), every tool of another source, and annotations that say what
// this system does.
func TestGatewayPicksAndAnnotatesZ2(t *testing.T) {
	all := []round.GatewayTool{
		{Spec: round.FunctionSpec{Name: "read_files"}, Source: "builtin", ReadOnly: true, Workspace: true},
		{Spec: round.FunctionSpec{Name: "edit_file"}, Source: "builtin", Workspace: true},
		{Spec: round.FunctionSpec{Name: "remove_file"}, Source: "builtin", Workspace: true},
		{Spec: round.FunctionSpec{Name: "subagents"}, Source: "builtin", ReadOnly: true, Agent: true},
		{Spec: round.FunctionSpec{Name: "lookup"}, Source: "user", ReadOnly: true},
		{Spec: round.FunctionSpec{Name: "mcp__s__write"}, Source: "mcp"},
	}
	names := func(g *gateway) []string {
		var out []string
		for _, t := range g.pick(all) {
			out = append(out, t.name)
		}
		return out
	}
	require.Equal(t, []string{"read_files", "edit_file", "lookup", "mcp__s__write"}, names(&gateway{}))
	require.Equal(t, []string{"remove_file", "lookup", "mcp__s__write"}, names(&gateway{opts: GatewayOptions{Tools: []string{"remove_file"}}}))

	ro := annotations(all[0])
	require.True(t, ro.ReadOnlyHint && ro.IdempotentHint)
	require.False(t, *ro.DestructiveHint || *ro.OpenWorldHint)
	ed := annotations(all[1])
	require.False(t, ed.ReadOnlyHint || ed.IdempotentHint)
	require.True(t, *ed.DestructiveHint)
	require.False(t, *ed.OpenWorldHint)
	up := annotations(all[5])
	require.True(t, *up.OpenWorldHint && *up.DestructiveHint)
	require.False(t, up.ReadOnlyHint)
}
