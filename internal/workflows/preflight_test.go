package workflows

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

func call(id, name, args string) round.ToolCall {
	return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}}
}

func runTool(id, name, args string) round.ToolCall {
	b, _ := json.Marshal(map[string]any{"name": name, "args": json.RawMessage(args)})
	return call(id, tools.RunTool, string(b))
}

type planned struct {
	in   *round.Input
	snap Snapshot
	st   *round.RunState
	plan []Call
}

// preflight runs the unwrap step, the catalog snapshot and pass 1 as the
// workflow does, against the test registry.
func preflight(t *testing.T, provider string, state *round.RunState, calls ...round.ToolCall) planned {
	t.Helper()
	return preflightWith(t, &round.Input{SessionID: "s", RunID: "r", Round: 1, Provider: provider, State: state,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}})
}

func preflightWith(t *testing.T, in *round.Input) planned {
	t.Helper()
	require.NoError(t, in.Validate())
	reg := testtools.Registry(testtools.NewRecorder())
	cat := NewCatalog(reg, CatalogOptions{MaxConcurrent: 3})
	un := make([]Unwrapped, len(in.Assistant.ToolCalls))
	for i, c := range in.Assistant.ToolCalls {
		un[i] = Unwrap(c)
	}
	snap := cat.Snapshot(SnapshotRequest{Provider: in.Provider, ClientTools: in.ClientTools, Calls: un})
	st := in.State.Clone()
	plan := Preflight(in, un, &snap, st)
	return planned{in: in, snap: snap, st: st, plan: plan}
}

func fetched(names ...string) *round.RunState { return &round.RunState{Fetched: names} }

func TestUnwrapRunTool(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		wantName string
		wantArgs string
		wantErr  string
	}{
		{"object args", `{"name":"read_files","args":{"paths":["a"]}}`, "read_files", `{"paths":["a"]}`, ""},
		{"string args", `{"name":"read_files","args":"{\"paths\":[\"a\"]}"}`, "read_files", `{"paths":["a"]}`, ""},
		{"no args", `{"name":"reasoning_guide"}`, "reasoning_guide", `{}`, ""},
		{"null args", `{"name":"reasoning_guide","args":null}`, "reasoning_guide", `{}`, ""},
		{"not json", `{"name":`, tools.RunTool, "", "not a JSON object"},
		{"not an object", `["read_files"]`, tools.RunTool, "", "not a JSON object"},
		{"empty", ``, tools.RunTool, "", "not a JSON object"},
		{"no name", `{"args":{}}`, tools.RunTool, "", `"name" must be a non-empty string`},
		{"name not a string", `{"name":5}`, tools.RunTool, "", `"name" must be a non-empty string`},
		{"args an array", `{"name":"read_files","args":[1]}`, tools.RunTool, "", `"args" must be an object or a JSON string`},
		{"args a number", `{"name":"read_files","args":5}`, tools.RunTool, "", `"args" must be an object or a JSON string`},
		{"nested run_tool", `{"name":"run_tool","args":{}}`, tools.RunTool, "", "cannot run itself"},
		{"data after the object", `{"name":"read_files","args":{}} {"name":"run_command","args":{"command":"rm -rf /"}}`, tools.RunTool, "", "data after its JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Unwrap(call("c", tools.RunTool, tt.args))
			require.True(t, u.Via)
			require.Equal(t, tt.wantName, u.Name)
			if tt.wantErr != "" {
				require.Contains(t, u.Err, tt.wantErr)
				require.Contains(t, u.Err, `run_tool expects {"name": "<tool>", "args": {...}}`, "P1.1: the error says what shape is expected")
				return
			}
			require.Empty(t, u.Err)
			require.JSONEq(t, tt.wantArgs, u.Args)
		})
	}
	u := Unwrap(call("c", "read_files", `{"paths":["a"]}`))
	require.Equal(t, Unwrapped{Name: "read_files", Args: `{"paths":["a"]}`}, u, "direct calls pass through unchanged")
}

func TestPreflight(t *testing.T) {
	readA := `{"paths":["a.txt"]}`
	dedupeHit := &round.RunState{Fetched: []string{"read_files"}, Dedupe: map[string]round.DedupeEntry{
		tools.DedupeKey("read_files", []byte(readA)): {Tool: "read_files", Content: "earlier a.txt", CallID: "old", Round: 1},
	}}
	tests := []struct {
		name     string
		provider string
		state    *round.RunState
		auto     bool
		calls    []round.ToolCall
		states   []CallState
		statuses []round.Status // for CallDone calls
		contains []string       // a substring of each call's content ("" to skip)
	}{
		// P1.1
		{name: "P1.1 run_tool is unwrapped and runs", provider: "openai", state: fetched("read_files"),
			calls: []round.ToolCall{runTool("1", "read_files", readA)}, states: []CallState{CallReady}},
		{name: "P1.1 malformed run_tool gets an error result", provider: "openai",
			calls: []round.ToolCall{call("1", "run_tool", `{"nome":"x"}`)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusInvalid}, contains: []string{`run_tool expects`}},
		// P1.2
		{name: "P1.2 deferred tool called directly is refused with the find_tools hint", provider: "openai",
			calls: []round.ToolCall{call("1", "read_files", readA)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusRefused}, contains: []string{`find_tools(query="select:read_files")`}},
		{name: "P1.2 loaded tools run directly", provider: "openai",
			calls:  []round.ToolCall{call("1", "find_tools", `{"query":"files"}`), call("2", "reasoning_guide", `{}`)},
			states: []CallState{CallReady, CallReady}},
		{name: "P1.2 claude-code has every tool loaded but run_tool", provider: tools.ProviderClaudeCode, state: fetched("read_files"),
			calls:  []round.ToolCall{call("1", "read_files", readA), runTool("2", "read_files", `{"paths":["b"]}`)},
			states: []CallState{CallReady, CallDone}, statuses: []round.Status{"", round.StatusRefused}, contains: []string{"", "run_tool is not available"}},
		{name: "P1.2 client tools are loaded", provider: "openai",
			calls: []round.ToolCall{call("1", "client_echo", `{}`)}, states: []CallState{CallReady}},
		// P1.3
		{name: "P1.3 an earlier success in the run is returned and nothing runs", provider: "openai", state: dedupeHit,
			calls: []round.ToolCall{runTool("1", "read_files", ` { "paths" : [ "a.txt" ] } `)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusDeduped}, contains: []string{"earlier a.txt"}},
		{name: "P1.3 identical calls in one round run once", provider: "openai", state: fetched("read_files"),
			calls:  []round.ToolCall{runTool("1", "read_files", readA), runTool("2", "read_files", `{"paths": ["a.txt"]}`), runTool("3", "read_files", `{"paths":["b"]}`)},
			states: []CallState{CallReady, CallDup, CallReady}},
		{name: "P1.3 a direct call and a run_tool call share the key", provider: tools.ProviderClaudeCode, state: dedupeHit,
			calls: []round.ToolCall{call("1", "read_files", readA)}, states: []CallState{CallDone}, statuses: []round.Status{round.StatusDeduped}},
		// P1.4
		{name: "P1.4 a tool called before its schema was fetched returns its schema", provider: "openai",
			calls: []round.ToolCall{runTool("1", "read_files", readA)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusSchema}, contains: []string{`"name":"read_files"`}},
		{name: "P1.4 the re-invoke in the same round runs", provider: "openai",
			calls:  []round.ToolCall{runTool("1", "read_files", readA), runTool("2", "read_files", `{"paths":["b"]}`)},
			states: []CallState{CallDone, CallReady}, statuses: []round.Status{round.StatusSchema}},
		{name: "P1.4 claude-code: first call of any tool but find_tools returns its schema", provider: tools.ProviderClaudeCode,
			calls:  []round.ToolCall{call("1", "reasoning_guide", `{}`), call("2", "find_tools", `{"query":"x"}`)},
			states: []CallState{CallDone, CallReady}, statuses: []round.Status{round.StatusSchema}},
		{name: "P1.4 S1 tools run at once for other providers", provider: "openai",
			calls: []round.ToolCall{call("1", "reasoning_guide", `{}`)}, states: []CallState{CallReady}},
		// P1.5
		{name: "P1.5 unknown names never run and get the closest names", provider: "openai",
			calls: []round.ToolCall{runTool("1", "read_file", readA)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusUnknown}, contains: []string{"closest known tools: read_files"}},
		{name: "P1.5 unknown names called directly are unknown, not refused", provider: "openai",
			calls: []round.ToolCall{call("1", "read_file", readA)}, states: []CallState{CallDone}, statuses: []round.Status{round.StatusUnknown}},
		{name: "C3 renamed tool", provider: tools.ProviderClaudeCode,
			calls: []round.ToolCall{call("1", "run_command_background", `{}`)}, states: []CallState{CallDone},
			statuses: []round.Status{round.StatusUnknown}, contains: []string{"renamed: call background_command"}},
		{name: "C3 removed tools", provider: "openai",
			calls:    []round.ToolCall{runTool("1", "run_websocket", `{}`), runTool("2", "run_command_readonly", `{}`), runTool("3", "find_note", `{}`), runTool("4", "api_weather", `{}`)},
			states:   []CallState{CallDone, CallDone, CallDone, CallDone},
			statuses: []round.Status{round.StatusUnknown, round.StatusUnknown, round.StatusUnknown, round.StatusUnknown},
			contains: []string{"no replacement", "removed in v1.0.25", "removed in v1.0.23", "public_api_list"}},
		// P1.6 and C4
		{name: "C4 side effects ask, read-only and GET do not", provider: tools.ProviderClaudeCode, state: fetched("edit_file", "read_files", "http_request", "calculate"),
			calls: []round.ToolCall{
				call("1", "edit_file", `{"path":"a","new_text":"x"}`), call("2", "read_files", readA),
				call("3", "http_request", `{"url":"http://x"}`), call("4", "http_request", `{"url":"http://x","method":"POST"}`),
				call("5", "calculate", `{"expression":"1+1"}`),
			},
			states: []CallState{CallWaiting, CallReady, CallReady, CallWaiting, CallReady}},
		{name: "C4 auto-approve skips confirmation", provider: tools.ProviderClaudeCode, state: fetched("edit_file"), auto: true,
			calls: []round.ToolCall{call("1", "edit_file", `{"path":"a","new_text":"x"}`)}, states: []CallState{CallReady}},
		{name: "C4 a remembered rule approves", provider: tools.ProviderClaudeCode,
			state:  &round.RunState{Fetched: []string{"run_command"}, Allow: []round.AllowRule{{Tool: "run_command", Pattern: "git *"}}},
			calls:  []round.ToolCall{call("1", "run_command", `{"command":"git status"}`), call("2", "run_command", `{"command":"rm -rf x"}`)},
			states: []CallState{CallReady, CallWaiting}},
		{name: "C4 a sensitive read always asks, even with auto-approve", provider: tools.ProviderClaudeCode, state: fetched("read_files"), auto: true,
			calls:  []round.ToolCall{call("1", "read_files", `{"paths":["config/.env"]}`), call("2", "read_files", `{"paths":["home/.ssh/id_rsa"]}`)},
			states: []CallState{CallWaiting, CallWaiting}},
		{name: "C4 bookkeeping tools never ask", provider: "openai",
			calls: []round.ToolCall{call("1", "write_todo", `{"items":[]}`), call("2", "write_result", `{"content":"x"}`)}, states: []CallState{CallReady, CallReady}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &round.Input{SessionID: "s", RunID: "r", Round: 2, Provider: tt.provider, State: tt.state, AutoApprove: tt.auto,
				Assistant:   round.Message{Role: "assistant", ToolCalls: tt.calls},
				ClientTools: []tools.ToolSpec{{Type: "function", Function: tools.FunctionSpec{Name: "client_echo"}}}}
			p := preflightWith(t, in)
			require.Len(t, p.plan, len(tt.calls))
			for i, want := range tt.states {
				require.Equal(t, want, p.plan[i].State, "call %d stage (%s)", i, p.plan[i].Content)
				if i < len(tt.statuses) && tt.statuses[i] != "" {
					require.Equal(t, tt.statuses[i], p.plan[i].Status, "call %d status", i)
				}
				if i < len(tt.contains) && tt.contains[i] != "" {
					require.Contains(t, p.plan[i].Content, tt.contains[i], "call %d content", i)
				}
			}
		})
	}
}

func TestPreflightMarksSchemaFetched(t *testing.T) {
	p := preflight(t, "openai", nil, runTool("1", "read_files", `{"paths":["a"]}`))
	require.Equal(t, round.StatusSchema, p.plan[0].Status)
	require.True(t, p.st.HasFetched("read_files"), "P1.4: the tool is marked fetched so the re-invoke runs")
	next := preflight(t, "openai", p.st, runTool("1", "read_files", `{"paths":["a"]}`))
	require.Equal(t, CallReady, next.plan[0].State)
}

func TestPreflightDedupeKeyIsCanonical(t *testing.T) {
	p := preflight(t, "openai", fetched("read_files"),
		runTool("1", "read_files", `{"paths":["a"],"x":{"b":1,"a":2}}`),
		runTool("2", "read_files", `{ "x" : {"a":2, "b":1}, "paths":["a"] }`))
	require.Equal(t, p.plan[0].Key, p.plan[1].Key)
	require.Equal(t, `read_files|{"paths":["a"],"x":{"a":2,"b":1}}`, p.plan[0].Key)
	require.Equal(t, CallDup, p.plan[1].State)
	require.Equal(t, 0, p.plan[1].DupOf)
}

func TestDedupeKeyOfInvalidJSONIsTrimmedRawText(t *testing.T) {
	require.Equal(t, "calculate|{not json", tools.DedupeKey("calculate", []byte("  {not json \n")))
	require.Equal(t, "calculate|", tools.DedupeKey("calculate", []byte("")))
}

func TestPreflightNoDedupeToolsRunAgain(t *testing.T) {
	in := &round.Input{SessionID: "s", RunID: "r", Round: 2, Provider: "openai",
		Assistant: round.Message{Role: "assistant", ToolCalls: []round.ToolCall{call("1", "calculate", `{"expression":"1"}`)}}}
	un := []Unwrapped{Unwrap(in.Assistant.ToolCalls[0])}
	snap := Snapshot{Loaded: []string{"calculate"}, Preloaded: []string{"calculate"}, Calls: make([]CallFacts, 1),
		Tools: map[string]ToolInfo{"calculate": {Name: "calculate", NoDedupe: true, SideEffect: tools.ReadOnly}}}
	st := &round.RunState{Dedupe: map[string]round.DedupeEntry{tools.DedupeKey("calculate", []byte(`{"expression":"1"}`)): {Content: "old"}}}
	plan := Preflight(in, un, &snap, st)
	require.Equal(t, CallReady, plan[0].State)
}

func TestValidate(t *testing.T) {
	p := preflight(t, tools.ProviderClaudeCode, fetched("edit_file", "read_files"),
		call("1", "read_files", `{"paths":"a.txt","extra":1}`),
		call("2", "read_files", `[1,2]`),
		call("3", "read_files", `not json`),
		call("4", "read_files", `{"paths":["ok"]}`),
		call("5", "read_files", ``),
	)
	Validate(p.plan, &p.snap)
	require.Equal(t, round.StatusInvalid, p.plan[0].Status)
	require.True(t, strings.HasPrefix(p.plan[0].Content, "invalid arguments: "))
	require.Contains(t, p.plan[0].Content, "paths: Invalid type. Expected: array, given: string")
	require.Contains(t, p.plan[0].Content, "Additional property extra is not allowed", "P1.7: every violation is listed")
	require.Contains(t, p.plan[1].Content, "arguments must be a JSON object, got an array")
	require.Contains(t, p.plan[2].Content, "arguments are not valid JSON")
	require.Equal(t, CallReady, p.plan[3].State)
	require.Contains(t, p.plan[4].Content, "paths is required")
	res := Commit(CommitInput{Input: p.in, WorkflowID: "wf", Calls: p.plan, Snapshot: &p.snap, State: p.st})
	require.True(t, strings.HasPrefix(res.Result.Results[0].Content, "tool=read_files failed: invalid arguments: "), res.Result.Results[0].Content)
}

func TestDecide(t *testing.T) {
	var p Call
	p.State = CallWaiting
	Decide(&p, false, "")
	require.Equal(t, round.StatusSkipped, p.Status)
	require.Equal(t, "Skipped by user", p.Content)
	p.State = CallWaiting
	Decide(&p, false, "too risky")
	require.Equal(t, "Skipped by user. Reason: too risky", p.Content)
	p = Call{State: CallWaiting}
	Decide(&p, true, "")
	require.Equal(t, CallReady, p.State)
}
