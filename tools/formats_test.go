package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

func TestToolsetInEachFormat(t *testing.T) {
	ts := tools.Toolset{Provider: "openai", Deferred: []string{"read_files"}, TurnContext: "More tools are available by name: read_files.",
		Tools: []tools.ToolSpec{
			{Type: "function", Function: tools.FunctionSpec{Name: "find_tools", Description: "Find tools.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)}},
			{Type: "function", Function: tools.FunctionSpec{Name: "bare"}},
		}}
	want := map[round.Format]string{
		round.FormatOpenAI: `[{"type":"function","function":{"name":"find_tools","description":"Find tools.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}},
			{"type":"function","function":{"name":"bare"}}]`,
		round.FormatAnthropic: `[{"name":"find_tools","description":"Find tools.","input_schema":{"type":"object","properties":{"query":{"type":"string"}}}},
			{"name":"bare","input_schema":{"type":"object","properties":{}}}]`,
		round.FormatResponses: `[{"type":"function","name":"find_tools","description":"Find tools.","parameters":{"type":"object","properties":{"query":{"type":"string"}}},"strict":false},
			{"type":"function","name":"bare","parameters":{"type":"object","properties":{}},"strict":false}]`,
	}
	for f, arr := range want {
		got, err := ts.In(f)
		require.NoError(t, err)
		b, err := json.Marshal(got.Tools)
		require.NoError(t, err)
		require.JSONEq(t, arr, string(b), f)
		require.Equal(t, f, got.Format)
		require.Equal(t, ts.Deferred, got.Deferred, "the deferred names are the same in every format")
		require.Equal(t, ts.TurnContext, got.TurnContext)
	}
	_, err := ts.In("gemini")
	require.ErrorContains(t, err, `format "gemini" is not one of openai, anthropic, responses`)
}
