package round

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOutputWithoutTheTurnRebuildsTheSameResult (H3): a round of today
// leaves the turn out of its output, and the result rebuilt with the input
// is the one an output that held it gives, in every format.
func TestOutputWithoutTheTurnRebuildsTheSameResult(t *testing.T) {
	inputs := map[Format]string{
		FormatOpenAI:    `{` + formatHead + `,"assistant":{"role":"assistant","content":"x","tool_calls":[{"id":"toolu_01","type":"function","function":{"name":"read_files","arguments":"{}"}},{"id":"toolu_02","type":"function","function":{"name":"calculate","arguments":"{}"}}]}}`,
		FormatAnthropic: `{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`,
		FormatResponses: `{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`,
	}
	for f, raw := range inputs {
		t.Run(string(f), func(t *testing.T) {
			in, err := ParseInput([]byte(raw))
			require.NoError(t, err)
			calls := in.ToolCalls()
			res := Result{WorkflowID: "w", Results: []CallResult{
				{CallID: calls[0].ID, Tool: "read_files", Status: StatusOK, Content: "hello", OperationID: "w/run-1/" + calls[0].ID},
				{CallID: calls[1].ID, Tool: "calculate", Status: StatusError, Content: "no"},
			}}
			res.History = History(in.ChatAssistant(), nil)
			sc := ScopeOf(in, "w")
			now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
			res.Events = []Event{sc.RoundStarted(now, 2), sc.ConfirmationRequested(now, calls[1].ID, "calculate", "asks"),
				sc.ToolResult(now, res.Results[0]), sc.ToolResult(now, res.Results[1])}
			full := NewOutput(in, res)
			require.False(t, full.TurnLeftOut())

			lean := NewOutput(in, res)
			lean.Lean()
			require.True(t, lean.TurnLeftOut())
			b, err := json.Marshal(lean)
			require.NoError(t, err)
			require.NotContains(t, string(b), `"assistant"`, "no assistant message in the output")
			require.NotContains(t, string(b), `"turn"`)
			require.NotContains(t, string(b), `"w/`, "event and operation ids without the workflow id")
			require.Equal(t, "w/run-1/"+calls[0].ID, full.Results[0].OperationID, "Lean changes a copy of the results")
			require.NotContains(t, string(b), `"tool":"read_files","status"`, "a tool_result event without its result's tool and status")
			var back Output
			require.NoError(t, json.Unmarshal(b, &back))
			require.True(t, back.TurnLeftOut(), "the shape survives the payload")

			want := full.Result()
			require.Equal(t, want, back.WithTurn(in).Result())
			require.Equal(t, want, full.WithTurn(&Input{}).Result(), "an output that holds its turn keeps it")
			require.Greater(t, len(want.History), len(want.Messages), "the turn, then the messages")
			require.Equal(t, want.Messages, want.History[len(want.History)-len(want.Messages):])
		})
	}
}
