package round

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolround/toolround/round/names"
)

var inputSeeds = []string{
	`{"session_id":"s1","run_id":"r1","round":1,"provider":"openai","auto_approve":false,` +
		`"assistant":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function",` +
		`"function":{"name":"read_files","arguments":"{\"paths\":[\"a.txt\"]}"}}]},"client_tools":[],"state":null}`,
	`{"session_id":"s","run_id":"r","round":0,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":{"k":[1,2]}}}]}}`,
	`{"session_id":"s","run_id":"r","round":2,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":null}},{"id":"b","function":{"name":"y","arguments":7}}]},` +
		`"state":{"dedupe":{"x|{}":{"tool":"x","content":"c","round":1,"call_id":"a","seq":1,"read":["a"]}},"fetched":["x"],"allow":[{"tool":"run_command","pattern":"git *"}],"seq":1}}`,
	`{"session_id":"s","run_id":"r","round":1,"client_tools":[{"type":"function","function":{"name":"ide","parameters":{"type":"object"}}}],"confirm_timeout_seconds":5,"max_concurrent":2}`,
	`{"session_id":"s","run_id":"r","round":1,"assistant":{"tool_calls":[{"id":"a","function":{"name":"x"}},{"id":"a","function":{"name":"y"}}]}}`,
	`{"session_id":"s\u0001","run_id":"r","round":1}`,
	`{"session_id":"s","run_id":"r","round":-1}`,
	`{"session_id":"x/y","run_id":"z","round":1}`, `{"session_id":"s","run_id":"r","round":1,"confirm_timeout_seconds":18446744074}`,
	`{"session_id":5}`, `{"session_id":`, `[]`, `null`, `{} {}`, `{"session_id":"s","run_id":"r","round":1} ]`, ``,
}

// FuzzParseInput feeds arbitrary bytes to the command line's decoder: it
// never panics, it accepts only valid JSON, and what it accepts is valid,
// encodes and decodes back to the same input, and keeps every call id
// distinct and non-empty.
func FuzzParseInput(f *testing.F) {
	for _, s := range inputSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := ParseInput(b)
		if err != nil {
			if in != nil {
				t.Fatalf("an error and an input")
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("an empty error")
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted input that is not valid JSON: %q", b)
		}
		if err := in.Validate(); err != nil {
			t.Fatalf("accepted an invalid input: %v", err)
		}
		if !names.ValidIdentifier(in.SessionID) || !names.ValidIdentifier(in.RunID) {
			t.Fatalf("accepted identifiers %q and %q", in.SessionID, in.RunID)
		}
		if s := in.ConfirmTimeoutSeconds; s != 0 && (s < 1 || s > 7*24*3600) {
			t.Fatalf("accepted confirm_timeout_seconds %d", s)
		}
		seen := map[string]bool{}
		for _, c := range in.Assistant.ToolCalls {
			if strings.TrimSpace(c.ID) == "" || seen[c.ID] {
				t.Fatalf("call id %q empty or repeated", c.ID)
			}
			seen[c.ID] = true
		}
		enc, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("an accepted input does not encode: %v", err)
		}
		back, err := ParseInput(enc)
		if err != nil {
			t.Fatalf("an accepted input, encoded, is refused: %v\n%s", err, enc)
		}
		again, err := json.Marshal(back)
		if err != nil || !bytes.Equal(enc, again) {
			t.Fatalf("the input changed on a round trip:\n%s\n%s", enc, again)
		}
		if back.WorkflowID() != in.WorkflowID() {
			t.Fatalf("the workflow id changed on a round trip")
		}
	})
}

// FuzzArguments checks a call's arguments: a JSON string is its text, any
// other JSON value is kept as written, and decoding never panics.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{`"{\"a\":1}"`, `{"a":1}`, `null`, `[1,2]`, `7`, `"\ud800"`, `"`, `tru`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c FunctionCall
		err := json.Unmarshal([]byte(`{"name":"x","arguments":`+string(b)+`}`), &c)
		if err != nil {
			return
		}
		trimmed := bytes.TrimSpace(b)
		switch {
		case string(trimmed) == "null":
			if c.Arguments != "" {
				t.Fatalf("null arguments are %q", c.Arguments)
			}
		case trimmed[0] == '"':
			var s string
			if err := json.Unmarshal(trimmed, &s); err != nil || string(c.Arguments) != s {
				t.Fatalf("a string argument is its text: %q vs %q", c.Arguments, s)
			}
		default:
			if string(c.Arguments) != string(trimmed) {
				t.Fatalf("a non-string argument is kept as written: %q vs %q", c.Arguments, trimmed)
			}
		}
	})
}
