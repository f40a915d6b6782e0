package workflows_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// TestANewKindIsOneLine: a kind the round did not know runs its tool's
// calls once its line is in the table, with nothing else of the round
// changed, and its calls are settled as any other's (P3); without the
// line, the tool is one the worker lacks (docs/adding-a-tool.md).
func TestANewKindIsOneLine(t *testing.T) {
	echo := tools.Definition{
		Name: "echo", Description: "Say the arguments back.", Kind: "echo", SideEffect: tools.ReadOnly, Concurrent: true,
		Parameters: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{}, nil // never reached: the kind runs its calls
		},
	}
	in := input(call("e1", "echo", `{"say":"hi"}`), call("c1", "calculate", `{"expression":"2+2"}`))
	in.State.Fetched = append(in.State.Fetched, "echo")

	h := newHarnessWith(t, 4, echo)
	res := h.run(t, in)
	require.Equal(t, round.StatusUnknown, res.Results[0].Status, "no line runs kind echo: %s", res.Results[0].Content)
	require.Contains(t, res.Results[0].Content, `kind "echo"`)
	require.Equal(t, round.StatusOK, res.Results[1].Status)

	workflows.AddKind(t, "echo", func(args string) string { return "echo " + args })
	h = newHarnessWith(t, 4, echo)
	res = h.run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Equal(t, `echo {"say":"hi"}`, res.Results[0].Content)
	require.Equal(t, round.StatusOK, res.Results[1].Status)
}
