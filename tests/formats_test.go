package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestRoundsInEachFormatThroughStarter submits an Anthropic round and then,
// in the same run, a Responses round through the real starter binary, as
// JSON written the way those APIs write their responses, and checks that the
// messages and the history come back in the caller's format (F1, F2).
func TestRoundsInEachFormatThroughStarter(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	anthropic := fmt.Sprintf(`{"session_id":%q,"run_id":"run-1","round":1,"provider":"openai","format":"anthropic",
		"assistant":{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","stop_reason":"tool_use","stop_sequence":null,
			"usage":{"input_tokens":5,"output_tokens":9},
			"content":[
				{"type":"thinking","thinking":"I need a calculator.","signature":"EqQBCkYIARgCIkA="},
				{"type":"text","text":"Let me find the tool."},
				{"type":"tool_use","id":"toolu_01","name":"find_tools","input":{"query":"select:calculate"}},
				{"type":"tool_use","id":"toolu_02","name":"read_files","input":{"paths":["a.txt"]}}]}}`, e.session)
	r := e.starter(ctx, anthropic, "round", "-")
	require.Equal(t, 0, r.code, r.stderr)
	var res1 round.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res1))
	require.Equal(t, round.FormatAnthropic, res1.Format)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusRefused}, []round.Status{res1.Results[0].Status, res1.Results[1].Status})
	require.Equal(t, names.WorkflowID(e.session, "run-1", 1), res1.WorkflowID)

	var out struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   string `json:"content"`
				IsError   bool   `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
		History []json.RawMessage `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out.Messages, 1, "one user message")
	m := out.Messages[0]
	require.Equal(t, "user", m.Role)
	require.Len(t, m.Content, 2)
	require.Equal(t, "tool_result", m.Content[0].Type)
	require.Equal(t, "toolu_01", m.Content[0].ToolUseID)
	require.False(t, m.Content[0].IsError)
	require.Contains(t, m.Content[0].Content, "calculate")
	require.Equal(t, "toolu_02", m.Content[1].ToolUseID)
	require.True(t, m.Content[1].IsError, "a refused call is an error for the model")
	require.Len(t, out.History, 2)
	require.JSONEq(t, `{"role":"assistant","content":[
		{"type":"thinking","thinking":"I need a calculator.","signature":"EqQBCkYIARgCIkA="},
		{"type":"text","text":"Let me find the tool."},
		{"type":"tool_use","id":"toolu_01","name":"find_tools","input":{"query":"select:calculate"}},
		{"type":"tool_use","id":"toolu_02","name":"read_files","input":{"paths":["a.txt"]}}]}`, string(out.History[0]))

	// Round 2 of the run, in format responses, with the state round 1 gave.
	state, err := json.Marshal(res1.State)
	require.NoError(t, err)
	responses := fmt.Sprintf(`{"session_id":%q,"run_id":"run-1","round":2,"provider":"openai","format":"responses","state":%s,
		"output":[
			{"type":"reasoning","id":"rs_01","summary":[],"encrypted_content":"gAAAAB"},
			{"type":"function_call","id":"fc_01","call_id":"call_01","name":"run_tool","arguments":"{\"name\":\"calculate\",\"args\":{\"expression\":\"6*7\"}}","status":"completed"},
			{"type":"function_call","id":"fc_02","call_id":"call_02","name":"run_tool","arguments":"{\"name\":\"calculate\",\"args\":{\"expression\":\"6 * 7\"}}","status":"completed"}]}`,
		e.session, state)
	r = e.starter(ctx, responses, "round", "-")
	require.Equal(t, 0, r.code, r.stderr)
	var res2 round.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res2))
	require.Equal(t, round.FormatResponses, res2.Format)
	require.Equal(t, round.StatusOK, res2.Results[0].Status, res2.Results[0].Content)
	require.True(t, res2.Results[0].ViaRunTool)
	var out2 struct {
		Messages []map[string]any `json:"messages"`
		History  []map[string]any `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out2))
	require.Len(t, out2.Messages, 2)
	for i, id := range []string{"call_01", "call_02"} {
		require.Equal(t, "function_call_output", out2.Messages[i]["type"])
		require.Equal(t, id, out2.Messages[i]["call_id"])
		require.Contains(t, out2.Messages[i]["output"], "42")
	}
	require.Len(t, out2.History, 5, "the three output items as given, then the two outputs")
	require.Equal(t, "reasoning", out2.History[0]["type"])
	require.Equal(t, "gAAAAB", out2.History[0]["encrypted_content"])
	require.Equal(t, out2.Messages[1], out2.History[4])

	// A turn whose shape no format reads is an input error naming the
	// field, and uses up nothing: the same round number then runs.
	bad := fmt.Sprintf(`{"session_id":%q,"run_id":"run-1","round":3,"format":"anthropic",
		"assistant":{"role":"assistant","content":[],"tool_calls":[{"id":"a","function":{"name":"calculate"}}]}}`, e.session)
	r = e.starter(ctx, bad, "round", "-")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "assistant.tool_calls is the openai shape")
	good := fmt.Sprintf(`{"session_id":%q,"run_id":"run-1","round":3,"format":"responses","output":[]}`, e.session)
	r = e.starter(ctx, good, "round", "-")
	require.Equal(t, 0, r.code, r.stderr)
}
