package round

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseInputRefusesUnknownFields(t *testing.T) {
	const head = `"session_id":"s","run_id":"r","round":1`
	cases := []struct {
		name, in, want string
	}{
		{"top level", `{` + head + `,"asistant":{}}`,
			`unknown field "asistant" in the round input; did you mean "assistant"?`},
		{"top level swap", `{` + head + `,"assitsant":{}}`,
			`unknown field "assitsant" in the round input; did you mean "assistant"?`},
		{"top level far", `{` + head + `,"zzz":1}`,
			`unknown field "zzz" in the round input`},
		{"plural of a call field", `{` + head + `,"assistant":{"tool_call":[{"id":"a","function":{"name":"x"}}]}}`,
			`unknown field "tool_call" in assistant of the round input; did you mean "tool_calls"?`},
		{"tool call entry", `{` + head + `,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x"}},{"id":"b","fnction":{"name":"x"}}]}}`,
			`unknown field "fnction" in assistant.tool_calls[1] of the round input; did you mean "function"?`},
		{"function object", `{` + head + `,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x","argumnets":"{}"}}]}}`,
			`unknown field "argumnets" in assistant.tool_calls[0].function of the round input; did you mean "arguments"?`},
		{"client tool wrapped", `{` + head + `,"client_tools":[{"type":"function","function":{"name":"ide","paramters":{}}}]}`,
			`unknown field "paramters" in client_tools[0].function of the round input; did you mean "parameters"?`},
		{"client tool wrapper", `{` + head + `,"client_tools":[{"typ":"function","function":{"name":"ide"}}]}`,
			`unknown field "typ" in client_tools[0] of the round input; did you mean "type"?`},
		{"client tool bare", `{` + head + `,"client_tools":[{"name":"ide","descripton":"d"}]}`,
			`unknown field "descripton" in client_tools[0] of the round input; did you mean "description"?`},
		{"client tool strict misspelt", `{` + head + `,"client_tools":[{"name":"ide","strikt":true}]}`,
			`unknown field "strikt" in client_tools[0] of the round input; did you mean "strict"?`},
		{"misspelt session id", `{"sesion_id":"s","run_id":"r","round":1}`,
			`unknown field "sesion_id" in the round input; did you mean "session_id"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			require.Nil(t, in)
			require.EqualError(t, err, c.want)
			require.True(t, errors.Is(err, ErrUnknownField))
		})
	}
}

func TestParseInputPassesProviderFields(t *testing.T) {
	// What providers put in an assistant message, the run state's own
	// fields, OpenAI's strict and object arguments all pass.
	in, err := ParseInput([]byte(`{"session_id":"s","run_id":"r","round":1,"dedupe":false,
		"assistant":{"role":"assistant","content":null,"refusal":null,"annotations":[],"audio":null,
			"reasoning_content":"...","name":"bot","function_call":null,"tool_call_id":"",
			"tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":{"deep":{"any":1}}}}]},
		"client_tools":[{"type":"function","function":{"name":"ide","strict":true,"parameters":{"type":"object","additionalProperties":false}}},
			{"name":"bare","type":"function","strict":false}],
		"state":{"fetched":["x"],"from_a_newer_build":{"k":1}}}`))
	require.NoError(t, err)
	require.Len(t, in.Assistant.ToolCalls, 1)
	require.Len(t, in.ClientTools, 2)
	require.False(t, in.DedupeOn())
}

func TestCheckFieldsFollowsTags(t *testing.T) {
	type inner struct {
		Seconds int `json:"seconds"`
	}
	type req struct {
		WorkflowID string  `json:"workflow_id"`
		Items      []inner `json:"items"`
		Skip       string  `json:"-"`
		Plain      string
	}
	require.NoError(t, CheckFields([]byte(`{"workflow_id":"w","items":[{"seconds":1}],"Plain":"p"}`), &req{}, "the request"))
	err := CheckFields([]byte(`{"items":[{"second":1}]}`), &req{}, "the request")
	require.EqualError(t, err, `unknown field "second" in items[0] of the request; did you mean "seconds"?`)
	err = CheckFields([]byte(`{"Skip":"x"}`), &req{}, "the request")
	require.EqualError(t, err, `unknown field "Skip" in the request`)
}

func TestClosest(t *testing.T) {
	known := []string{"session_id", "run_id", "round", "assistant", "state", "provider"}
	cases := map[string]string{
		"asistant": "assistant", "assistnat": "assistant", "rond": "round", "rnd": "", "sate": "state",
		"Provder": "provider", "runid": "run_id", "x": "", "tool_calls": "", "rounds": "round",
		"assistant_message": "",
	}
	for in, want := range cases {
		require.Equal(t, want, closest(in, known), in)
	}
}

func TestParseInputRefusesFieldsInAnotherCase(t *testing.T) {
	// encoding/json folds case; the contract does not (U8).
	const head = `"session_id":"s","run_id":"r","round":1`
	cases := []struct {
		name, in, want string
	}{
		{"beside the right one", `{` + head + `,"Session_ID":"t"}`,
			`unknown field "Session_ID" in the round input; did you mean "session_id"?`},
		{"top level", `{"session_id":"s","run_id":"r","Round":1}`,
			`unknown field "Round" in the round input; did you mean "round"?`},
		{"assistant call field", `{` + head + `,"assistant":{"Tool_Calls":[{"id":"a","function":{"name":"x"}}]}}`,
			`unknown field "Tool_Calls" in assistant of the round input; did you mean "tool_calls"?`},
		{"assistant own field", `{` + head + `,"assistant":{"ROLE":"assistant"}}`,
			`unknown field "ROLE" in assistant of the round input; did you mean "role"?`},
		{"tool call entry", `{` + head + `,"assistant":{"tool_calls":[{"ID":"a","function":{"name":"x"}}]}}`,
			`unknown field "ID" in assistant.tool_calls[0] of the round input; did you mean "id"?`},
		{"client tool strict", `{` + head + `,"client_tools":[{"name":"ide","Strict":true}]}`,
			`unknown field "Strict" in client_tools[0] of the round input; did you mean "strict"?`},
		{"limits", `{` + head + `,"limits":{"Max_Calls":3}}`,
			`unknown field "Max_Calls" in limits of the round input; did you mean "max_calls"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			require.Nil(t, in)
			require.EqualError(t, err, c.want)
			require.True(t, errors.Is(err, ErrUnknownField))
		})
	}
}

func TestParseInputRefusesDuplicateFields(t *testing.T) {
	const head = `"session_id":"s","run_id":"r","round":1`
	cases := []struct {
		name, in, want string
	}{
		{"top level", `{` + head + `,"session_id":"t"}`,
			`duplicate field "session_id" in the round input`},
		{"assistant tool_calls", `{` + head + `,"assistant":{"tool_calls":[],"tool_calls":[{"id":"a","function":{"name":"x"}}]}}`,
			`duplicate field "tool_calls" in assistant of the round input`},
		{"tool call entry", `{` + head + `,"assistant":{"tool_calls":[{"id":"a","id":"b","function":{"name":"x"}}]}}`,
			`duplicate field "id" in assistant.tool_calls[0] of the round input`},
		{"function object", `{` + head + `,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x","name":"y"}}]}}`,
			`duplicate field "name" in assistant.tool_calls[0].function of the round input`},
		{"client tool", `{` + head + `,"client_tools":[{"name":"ide","name":"other"}]}`,
			`duplicate field "name" in client_tools[0] of the round input`},
		{"limits", `{` + head + `,"limits":{"max_calls":3,"max_calls":30}}`,
			`duplicate field "max_calls" in limits of the round input`},
		{"anthropic tool_use", `{` + head + `,"format":"anthropic","assistant":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","name":"y","input":{}}]}}`,
			`duplicate field "name" in assistant.content[0] of the round input`},
		{"responses function_call", `{` + head + `,"format":"responses","output":[{"type":"function_call","call_id":"c","name":"x","arguments":"{}","arguments":"{}"}]}`,
			`duplicate field "arguments" in output[0] of the round input`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			require.Nil(t, in)
			require.EqualError(t, err, c.want)
			require.True(t, errors.Is(err, ErrUnknownField))
		})
	}
	// What passes as it is may repeat a key.
	_, err := ParseInput([]byte(`{` + head + `,"assistant":{"refusal":null,"refusal":null},"state":{"x":1,"x":2}}`))
	require.NoError(t, err)
}

func TestCheckFieldsIsCaseSensitive(t *testing.T) {
	type req struct {
		WorkflowID string `json:"workflow_id"`
	}
	err := CheckFields([]byte(`{"workflow_id":"w","Workflow_ID":"v"}`), &req{}, "the request")
	require.EqualError(t, err, `unknown field "Workflow_ID" in the request; did you mean "workflow_id"?`)
	err = CheckFields([]byte(`{"workflow_id":"w","workflow_id":"v"}`), &req{}, "the request")
	require.EqualError(t, err, `duplicate field "workflow_id" in the request`)
	require.True(t, errors.Is(err, ErrUnknownField))
}
