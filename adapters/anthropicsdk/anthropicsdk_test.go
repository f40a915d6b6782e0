package anthropicsdk_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/adapters/anthropicsdk"
	"github.com/toolround/toolround/round"
)

// response is a Messages API response shaped as the API documents it: a
// thinking block with its signature, text, and two tool_use blocks.
const response = `{
  "id": "msg_01Aq9w938a90dw8q",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5",
  "content": [
    {"type": "thinking", "thinking": "The user wants two files.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type": "text", "text": "I'll read both files."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_files", "input": {"paths": ["a.txt"]}},
    {"type": "tool_use", "id": "toolu_01B", "name": "calculate", "input": {"expression": "6*7"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 120, "output_tokens": 48}
}`

func message(t *testing.T, s string) *anthropic.Message {
	t.Helper()
	var m anthropic.Message
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return &m
}

func TestInputKeepsTheTurnAndItsCalls(t *testing.T) {
	in, err := anthropicsdk.Input("s1", "r1", 3, nil, message(t, response))
	require.NoError(t, err)
	require.Equal(t, round.FormatAnthropic, in.Format)
	require.Equal(t, "toolround/s1/r1/3", in.WorkflowID())
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	require.Len(t, calls, 2)
	require.Equal(t, "toolu_01A09q90qw90lq917835lq9", calls[0].ID)
	require.Equal(t, "read_files", calls[0].Function.Name)
	require.JSONEq(t, `{"paths":["a.txt"]}`, string(calls[0].Function.Arguments))
	require.Equal(t, "calculate", calls[1].Function.Name)
	require.Contains(t, string(in.Turn), `"signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"`, "the thinking block goes as the API sent it")

	// The input survives its JSON, as the client submits it.
	b, err := json.Marshal(in)
	require.NoError(t, err)
	back, err := round.ParseInput(b)
	require.NoError(t, err)
	again, err := back.TurnCalls()
	require.NoError(t, err)
	require.Len(t, again, len(calls))
	for i := range calls {
		require.Equal(t, calls[i].ID, again[i].ID)
		require.JSONEq(t, string(calls[i].Function.Arguments), string(again[i].Function.Arguments))
	}
}

func TestACutOffTurnRunsNoCall(t *testing.T) {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(response), &m))
	m["stop_reason"] = "max_tokens"
	b, _ := json.Marshal(m)
	in, err := anthropicsdk.Turn(message(t, string(b)))
	require.NoError(t, err)
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	for _, c := range calls {
		require.NotEmpty(t, c.CutOff, "a call of a turn cut off at max_tokens never runs (F1)")
	}
}

func TestToolResultsAreTheUserMessage(t *testing.T) {
	res := &round.Result{Format: round.FormatAnthropic, Results: []round.CallResult{
		{CallID: "toolu_01A09q90qw90lq917835lq9", Tool: "read_files", Status: round.StatusOK, Content: "a.txt: hello"},
		{CallID: "toolu_01B", Tool: "calculate", Status: round.StatusSkipped, Content: "Skipped by user"},
	}}
	p, err := anthropicsdk.ToolResults(res)
	require.NoError(t, err)
	require.NotNil(t, p.OfUser, "a user message")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var got struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(b, &got), string(b))
	require.Equal(t, "user", got.Role)
	require.Len(t, got.Content, 2)
	require.Equal(t, "tool_result", got.Content[0].Type)
	require.Equal(t, "toolu_01A09q90qw90lq917835lq9", got.Content[0].ToolUseID)
	require.Equal(t, "[read_files] a.txt: hello", text(t, got.Content[0].Content))
	require.False(t, got.Content[0].IsError)
	require.Equal(t, "toolu_01B", got.Content[1].ToolUseID)
	require.True(t, got.Content[1].IsError, "skipped is an error to the model (F2)")

	// Appended after the turn, the conversation is what the SDK sends.
	params := anthropic.MessageNewParams{Messages: []anthropic.MessageParam{message(t, response).ToParam(), p}}
	wire, err := json.Marshal(params)
	require.NoError(t, err)
	require.Contains(t, string(wire), `"tool_use_id":"toolu_01B"`)
	require.Contains(t, string(wire), `"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"`)
}

// text is a tool_result's content as the model reads it: a string, or the
// text blocks the SDK sends it as.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type, Text string
	}
	require.NoError(t, json.Unmarshal(raw, &blocks), string(raw))
	out := ""
	for _, b := range blocks {
		require.Equal(t, "text", b.Type)
		out += b.Text
	}
	return out
}

func TestBadInputIsAnError(t *testing.T) {
	_, err := anthropicsdk.Turn(nil)
	require.Error(t, err)
	_, err = anthropicsdk.ToolResults(&round.Result{Format: round.FormatOpenAI})
	require.ErrorContains(t, err, "not anthropic")
	_, err = anthropicsdk.ToolResults(nil)
	require.Error(t, err)
}

// The image of a result is an image block of its tool_result (F2).
func TestToolResultsWithAnImage(t *testing.T) {
	res := &round.Result{Format: round.FormatAnthropic, Results: []round.CallResult{{CallID: "toolu_01", Tool: "shot", Status: round.StatusOK,
		Content: "[image image/png, 4 bytes]", Images: []round.Image{{MIMEType: "image/png", Size: 4, Data: []byte{0x89, 'P', 'N', 'G'}}}}}}
	p, err := anthropicsdk.ToolResults(res)
	require.NoError(t, err)
	require.NotNil(t, p.OfUser)
	wire, err := json.Marshal(anthropic.MessageNewParams{Messages: []anthropic.MessageParam{p}})
	require.NoError(t, err)
	require.Contains(t, string(wire), `"source":{"data":"iVBORw==","media_type":"image/png","type":"base64"}`)
	require.Contains(t, string(wire), `"text":"[shot] [image image/png, 4 bytes]"`)
}
