package openaisdk_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/adapters/openaisdk"
	"github.com/toolround/toolround/round"
)

// completion is a chat completion shaped as the API documents it, with two
// tool calls.
const completion = `{
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4.1",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "refusal": null,
      "annotations": [],
      "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_files", "arguments": "{\"paths\":[\"a.txt\"]}"}},
        {"id": "call_2", "type": "function", "function": {"name": "calculate", "arguments": "{\"expression\":\"6*7\"}"}}
      ]
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
}`

// response is a Responses API response shaped as the API documents it: a
// reasoning item with its encrypted content, a function_call item.
const response = `{
  "id": "resp_67ccd2bed1ec8190",
  "object": "response",
  "created_at": 1741476542,
  "status": "completed",
  "model": "gpt-5",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAABo-opaque"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "calculate", "arguments": "{\"expression\":\"6*7\"}", "status": "completed"}
  ],
  "usage": {"input_tokens": 36, "output_tokens": 87, "total_tokens": 123}
}`

func TestChatTurnAndToolMessages(t *testing.T) {
	var c openai.ChatCompletion
	require.NoError(t, json.Unmarshal([]byte(completion), &c))
	in, err := openaisdk.ChatTurn(&c.Choices[0].Message)
	require.NoError(t, err)
	in.SessionID, in.RunID, in.Round = "s1", "r1", 1
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	require.Len(t, calls, 2)
	require.Equal(t, "call_1", calls[0].ID)
	require.Equal(t, "read_files", calls[0].Function.Name)
	require.JSONEq(t, `{"paths":["a.txt"]}`, string(calls[0].Function.Arguments))
	require.NoError(t, in.Validate())

	res := &round.Result{Results: []round.CallResult{
		{CallID: "call_1", Tool: "read_files", Status: round.StatusOK, Content: "a.txt: hello"},
		{CallID: "call_2", Tool: "calculate", Status: round.StatusOK, Content: "= 42"},
	}}
	msgs, err := openaisdk.ToolMessages(res)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	require.JSONEq(t, `[{"role":"tool","tool_call_id":"call_1","content":"[read_files] a.txt: hello"},
		{"role":"tool","tool_call_id":"call_2","content":"[calculate] = 42"}]`, string(b))

	// The conversation the SDK sends next: the message back, then these.
	params := openai.ChatCompletionNewParams{Messages: append([]openai.ChatCompletionMessageParamUnion{c.Choices[0].Message.ToParam()}, msgs...)}
	wire, err := json.Marshal(params)
	require.NoError(t, err)
	require.Contains(t, string(wire), `"tool_call_id":"call_2"`)
}

func TestResponseTurnAndItems(t *testing.T) {
	var r responses.Response
	require.NoError(t, json.Unmarshal([]byte(response), &r))
	in, err := openaisdk.ResponseTurn(&r)
	require.NoError(t, err)
	require.Equal(t, round.FormatResponses, in.Format)
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, "call_9", calls[0].ID, "the call keeps its own id (F1)")
	require.Equal(t, "calculate", calls[0].Function.Name)

	res := &round.Result{Format: round.FormatResponses, Results: []round.CallResult{
		{CallID: "call_9", Tool: "calculate", Status: round.StatusOK, Content: "= 42"},
	}}
	outs, err := openaisdk.FunctionCallOutputs(res)
	require.NoError(t, err)
	b, err := json.Marshal(outs)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"function_call_output","call_id":"call_9","output":"[calculate] = 42"}]`, string(b))

	// Stateless: the reasoning item goes back unchanged, then the outputs.
	next, err := openaisdk.ResponseItems(&r, res)
	require.NoError(t, err)
	require.Len(t, next, 3)
	wire, err := json.Marshal(responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfInputItemList: next}})
	require.NoError(t, err)
	require.Contains(t, string(wire), `"encrypted_content":"gAAAAABo-opaque"`)
	require.Contains(t, string(wire), `"type":"function_call_output"`)
}

func TestAnIncompleteResponseRunsNoCall(t *testing.T) {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(response), &m))
	m["status"] = "incomplete"
	out := m["output"].([]any)
	out[1].(map[string]any)["status"] = "incomplete"
	b, _ := json.Marshal(m)
	var r responses.Response
	require.NoError(t, json.Unmarshal(b, &r))
	in, err := openaisdk.ResponseTurn(&r)
	require.NoError(t, err)
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	require.NotEmpty(t, calls[0].CutOff, "F1: a call of a cut-off turn never runs")
}

func TestWrongFormatsAreErrors(t *testing.T) {
	_, err := openaisdk.ToolMessages(&round.Result{Format: round.FormatResponses})
	require.ErrorContains(t, err, "not openai")
	_, err = openaisdk.FunctionCallOutputs(&round.Result{})
	require.ErrorContains(t, err, "not responses")
	_, err = openaisdk.ChatTurn(nil)
	require.Error(t, err)
	_, err = openaisdk.ResponseTurn(nil)
	require.Error(t, err)
}

// imageResult is a result with an image whose bytes the result carries.
var imageResult = round.CallResult{CallID: "call_1", Tool: "shot", Status: round.StatusOK, Content: "[image image/png, 4 bytes]",
	Images: []round.Image{{MIMEType: "image/png", Size: 4, Data: []byte{0x89, 'P', 'N', 'G'}}}}

// The image of a result is its text line in the tool message (F2): one
// tool message per call, and no bytes in it.
func TestToolMessagesWithAnImage(t *testing.T) {
	res := &round.Result{Results: []round.CallResult{imageResult}}
	res.Messages = res.Format.Messages(res.Results)
	msgs, err := openaisdk.ToolMessages(res)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.NotNil(t, msgs[0].OfTool)
	wire, err := json.Marshal(openai.ChatCompletionNewParams{Messages: msgs})
	require.NoError(t, err)
	require.Contains(t, string(wire), `[image image/png, 4 bytes]`)
	require.NotContains(t, string(wire), `iVBORw==`)
	require.Contains(t, string(wire), `"tool_call_id":"call_1"`)
}

// The image of a result is an input_image part of its output.
func TestFunctionCallOutputsWithAnImage(t *testing.T) {
	res := &round.Result{Format: round.FormatResponses, Results: []round.CallResult{imageResult}}
	outs, err := openaisdk.FunctionCallOutputs(res)
	require.NoError(t, err)
	wire, err := json.Marshal(responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfInputItemList: outs}})
	require.NoError(t, err)
	require.Contains(t, string(wire), `{"image_url":"data:image/png;base64,iVBORw==","type":"input_image"}`)
	require.Contains(t, string(wire), `"type":"input_text"`)
}
