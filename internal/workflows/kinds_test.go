package workflows

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// TestKindsAreOneTable: the round's table has one line for each
// tools.Kind, in its order, the last taking every call; a definition and
// the snapshot the catalog makes of it name the same kind; a definition
// that sets the facts of two kinds is refused (docs/adding-a-tool.md).
func TestKindsAreOneTable(t *testing.T) {
	var kinds []tools.Kind
	for _, k := range toolKinds {
		kinds = append(kinds, k.kind)
	}
	require.Equal(t, tools.Kinds(), kinds)
	require.Equal(t, tools.KindActivity, toolKinds[len(toolKinds)-1].kind)

	c := &RegistryCatalog{}
	for _, d := range []tools.Definition{
		{Name: "ask", Interactive: true},
		{Name: "sub", ChildRun: true},
		{Name: "bot", Chatbot: true},
		{Name: "mine", Remote: &tools.Remote{Queue: "q"}},
		{Name: "plain"},
		{Name: "mcp_x", Source: tools.SourceMCP},
	} {
		require.Equal(t, d.Kind(), c.info(&d).kind(), d.Name)
	}
	require.Equal(t, tools.KindWait, ToolInfo{Client: true}.kind(), "a client tool waits for the client")

	reg := tools.NewRegistry()
	err := reg.Register(tools.Definition{Name: "both", Description: "x", Parameters: json.RawMessage(`{"type":"object"}`), Interactive: true, ChildRun: true,
		Handler: func(_ context.Context, _ tools.Request) (tools.Result, error) { return tools.Result{}, nil }})
	require.ErrorContains(t, err, "more than one kind")
}
