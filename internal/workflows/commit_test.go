package workflows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

func ok(content string, touched ...string) *Outcome {
	return &Outcome{Status: round.StatusOK, Content: content, Touched: touched, Attempts: 1}
}

// commit runs pass 3 over p as if the calls given an outcome had run.
func commit(p planned, outcomes ...*Outcome) CommitOutput {
	calls := append([]Call(nil), p.plan...)
	for i, o := range outcomes {
		if o != nil {
			calls[i].Outcome, calls[i].State = o, CallDone
		}
	}
	return Commit(CommitInput{Input: p.in, WorkflowID: "wf", Calls: calls, Snapshot: &p.snap, State: p.st,
		Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
}

func TestCommitLandsOneResultPerCallInCallOrder(t *testing.T) {
	p := preflight(t, "openai", fetched("read_files", "calculate"),
		runTool("c1", "read_files", `{"paths":["a"]}`),
		call("c2", "nope", `{}`),
		runTool("c3", "read_files", `{"paths":["a"]}`),
		runTool("c4", "calculate", `{"expression":"1+1"}`),
	)
	out := commit(p, ok("A"), nil, nil, &Outcome{Status: round.StatusError, Content: "calculate: division by zero"})
	res := out.Result
	require.Len(t, res.Results, 4)
	ids := []string{}
	for _, r := range res.Results {
		ids = append(ids, r.CallID)
	}
	require.Equal(t, []string{"c1", "c2", "c3", "c4"}, ids, "P3.1: call order")
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, round.StatusUnknown, res.Results[1].Status)
	require.Equal(t, round.StatusDeduped, res.Results[2].Status, "P1.3: both identical calls get the result")
	require.Equal(t, "A", res.Results[2].Content)
	require.Equal(t, round.StatusError, res.Results[3].Status)
	require.True(t, res.Results[0].ViaRunTool)

	require.Len(t, res.Messages, 4)
	for i, m := range res.Messages {
		require.Equal(t, "tool", m.Role)
		require.Equal(t, res.Results[i].CallID, m.ToolCallID)
		require.True(t, strings.HasPrefix(m.Content, "["+res.Results[i].Tool+"] "), m.Content)
	}
	require.Len(t, res.History, 5, "P3.1: the assistant message then one tool message per call")
	require.Equal(t, "assistant", res.History[0].Role)
	require.Equal(t, p.in.Assistant.ToolCalls, res.History[0].ToolCalls)
	require.Equal(t, res.Messages, res.History[1:])
}

func TestCommitFailureContentAndHints(t *testing.T) {
	tests := []struct {
		err  string
		hint string
	}{
		{"http_request: GET https://api.example.com: 401 Unauthorized", "store_secret"},
		{"http_request: GET https://api.example.com: 403 Forbidden", "store_secret"},
		{"search_web: no API key configured", "store_secret"},
		{"the API token is missing", "store_secret"},
		{"http_request: secret github_token is missing: store it with store_secret(name, value)", "store_secret"},
		{"read_files: a.txt: no such file", `write_error(tool="read_files", error=<the error>, outcome="resolved"`},
		{"exit status 4030", "write_error("},
	}
	for _, tt := range tests {
		t.Run(tt.err, func(t *testing.T) {
			c := FailureContent("read_files", tt.err)
			require.True(t, strings.HasPrefix(c, "tool=read_files failed: "), c)
			lines := strings.Split(c, "\n")
			last := lines[len(lines)-1]
			require.True(t, strings.HasPrefix(last, "next: "), "P3.2: ends with a next: hint: %q", c)
			require.Contains(t, last, tt.hint)
			require.NotContains(t, c, "error_history(mode=write)", "the old hint is gone (v1.3.11)")
		})
	}
	require.Equal(t, "tool=read_files failed: a.txt: no such file", strings.Split(FailureContent("read_files", "read_files: a.txt: no such file"), "\n")[0],
		"the tool's own prefix is not repeated")
}

func TestCommitStatusesThatAreNotFailuresKeepTheirContent(t *testing.T) {
	for _, s := range []round.Status{round.StatusOK, round.StatusDeduped, round.StatusRefused, round.StatusSchema, round.StatusSkipped, round.StatusCancelled} {
		require.False(t, IsFailure(s), s)
	}
	for _, s := range []round.Status{round.StatusError, round.StatusInvalid, round.StatusUnknown, round.StatusUnknownOutcome} {
		require.True(t, IsFailure(s), s)
	}
}

func TestCommitDedupeMap(t *testing.T) {
	p := preflight(t, "openai", fetched("read_files", "calculate"),
		runTool("1", "read_files", `{"paths":["a"]}`),
		runTool("2", "calculate", `{"expression":"1/0"}`),
	)
	st := commit(p, ok("A"), &Outcome{Status: round.StatusError, Content: "division by zero"}).Result.State
	require.Contains(t, st.Dedupe, `read_files|{"paths":["a"]}`)
	require.NotContains(t, st.Dedupe, `calculate|{"expression":"1/0"}`, "P1.3: only successful results enter the map")
	e := st.Dedupe[`read_files|{"paths":["a"]}`]
	require.Equal(t, "A", e.Content)
	require.Equal(t, []string{"a"}, e.Read)

	// The next round of the run gets the earlier result without running.
	next := preflight(t, "openai", st, runTool("9", "read_files", `{"paths":["a"]}`))
	require.Equal(t, round.StatusDeduped, next.plan[0].Status)
	require.Equal(t, "A", next.plan[0].Content)
}

func TestCommitFileChangesDropReadFilesEntries(t *testing.T) {
	tests := []struct {
		name    string
		reads   []string // paths of earlier read_files entries
		change  round.ToolCall
		touched []string
		dropped []bool
	}{
		{"P3.3 edit_file drops the read of that file", []string{`["src/a.go"]`, `["src/b.go"]`},
			call("e", "edit_file", `{"path":"src/a.go","new_text":"x"}`), []string{"src/a.go"}, []bool{true, false}},
		{"P3.3 edit_file drops a read of a folder that holds the file", []string{`["src"]`, `["."]`, `["doc"]`},
			call("e", "edit_file", `{"path":"src/a.go","new_text":"x"}`), []string{"src/a.go"}, []bool{true, true, false}},
		{"P3.3 a read of several paths is dropped when one is touched", []string{`["x","src/a.go"]`},
			call("e", "edit_file", `{"path":"src/a.go","new_text":"x"}`), []string{"src/a.go"}, []bool{true}},
		{"P3.3 removing a folder drops reads of files in it", []string{`["src/a.go"]`, `["srcx/a.go"]`},
			call("e", "edit_file", `{"path":"src","new_text":""}`), []string{"src"}, []bool{true, false}},
		{"P3.3 touched paths come from the arguments when the handler names none", []string{`["a"]`},
			call("e", "edit_file", `{"path":"./a","new_text":"x"}`), nil, []bool{true}},
		{"a shell command may change anything", []string{`["a"]`, `["b"]`},
			call("e", "run_command", `{"command":"sed -i s/x/y/ a"}`), nil, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &round.RunState{Fetched: []string{"read_files", "edit_file", "run_command"}, Dedupe: map[string]round.DedupeEntry{}}
			for i, paths := range tt.reads {
				args := `{"paths":` + paths + `}`
				st.Dedupe[tools.DedupeKey("read_files", []byte(args))] = round.DedupeEntry{Tool: "read_files", Content: "old", Round: 1, CallID: string(rune('a' + i)), Read: readPaths(&Call{Tool: "read_files", Args: args}, nil, ToolInfo{ReadsPaths: true})}
			}
			p := preflight(t, tools.ProviderClaudeCode, st, tt.change)
			p.in.AutoApprove = true
			p.plan[0].State = CallReady
			out := commit(p, ok("done", tt.touched...)).Result.State
			for i, paths := range tt.reads {
				_, kept := out.Dedupe[tools.DedupeKey("read_files", []byte(`{"paths":`+paths+`}`))]
				require.Equal(t, !tt.dropped[i], kept, "entry %s", paths)
			}
		})
	}
}

func TestCommitEditInvalidatesEarlierEditOfSamePath(t *testing.T) {
	// x, then y, then x again: the third edit must run, not return the first result.
	st := &round.RunState{Fetched: []string{"edit_file"}}
	editX := call("1", "edit_file", `{"path":"a","new_text":"x"}`)
	p := preflight(t, tools.ProviderClaudeCode, st, editX)
	st = commit(p, ok("wrote a", "a")).Result.State
	p = preflight(t, tools.ProviderClaudeCode, st, call("2", "edit_file", `{"path":"a","new_text":"y"}`))
	st = commit(p, ok("wrote a", "a")).Result.State
	p = preflight(t, tools.ProviderClaudeCode, st, editX)
	require.NotEqual(t, CallDone, p.plan[0].State, "the repeated edit is not deduped after another edit of the same file")
}

func TestCommitFindToolsMarksFetched(t *testing.T) {
	p := preflight(t, "openai", nil, call("1", "find_tools", `{"query":"files"}`))
	out := commit(p, &Outcome{Status: round.StatusOK, Content: "schemas", Fetched: []string{"read_files", "find_files"}})
	require.True(t, out.Result.State.HasFetched("read_files"), "S4")
	require.True(t, out.Result.State.HasFetched("find_files"))
	next := preflight(t, "openai", out.Result.State, runTool("2", "read_files", `{"paths":["a"]}`))
	require.Equal(t, CallReady, next.plan[0].State)
}

func TestCommitEventsAndCacheWrites(t *testing.T) {
	p := preflight(t, "openai", fetched("http_request"),
		runTool("g", "http_request", `{"url":"http://x/a"}`),
		runTool("p", "http_request", `{"url":"http://x/b","method":"POST"}`),
		runTool("e", "http_request", `{"url":"http://x/c"}`),
	)
	p.plan[1].State = CallReady
	out := commit(p, ok("GET a"), ok("POST b"), &Outcome{Status: round.StatusError, Content: "404"})
	require.Equal(t, []wire.CacheWrite{{Tool: "http_request", Args: `{"url":"http://x/a"}`, Content: "GET a"}}, out.CacheWrites,
		"P3.4: only successful http_request GETs are cached")
	large := &Outcome{Status: round.StatusOK, Content: "preview", ContentRef: "toolround:blob:abc"}
	require.Equal(t, []wire.CacheWrite{{Tool: "http_request", Args: `{"url":"http://x/a"}`, Content: "preview", ContentRef: "toolround:blob:abc"}},
		commit(p, large, ok("POST b"), nil).CacheWrites, "a large result is cached whole, from its blob")
	cached := &Outcome{Status: round.StatusOK, Content: "GET a", FromCache: true}
	require.Empty(t, commit(p, cached, ok("POST b"), nil).CacheWrites, "a cache hit is not written back, so its 30 minutes do not restart")
	var results []round.Event
	for _, e := range out.Result.Events {
		if e.Type == round.EventToolResult {
			results = append(results, e)
		}
	}
	require.Len(t, results, 3, "P3.5: one EventToolResult per call")
	for i, e := range results {
		require.Equal(t, p.plan[i].CallID, e.CallID)
		require.Equal(t, "wf/"+e.CallID+"/result", e.ID)
		require.Equal(t, "s", e.SessionID)
	}
	last := out.Result.Events[len(out.Result.Events)-1]
	require.Equal(t, round.EventRoundFinished, last.Type)
	require.Equal(t, "error=1 ok=2", last.Detail)
}

func TestCommitDedupeMapIsBounded(t *testing.T) {
	st := &round.RunState{Fetched: []string{"calculate"}, Dedupe: map[string]round.DedupeEntry{}}
	for i := 0; i < wire.MaxDedupeEntries; i++ {
		st.Seq++
		st.Dedupe[tools.DedupeKey("calculate", []byte(`{"expression":"`+strings.Repeat("1", i+1)+`"}`))] = round.DedupeEntry{Seq: st.Seq}
	}
	p := preflight(t, "openai", st, runTool("n", "calculate", `{"expression":"new"}`))
	out := commit(p, ok("new")).Result.State
	require.Len(t, out.Dedupe, wire.MaxDedupeEntries)
	require.NotContains(t, out.Dedupe, `calculate|{"expression":"1"}`, "the oldest entry goes first")
	require.Contains(t, out.Dedupe, `calculate|{"expression":"new"}`)
}

func TestCommitIsPure(t *testing.T) {
	entry := round.DedupeEntry{Tool: "read_files", Content: "old a", Round: 1, CallID: "0", Seq: 1, Read: []string{"a"}}
	st := &round.RunState{Fetched: []string{"edit_file", "read_files"}, Seq: 1,
		Dedupe: map[string]round.DedupeEntry{tools.DedupeKey("read_files", []byte(`{"paths":["a"]}`)): entry}}
	p := preflight(t, tools.ProviderClaudeCode, st,
		call("1", "read_files", `{"paths":["b"]}`), call("2", "edit_file", `{"path":"a","new_text":"x"}`), call("3", "find_tools", `{"query":"x"}`),
		call("4", "read_files", `{"paths":["c"]}`))
	p.plan[1].State = CallReady
	outcomes := []*Outcome{ok("B"), ok("wrote a", "a"), {Status: round.StatusOK, Content: "found", Fetched: []string{"web_fetch"}},
		{Status: round.StatusError, Content: "c: no such file"}}
	for i, o := range outcomes {
		p.plan[i].Outcome, p.plan[i].State = o, CallDone
	}
	in := CommitInput{Input: p.in, WorkflowID: "wf", Calls: p.plan, Snapshot: &p.snap, State: p.st,
		Events: []round.Event{{ID: "wf/started"}}, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	encode := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	// A failed call too: its content is rewritten into the result
	// (FailureContent), never into the outcome it came from.
	before := encode(in)
	first := Commit(in)
	require.Equal(t, before, encode(in), "Commit changed what it was given (the run state, the calls, their outcomes or the events)")
	require.NotContains(t, first.Result.State.Dedupe, tools.DedupeKey("read_files", []byte(`{"paths":["a"]}`)), "the new state has the round's changes")
	require.True(t, first.Result.State.HasFetched("web_fetch"))
	require.Equal(t, first, Commit(in), "the same input gives the same output")
}

func TestCommitUsesThePathsTheHandlerReportsReading(t *testing.T) {
	// read_files of an absolute path inside the workdir: the handler reports
	// the relative path, so a later edit of that file drops the entry.
	p := preflight(t, "openai", fetched("read_files"), runTool("r", "read_files", `{"paths":["/work/dir/a.txt"]}`))
	st := commit(p, &Outcome{Status: round.StatusOK, Content: "A", Read: []string{"a.txt"}}).Result.State
	require.Equal(t, []string{"a.txt"}, st.Dedupe[`read_files|{"paths":["/work/dir/a.txt"]}`].Read)
	p = preflight(t, tools.ProviderClaudeCode, st, call("e", "edit_file", `{"path":"a.txt","new_text":"x"}`))
	p.plan[0].State = CallReady
	st = commit(p, ok("wrote", "a.txt")).Result.State
	require.NotContains(t, st.Dedupe, `read_files|{"paths":["/work/dir/a.txt"]}`)
}

func TestOutputResultRebuildsMessagesAndHistory(t *testing.T) {
	p := preflight(t, "openai", fetched("read_files"), runTool("1", "read_files", `{"paths":["a"]}`), call("2", "nope", `{}`))
	full := commit(p, ok("A")).Result
	out := round.Output{WorkflowID: "wf", SessionID: "s", RunID: "r", Round: 1, Assistant: full.History[0], Results: full.Results,
		Events: round.CompactEvents(full.Events), State: full.State}
	require.Equal(t, full, out.Result(), "the workflow returns no messages or history and compact events; the client's rebuild is the same")
	for _, e := range out.Events {
		require.Empty(t, e.SessionID)
		require.Empty(t, e.WorkflowID)
	}
	withStart := append([]round.Event{{ID: "wf/1/started", Type: round.EventCallStarted}}, full.Events...)
	require.Len(t, round.CompactEvents(withStart), len(full.Events), "call_started events stay on the stream only")
}

// TestCommitHintsOnlyWhereTheyHelp (P3.2): with HelpfulHints, invalid
// arguments and the failures of an MCP server's tool end without a next:
// hint; other failures keep the seed's hints (store_secret for a credential,
// write_error otherwise). Without it (rounds recorded before), every failure
// has one.
func TestCommitHintsOnlyWhereTheyHelp(t *testing.T) {
	for _, helpful := range []bool{true, false} {
		p := preflight(t, "claude-code", fetched("read_files", "calculate", "find_files"),
			call("v1", "calculate", `{}`),
			call("e1", "read_files", `{"paths":["a"]}`),
			call("k1", "read_files", `{"paths":["b"]}`),
			call("m1", "find_files", `{"pattern":"*"}`),
		)
		Validate(p.plan, &p.snap) // P1.7
		require.Equal(t, round.StatusInvalid, p.plan[0].Status)
		ti := p.snap.Tools["find_files"]
		ti.MCP = true
		p.snap.Tools["find_files"] = ti
		p.snap.Features.HelpfulHints = helpful
		res := commit(p, nil,
			&Outcome{Status: round.StatusError, Content: "a: no such file"},
			&Outcome{Status: round.StatusError, Content: "GET https://api.example.com: 401 Unauthorized"},
			&Outcome{Status: round.StatusError, Content: "server said: 401 Unauthorized"}).Result
		byID := map[string]string{}
		for _, r := range res.Results {
			byID[r.CallID] = r.Content
			require.True(t, strings.HasPrefix(r.Content, "tool="+r.Tool+" failed: "), r.Content)
		}
		require.Contains(t, byID["e1"], "\nnext: succeed another way, then record what worked with write_error(")
		require.Contains(t, byID["k1"], "\nnext: a credential is missing or was refused: store it with store_secret(")
		if helpful {
			require.NotContains(t, byID["v1"], "next:", "invalid arguments: the model fixes them")
			require.Equal(t, "tool=find_files failed: server said: 401 Unauthorized", byID["m1"], "an MCP server's failure")
		} else {
			require.Contains(t, byID["v1"], "\nnext: ")
			require.Contains(t, byID["m1"], "\nnext: ")
		}
	}
}
