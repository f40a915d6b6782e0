package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/round"
)

func readScript(t *testing.T, name string) *round.ModelScript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../examples/scripted", name))
	require.NoError(t, err)
	s, err := round.ParseModelScript(b)
	require.NoError(t, err)
	return s
}

// The in-process client plays a script in its format's API, streamed: the
// turn follows the assistant turns of the conversation, and a request
// past the last turn is a 400 that says so.
func TestClientPlaysAScriptInItsAPI(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ file, api string }{
		{"chat.json", llm.APIChat}, {"anthropic.json", llm.APIAnthropic}, {"responses.json", llm.APIResponses},
	} {
		t.Run(tc.api, func(t *testing.T) {
			c, err := Client(readScript(t, tc.file))
			require.NoError(t, err)
			require.Equal(t, tc.api, c.API())
			var streamed strings.Builder
			if tc.api == llm.APIChat {
				resp, err := c.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "go"}}}, func(s string) { streamed.WriteString(s) })
				require.NoError(t, err)
				require.Equal(t, "I load the calculator first.", resp.Content)
				require.Equal(t, "I load the calculator first.", streamed.String())
				require.Len(t, resp.ToolCalls, 1)
				require.Equal(t, "find_tools", resp.ToolCalls[0].Function.Name)
				msgs := []llm.Message{{Role: "user", Content: "go"}, {Role: "assistant"}, {Role: "tool", Content: "x"}, {Role: "assistant"}, {Role: "tool", Content: "42"}}
				resp, err = c.Stream(ctx, llm.Request{Messages: msgs}, nil)
				require.NoError(t, err)
				require.Equal(t, "6*7 is 42.", resp.Content)
				require.Empty(t, resp.ToolCalls)
				_, err = c.Stream(ctx, llm.Request{Messages: append(msgs, llm.Message{Role: "assistant"})}, nil)
				requireRejected(t, err)
				return
			}
			user := json.RawMessage(`{"role": "user", "content": "go"}`)
			turn, err := c.StreamTurn(ctx, llm.TurnRequest{Input: []json.RawMessage{user}}, func(s string) { streamed.WriteString(s) })
			require.NoError(t, err)
			require.Equal(t, "I load the calculator first.", turn.Text)
			require.Equal(t, "I load the calculator first.", streamed.String())
			require.Len(t, turn.Calls, 1)
			require.Equal(t, "find_tools", turn.Calls[0].Function.Name)
			require.JSONEq(t, `{"query": "select:calculate"}`, turn.Calls[0].Function.Arguments)
			require.Equal(t, llm.StopTools, turn.Stop)
			// The turn as it goes back, and a result: the next turn.
			input := []json.RawMessage{user}
			if tc.api == llm.APIAnthropic {
				input = append(input, turn.Raw)
			} else {
				var items []json.RawMessage
				require.NoError(t, json.Unmarshal(turn.Raw, &items))
				input = append(input, items...)
			}
			turn, err = c.StreamTurn(ctx, llm.TurnRequest{Input: input}, nil)
			require.NoError(t, err)
			require.Equal(t, "run_tool", turn.Calls[0].Function.Name)
		})
	}
}

func requireRejected(t *testing.T, err error) {
	t.Helper()
	var se *llm.StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, http.StatusBadRequest, se.Code)
	require.Contains(t, se.Message, "the script has 3 turns and the model is asked for turn 4")
}

// A Func script sees the task and the last tool result.
func TestScriptSeesTaskAndLastResult(t *testing.T) {
	var got Request
	h := Handler(Func(func(r Request) (Turn, error) { got = r; return Turn{Text: "done"}, nil }), Options{})
	c, err := llm.New(llm.Config{BaseURL: "http://x.invalid/v1", Model: "m", HTTPClient: &http.Client{Transport: inProcess{h}}}, "M")
	require.NoError(t, err)
	_, err = c.Stream(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: "system", Content: "sys"}, {Role: "user", Content: "the task"}, {Role: "assistant"}, {Role: "tool", Content: "the result"}}}, nil)
	require.NoError(t, err)
	require.Equal(t, 2, got.Step)
	require.Equal(t, "the task", got.Task)
	require.Equal(t, "the result", got.Last)
	require.Equal(t, llm.APIChat, got.API)
	require.True(t, got.Stream)
	require.Equal(t, []Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "the task"}, {Role: "assistant"}, {Role: "tool", Content: "the result"}}, got.Messages)
	require.Equal(t, []Message{{Role: "tool", Content: "the result"}}, got.Results())
}
