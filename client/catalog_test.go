package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/client/internal/catalogsnap"
	"github.com/toolround/toolround/tools"
)

func TestCatalogSnapshotIsCurrent(t *testing.T) {
	want, err := catalogsnap.Build()
	require.NoError(t, err)
	require.Equal(t, string(want), string(catalogJSON),
		"client/catalog.json differs from the built-in tools: run `go generate ./client`")
}

func TestToolsPerProvider(t *testing.T) {
	names := func(ts tools.Toolset) []string {
		var out []string
		for _, s := range ts.Tools {
			out = append(out, s.Function.Name)
		}
		return out
	}
	openai, err := Tools("openai")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ask_user", "chat_history", "find_tools", "read_result", "reasoning_guide", "run_tool", "write_result", "write_todo"}, names(openai),
		"S1: the array of other providers holds the always-loaded tools and run_tool")
	require.Contains(t, openai.Deferred, "read_files")
	require.Contains(t, openai.TurnContext, "read_files")
	for _, s := range openai.Tools {
		require.NotEmpty(t, s.Function.Parameters, s.Function.Name)
	}

	cc, err := Tools("claude-code", tools.ToolSpec{Type: "function", Function: tools.FunctionSpec{Name: "open_editor"}})
	require.NoError(t, err)
	require.NotContains(t, names(cc), "run_tool", "S2: claude-code has every tool but run_tool")
	require.Contains(t, names(cc), "read_files")
	require.Contains(t, names(cc), "open_editor", "client tools join the array")
	require.Empty(t, cc.Deferred)
}

func TestCatalogIsANewRegistryEachTime(t *testing.T) {
	reg, err := Catalog()
	require.NoError(t, err)
	require.NoError(t, reg.Register(tools.Definition{Name: "mcp_x_echo", Handler: listOnly}))
	require.Contains(t, reg.ToolsFor("openai", nil).Deferred, "mcp_x_echo")
	ts, err := Tools("openai")
	require.NoError(t, err)
	require.NotContains(t, ts.Deferred, "mcp_x_echo", "adding to one catalog changes no other")
	_, err = listOnly(context.Background(), tools.Request{})
	require.Error(t, err, "a listed tool does not run")
}
