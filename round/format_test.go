package round

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const formatHead = `"session_id":"s","run_id":"r","round":1`

// anthropicTurn is a Messages API response as the documentation shows one:
// text, thinking with its signature, a server tool and two tool_use blocks.
const anthropicTurn = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-x",
	"content":[
		{"type":"thinking","thinking":"let me look","signature":"sig=="},
		{"type":"text","text":"Reading the file."},
		{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
		{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
		{"type":"tool_use","id":"toolu_01","name":"read_files","input":{"paths":["a.txt"]}},
		{"type":"tool_use","id":"toolu_02","name":"run_tool","input":{"name":"calculate","args":{"expression":"1+1"}}}
	],
	"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":20}}`

// responsesOutput is the output of a Responses API response: a reasoning
// item, a message and two function calls.
const responsesOutput = `[
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},
	{"type":"function_call","id":"fc_1","call_id":"call_01","name":"read_files","arguments":"{\"paths\":[\"a.txt\"]}","status":"completed"},
	{"type":"web_search_call","id":"ws_1","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_02","name":"run_tool","arguments":"{\"name\":\"calculate\",\"args\":{\"expression\":\"1+1\"}}","status":"completed"}
]`

func TestParseInputFormats(t *testing.T) {
	cases := []struct {
		name, in string
		format   Format
		ids      []string
		names    []string
	}{
		{"openai by default", `{` + formatHead + `,"assistant":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_files","arguments":"{}"}}]}}`,
			FormatOpenAI, []string{"call_1"}, []string{"read_files"}},
		{"openai named", `{` + formatHead + `,"format":"openai","assistant":{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculate","arguments":"{}"}}]}}`,
			FormatOpenAI, []string{"call_1"}, []string{"calculate"}},
		{"anthropic", `{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`,
			FormatAnthropic, []string{"toolu_01", "toolu_02"}, []string{"read_files", "run_tool"}},
		{"responses", `{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`,
			FormatResponses, []string{"call_01", "call_02"}, []string{"read_files", "run_tool"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			require.NoError(t, err)
			require.Equal(t, c.format, in.Format.Name())
			calls, err := in.TurnCalls()
			require.NoError(t, err)
			var ids, names []string
			for _, tc := range calls {
				ids, names = append(ids, tc.ID), append(names, tc.Function.Name)
				require.Empty(t, tc.CutOff)
			}
			require.Equal(t, c.ids, ids)
			require.Equal(t, c.names, names)
			require.Len(t, in.ToolCalls(), len(c.ids))
		})
	}
}

func TestTurnArgumentsAreTheCallsArguments(t *testing.T) {
	// The dedupe key, the approval id and the schema check read the
	// arguments; in every format they are the same JSON object.
	a, err := ParseInput([]byte(`{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`))
	require.NoError(t, err)
	r, err := ParseInput([]byte(`{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`))
	require.NoError(t, err)
	for _, in := range []*Input{a, r} {
		calls := in.ToolCalls()
		require.JSONEq(t, `{"paths":["a.txt"]}`, string(calls[0].Function.Arguments))
		require.JSONEq(t, `{"name":"calculate","args":{"expression":"1+1"}}`, string(calls[1].Function.Arguments))
	}
}

func TestParseInputRefusesMixedAndUnknownShapes(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"unknown format", `{` + formatHead + `,"format":"antropic","assistant":{}}`,
			`format "antropic" is not one of openai, anthropic, responses; did you mean "anthropic"?`},
		{"unknown format with an anthropic turn", `{` + formatHead + `,"format":"antropic","assistant":` + anthropicTurn + `}`,
			`format "antropic" is not one of openai, anthropic, responses; did you mean "anthropic"?`},
		{"format in capitals with an anthropic turn", `{` + formatHead + `,"format":"Anthropic","assistant":` + anthropicTurn + `}`,
			`format "Anthropic" is not one of openai, anthropic, responses; did you mean "anthropic"?`},
		{"output without format", `{` + formatHead + `,"output":[]}`,
			`output holds the items of a Responses API response: set "format": "responses"`},
		{"responses with assistant", `{` + formatHead + `,"format":"responses","assistant":{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x"}}]},"output":[]}`,
			`format responses takes no assistant: its calls are the function_call items of output`},
		{"responses without output", `{` + formatHead + `,"format":"responses"}`,
			`format responses needs output: the output items of a Responses API response`},
		{"anthropic without assistant", `{` + formatHead + `,"format":"anthropic"}`,
			`format anthropic needs assistant: a Messages API assistant message`},
		{"anthropic with output", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[]},"output":[]}`,
			`output is for format responses; format anthropic reads its calls from assistant.content`},
		{"anthropic with openai calls", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[],"tool_calls":[]}}`,
			`assistant.tool_calls is the openai shape: in format anthropic the calls are the tool_use blocks of assistant.content`},
		{"anthropic string content", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":"hi"}}`,
			`assistant.content must be an array of content blocks in format anthropic`},
		{"anthropic user role", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"user","content":[]}}`,
			`assistant.role is "user"; the turn is the model's: "assistant"`},
		{"anthropic tool_result", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}`,
			`assistant.content[0] is a tool_result block: it belongs in a user message, not in the model's turn`},
		{"anthropic unknown block", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_uses","id":"t"}]}}`,
			`assistant.content[1] has the block type "tool_uses", which format anthropic does not know; did you mean "tool_use"?`},
		{"anthropic block without type", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"id":"t"}]}}`,
			`assistant.content[0] has no type`},
		{"anthropic input not an object", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":"{}"}]}}`,
			`assistant.content[0] (tool_use t): input must be a JSON object`},
		{"anthropic no input", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x"}]}}`,
			`assistant.content[0] (tool_use t): input must be a JSON object`},
		{"anthropic no id", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","name":"x","input":{}}]}}`,
			`assistant.content[0] (tool_use) has no id`},
		{"openai no id", `{` + formatHead + `,"assistant":{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"x","arguments":"{}"}}]}}`,
			`assistant.tool_calls[0] has no id`},
		{"anthropic no name", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","input":{}}]}}`,
			`assistant.content[0] (tool_use t) has no name`},
		{"anthropic misspelt call field", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","inputs":{}}]}}`,
			`unknown field "inputs" in assistant.content[0] of the round input; did you mean "input"?`},
		{"anthropic shared id", `{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}},{"type":"tool_use","id":"t","name":"y","input":{}}]}}`,
			`assistant.content[0] and assistant.content[1] share the id "t"; every call needs its own id`},
		{"openai shape under anthropic without format", `{` + formatHead + `,"assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{}}]}}`,
			`round input: field "assistant.content" must be string, not array (an Anthropic assistant message? set "format": "anthropic")`},
		{"responses not an array", `{` + formatHead + `,"format":"responses","output":{"output":[]}}`,
			`output must be the array of a Responses API response's output items`},
		{"responses custom tool call", `{` + formatHead + `,"format":"responses","output":[{"type":"custom_tool_call","call_id":"c","name":"x","input":"y"}]}`,
			`output[0] is a custom_tool_call item, which waits for an output or approval that a round does not give; offer that tool as a function tool`},
		{"responses approval request", `{` + formatHead + `,"format":"responses","output":[{"type":"function_call","call_id":"c","name":"x","arguments":"{}"},{"type":"mcp_approval_request","id":"m","name":"x","server_label":"s","arguments":"{}"}]}`,
			`output[1] is a mcp_approval_request item, which waits for an output or approval that a round does not give; offer that tool as a function tool`},
		{"responses unknown item", `{` + formatHead + `,"format":"responses","output":[{"type":"function_cal","call_id":"c"}]}`,
			`output[0] has the item type "function_cal", which format responses does not know; did you mean "function_call"?`},
		{"responses input item", `{` + formatHead + `,"format":"responses","output":[{"type":"function_call_output","call_id":"c","output":"x"}]}`,
			`output[0] is a function_call_output: an input item, not part of a response's output`},
		{"responses no call_id", `{` + formatHead + `,"format":"responses","output":[{"type":"function_call","id":"fc","name":"x","arguments":"{}"}]}`,
			`output[0] (function_call) has no call_id`},
		{"responses misspelt call field", `{` + formatHead + `,"format":"responses","output":[{"type":"function_call","call_id":"c","name":"x","argument":"{}"}]}`,
			`unknown field "argument" in output[0] of the round input; did you mean "arguments"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			require.Nil(t, in)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			// Shared ids are checked as in every format (bad_request);
			// shapes, a call without an id among them, are invalid_input,
			// as unknown fields are.
			if !strings.HasPrefix(c.want, "round input: field") && !strings.Contains(c.want, "share the id") {
				require.True(t, errors.Is(err, ErrUnknownField), "an input error of code invalid_input: %v", err)
			}
		})
	}
}

func TestTurnCutOff(t *testing.T) {
	a, err := ParseInput([]byte(`{` + formatHead + `,"format":"anthropic","assistant":{"role":"assistant","stop_reason":"max_tokens",
		"content":[{"type":"tool_use","id":"t1","name":"read_files","input":{"paths":["a"]}},{"type":"tool_use","id":"t2","name":"edit_file","input":{}}]}}`))
	require.NoError(t, err)
	for _, c := range mustCalls(t, a) {
		require.Contains(t, c.CutOff, "cut off")
		require.Contains(t, c.CutOff, "max_tokens")
	}
	r, err := ParseInput([]byte(`{` + formatHead + `,"format":"responses","output":[
		{"type":"function_call","call_id":"c1","name":"read_files","arguments":"{\"paths\":[\"a\"]}","status":"completed"},
		{"type":"function_call","call_id":"c2","name":"edit_file","arguments":"{\"pa","status":"incomplete"}]}`))
	require.NoError(t, err)
	calls := mustCalls(t, r)
	require.Empty(t, calls[0].CutOff)
	require.Contains(t, calls[1].CutOff, "cut off")
}

func mustCalls(t *testing.T, in *Input) []TurnCall {
	t.Helper()
	calls, err := in.TurnCalls()
	require.NoError(t, err)
	return calls
}

func TestInputJSONRoundTrip(t *testing.T) {
	// An input encodes as it was given (the workflow decodes it again),
	// and an openai input encodes as it did before formats existed.
	for _, raw := range []string{
		`{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`,
		`{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`,
	} {
		in, err := ParseInput([]byte(raw))
		require.NoError(t, err)
		b, err := json.Marshal(in)
		require.NoError(t, err)
		var back Input
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, in.ToolCalls(), back.ToolCalls())
		require.Equal(t, in.Format, back.Format)
	}
	in := Input{SessionID: "s", RunID: "r", Round: 1, Assistant: Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "a", Type: "function", Function: FunctionCall{Name: "x", Arguments: "{}"}}}}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	type plain Input
	want, err := json.Marshal(plain(in))
	require.NoError(t, err)
	require.Equal(t, string(want), string(b))
	require.NotContains(t, string(b), "format")
	require.NotContains(t, string(b), "output")
}

func TestMapArgumentsRewritesTheFormatsObjects(t *testing.T) {
	seal := func(c TurnCall) (Arguments, error) {
		if c.ID == "toolu_01" || c.ID == "call_01" {
			return Arguments(`{"paths":["sealed"]}`), nil
		}
		return c.Function.Arguments, nil
	}
	a, err := ParseInput([]byte(`{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`))
	require.NoError(t, err)
	before := string(a.Turn)
	b := *a
	require.NoError(t, b.MapArguments(seal))
	require.Equal(t, before, string(a.Turn), "the caller's input stays as it was")
	require.NotContains(t, string(b.Turn), "a.txt")
	require.Contains(t, string(b.Turn), `"sealed"`)
	require.Contains(t, string(b.Turn), `"signature":"sig=="`, "other blocks pass as they are")
	require.JSONEq(t, `{"paths":["sealed"]}`, string(b.ToolCalls()[0].Function.Arguments))

	r, err := ParseInput([]byte(`{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`))
	require.NoError(t, err)
	rb := *r
	require.NoError(t, rb.MapArguments(seal))
	require.Contains(t, string(r.Output), "a.txt")
	require.NotContains(t, string(rb.Output), "a.txt")
	require.Equal(t, `{"paths":["sealed"]}`, string(rb.ToolCalls()[0].Function.Arguments))

	o := Input{SessionID: "s", RunID: "r", Assistant: Message{ToolCalls: []ToolCall{{ID: "toolu_01", Function: FunctionCall{Name: "x", Arguments: "{}"}}}}}
	ob := o
	require.NoError(t, ob.MapArguments(seal))
	require.Equal(t, Arguments("{}"), o.Assistant.ToolCalls[0].Function.Arguments)
	require.Equal(t, Arguments(`{"paths":["sealed"]}`), ob.Assistant.ToolCalls[0].Function.Arguments)
}

func TestMessagesInEachFormat(t *testing.T) {
	results := []CallResult{
		{CallID: "c1", Tool: "read_files", Status: StatusOK, Content: "hello"},
		{CallID: "c2", Tool: "calculate", Status: StatusDeduped, Content: "2", Repeat: &Repeat{Round: 1, CallID: "c0"}},
		{CallID: "c3", Tool: "edit_file", Status: StatusSkipped, Content: "Skipped by user"},
		{CallID: "c4", Tool: "fetch_page", Status: StatusOK, Content: StoredPreview(strings.Repeat("x", 50), "blob:1", 10), ContentRef: "blob:1"},
	}
	openai := FormatOpenAI.Messages(results)
	require.Len(t, openai, 4)
	require.Equal(t, "[read_files] hello", openai[0].Content)

	anthropic := marshalAll(t, FormatAnthropic.Messages(results))
	require.Len(t, anthropic, 1)
	require.JSONEq(t, `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"c1","content":"[read_files] hello","is_error":false},
		{"type":"tool_result","tool_use_id":"c2","content":"[calculate] (repeats the result of round 1 of this run)\n2","is_error":false},
		{"type":"tool_result","tool_use_id":"c3","content":"[edit_file] Skipped by user","is_error":true},
		{"type":"tool_result","tool_use_id":"c4","content":`+jsonString(t, "[fetch_page] "+results[3].Content)+`,"is_error":false}]}`, anthropic[0])
	require.Contains(t, anthropic[0], "blob:1", "a large result names its content_ref beside the preview")

	responses := marshalAll(t, FormatResponses.Messages(results))
	require.Len(t, responses, 4)
	require.JSONEq(t, `{"type":"function_call_output","call_id":"c1","output":"[read_files] hello"}`, responses[0])
	require.JSONEq(t, `{"type":"function_call_output","call_id":"c3","output":"[edit_file] Skipped by user"}`, responses[2])
	require.Contains(t, responses[3], "blob:1")
}

func TestIsErrorStatuses(t *testing.T) {
	want := map[Status]bool{StatusOK: false, StatusDeduped: false, StatusSchema: false,
		StatusError: true, StatusInvalid: true, StatusUnknown: true, StatusRefused: true, StatusUnknownOutcome: true,
		StatusCancelled: true, StatusExpired: true, StatusSkipped: true}
	for s, isErr := range want {
		m := marshalAll(t, FormatAnthropic.Messages([]CallResult{{CallID: "c", Tool: "t", Status: s}}))
		var msg struct {
			Content []struct {
				IsError bool `json:"is_error"`
			} `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(m[0]), &msg))
		require.Equal(t, isErr, msg.Content[0].IsError, s)
	}
}

func TestHistoryInEachFormat(t *testing.T) {
	results := []CallResult{{CallID: "toolu_01", Tool: "read_files", Status: StatusOK, Content: "hello"}, {CallID: "toolu_02", Tool: "calculate", Status: StatusOK, Content: "2"}}
	a, err := ParseInput([]byte(`{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`))
	require.NoError(t, err)
	out := Output{WorkflowID: "w", Format: a.Format, Turn: a.Turn, Results: results}
	res := out.Result()
	require.Equal(t, FormatAnthropic, res.Format)
	h := marshalAll(t, res.History)
	require.Len(t, h, 2)
	var assistant map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(h[0]), &assistant))
	require.Len(t, assistant, 2, "the history's assistant message is what the Messages API takes back: role and content")
	require.Contains(t, string(assistant["content"]), `"signature":"sig=="`)
	require.Equal(t, marshalAll(t, res.Messages)[0], h[1])

	r, err := ParseInput([]byte(`{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`))
	require.NoError(t, err)
	results[0].CallID, results[1].CallID = "call_01", "call_02"
	res = Output{WorkflowID: "w", Format: r.Format, Turn: r.Output, Results: results}.Result()
	h = marshalAll(t, res.History)
	require.Len(t, h, 7, "the five output items, then one function_call_output per call")
	require.Contains(t, h[0], `"encrypted_content":"enc"`)
	require.JSONEq(t, `{"type":"function_call_output","call_id":"call_02","output":"[calculate] 2"}`, h[6])

	// The result decodes again, in its format.
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var back Result
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, FormatResponses, back.Format)
	require.Equal(t, h, marshalAll(t, back.History))
}

func marshalAll(t *testing.T, ms []Message) []string {
	t.Helper()
	out := make([]string, len(ms))
	for i, m := range ms {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out[i] = string(b)
	}
	return out
}

func jsonString(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

func TestChatAssistantOfEachFormat(t *testing.T) {
	// The session's history records the turn's text and calls whatever
	// its format.
	a, err := ParseInput([]byte(`{` + formatHead + `,"format":"anthropic","assistant":` + anthropicTurn + `}`))
	require.NoError(t, err)
	r, err := ParseInput([]byte(`{` + formatHead + `,"format":"responses","output":` + responsesOutput + `}`))
	require.NoError(t, err)
	for in, text := range map[*Input]string{a: "Reading the file.", r: "Reading."} {
		m := in.ChatAssistant()
		require.Equal(t, "assistant", m.Role)
		require.Equal(t, text, m.Content)
		require.Equal(t, in.ToolCalls(), m.ToolCalls)
	}
}

// TestShortTurnKeepsTheCalls: the short form of a turn kept in the blob
// store reads as the same calls, and a cut-off turn stays cut off.
func TestShortTurnKeepsTheCalls(t *testing.T) {
	a := json.RawMessage(`{"id":"msg_1","role":"assistant","stop_reason":"max_tokens","content":[
		{"type":"thinking","thinking":"long thoughts","signature":"sig"},{"type":"text","text":"On it."},
		{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"1+1"}}]}`)
	short, err := ShortTurn(FormatAnthropic, a)
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"assistant","stop_reason":"max_tokens","content":[{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"1+1"}}]}`, string(short))
	calls, err := (&Input{Format: FormatAnthropic, Turn: short}).TurnCalls()
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.NotEmpty(t, calls[0].CutOff, "a cut-off turn stays cut off")

	r := json.RawMessage(`[{"type":"reasoning","id":"rs","summary":[],"encrypted_content":"enc"},
		{"type":"function_call","call_id":"call_1","name":"calculate","arguments":"{}","status":"incomplete"}]`)
	short, err = ShortTurn(FormatResponses, r)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"function_call","call_id":"call_1","name":"calculate","arguments":"{}","status":"incomplete"}]`, string(short))

	_, err = ShortTurn(FormatOpenAI, a)
	require.Error(t, err)
	_, err = ShortTurn(FormatAnthropic, json.RawMessage(`{"role":"assistant","content":"text"}`))
	require.Error(t, err)
}
