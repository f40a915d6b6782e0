package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

var unwrapSeeds = []struct{ name, args string }{
	{"read_files", `{"paths":["a"]}`},
	{"run_tool", `{"name":"read_files","args":{"paths":["a"]}}`},
	{"run_tool", `{"name":"read_files","args":"{\"paths\":[\"a\"]}"}`},
	{"run_tool", `{"name":"calculate","args":null}`},
	{"run_tool", `{"name":"calculate"}`},
	{"run_tool", `{"name":"run_tool","args":{}}`},
	{"run_tool", `{"name":"","args":{}}`},
	{"run_tool", `{"name":5}`},
	{"run_tool", `{"name":"x","args":[1]}`},
	{"run_tool", `{"name":"x","args":"not json"}`},
	{"run_tool", `{"name":"x","args":"\ud800"}`},
	{"run_tool", `[]`}, {"run_tool", `null`}, {"run_tool", ``}, {"run_tool", `{"name":"x"} {}`},
}

// FuzzUnwrap checks P1.1 on arbitrary calls: Unwrap never panics, leaves
// every other tool's call as it is, and turns run_tool either into a call
// of a named tool other than run_tool, only when its arguments are exactly
// one JSON object, or into an error that shows the expected shape.
func FuzzUnwrap(f *testing.F) {
	for _, s := range unwrapSeeds {
		f.Add(s.name, s.args)
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		u := Unwrap(round.ToolCall{ID: "c", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}})
		if name != tools.RunTool {
			if u != (Unwrapped{Name: name, Args: args}) {
				t.Fatalf("a call of %q changed: %+v", name, u)
			}
			return
		}
		if !u.Via {
			t.Fatalf("a run_tool call is not marked Via: %+v", u)
		}
		if u.Err != "" {
			if u.Name != tools.RunTool || !strings.Contains(u.Err, runToolShape) {
				t.Fatalf("a malformed run_tool call: %+v", u)
			}
			return
		}
		if strings.TrimSpace(u.Name) == "" || u.Name == tools.RunTool {
			t.Fatalf("run_tool unwrapped to %q", u.Name)
		}
		// A run_tool call unwraps only when its arguments are one JSON object
		// and nothing else.
		if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") {
			t.Fatalf("unwrapped %q although its arguments are not one JSON object", args)
		}
		var outer map[string]json.RawMessage
		if err := json.Unmarshal([]byte(args), &outer); err != nil {
			t.Fatalf("unwrapped %q although its arguments do not decode: %v", args, err)
		}
		var inner string
		if err := json.Unmarshal(outer["name"], &inner); err != nil || inner != u.Name {
			t.Fatalf("unwrapped name %q, the arguments say %s", u.Name, outer["name"])
		}
		raw := strings.TrimSpace(string(outer["args"]))
		if strings.HasPrefix(raw, `"`) {
			return // a JSON string holds the arguments' text, checked later (P1.7)
		}
		if !json.Valid([]byte(u.Args)) || !strings.HasPrefix(u.Args, "{") {
			t.Fatalf("run_tool's args %q unwrapped to %q, not a JSON object", raw, u.Args)
		}
		if strings.HasPrefix(raw, "{") && u.Args != raw {
			t.Fatalf("object args %q became %q", raw, u.Args)
		}
	})
}

// FuzzPassesGiveEveryCallOneResult runs pass 1, the decisions, validation
// and pass 3 over arbitrary rounds (names, arguments, run_tool wrapping,
// provider, approvals, outcomes) and checks P3.1: every call id once, in
// call order, with a known status, failures formatted as P3.2 says, and the
// dedupe map holding only successful results.
func FuzzPassesGiveEveryCallOneResult(f *testing.F) {
	f.Add("read_files,calculate,~calculate,nope,run_command,edit_file,~run_tool,run_command_background,api_x", `{"paths":["a"]}`, uint8(0), uint64(0))
	f.Add("calculate,calculate,~calculate", `{"expression":"1"}`, uint8(1), uint64(0xffff))
	f.Add("run_command,~run_command,ask_user,write_todo", `{"command":"ls"}`, uint8(2), uint64(0x5555))
	f.Add("edit_file,read_files,find_files", `{"path":"a","new_text":"x"}`, uint8(3), uint64(0xaaaa))
	f.Add(",,", `not json`, uint8(0), uint64(1))
	f.Add("calculate,calculate,~calculate,read_files", `{"expression":"1"}`, uint8(1|2|8|32), uint64(0xffff))
	f.Add("calculate,calculate,~calculate,read_files", `{"expression":"1"}`, uint8(1|2|8|16|32), uint64(0xffff))
	f.Add("edit_file,~edit_file,find_files", `{"path":"a","new_text":"x"}`, uint8(2|8), uint64(0))
	f.Fuzz(func(t *testing.T, names, args string, mode uint8, bits uint64) {
		parts := strings.Split(names, ",")
		if len(parts) > 40 {
			parts = parts[:40]
		}
		in := &round.Input{SessionID: "s", RunID: "r", Round: 2, Provider: "openai", AutoApprove: mode&4 != 0}
		if mode&1 != 0 {
			in.Provider = tools.ProviderClaudeCode
		}
		if mode&2 != 0 {
			in.State = &round.RunState{Fetched: []string{"ask_user", "calculate", "edit_file", "find_files", "http_request", "read_files", "run_command", "write_todo"}}
			if mode&32 != 0 && len(parts) > 0 {
				// An earlier result of the first call, with file states.
				in.State.Dedupe = map[string]round.DedupeEntry{tools.DedupeKey(strings.TrimPrefix(parts[0], "~"), []byte(args)): {
					Tool: parts[0], Content: "out earlier", Round: 1, CallID: "old", Files: map[string]round.FileState{"a": {Size: 1}}}}
			}
		}
		for i, name := range parts {
			c := round.ToolCall{ID: fmt.Sprintf("c%d", i), Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}}
			if inner, ok := strings.CutPrefix(name, "~"); ok {
				wrapped := map[string]any{"name": inner, "args": args}
				if json.Valid([]byte(args)) {
					wrapped["args"] = json.RawMessage(args)
				}
				b, err := json.Marshal(wrapped)
				if err != nil {
					return
				}
				c.Function = round.FunctionCall{Name: tools.RunTool, Arguments: round.Arguments(b)}
			}
			in.Assistant.ToolCalls = append(in.Assistant.ToolCalls, c)
		}
		bit := func(i int) bool { return bits>>(uint(i)%64)&1 != 0 }

		cat := NewCatalog(testtools.Registry(testtools.NewRecorder()), CatalogOptions{MaxConcurrent: 3})
		calls := make([]Unwrapped, len(in.Assistant.ToolCalls))
		for i, c := range in.Assistant.ToolCalls {
			calls[i] = Unwrap(c)
		}
		snap := cat.Snapshot(SnapshotRequest{Provider: in.Provider, ClientTools: in.ClientTools, Calls: calls})
		snap.Features.HonestRepeats = mode&8 != 0
		if mode&16 != 0 {
			off := false
			in.Dedupe = &off
		}
		st := in.State.Clone()
		plan := Preflight(in, calls, &snap, st)
		for i := range plan {
			if plan[i].State == CallWaiting {
				Decide(&plan[i], bit(i), "")
			}
		}
		Validate(plan, &snap)
		for i := range plan {
			if plan[i].State != CallReady {
				continue
			}
			switch {
			case bit(i + 7):
				plan[i].Outcome = &Outcome{Status: round.StatusOK, Content: "out " + plan[i].CallID, Touched: []string{"a"}}
			case bit(i + 13):
				plan[i].Outcome = &Outcome{Status: round.StatusUnknownOutcome, Content: "lost"}
			default:
				plan[i].Outcome = &Outcome{Status: round.StatusError, Content: "no such file"}
			}
			plan[i].State = CallDone
		}
		out := Commit(CommitInput{Input: in, WorkflowID: "wf", Calls: plan, Snapshot: &snap, State: st})

		res := out.Result
		if len(res.Results) != len(in.Assistant.ToolCalls) || len(res.Messages) != len(in.Assistant.ToolCalls) || len(res.History) != len(in.Assistant.ToolCalls)+1 {
			t.Fatalf("%d calls, %d results, %d messages, %d history", len(in.Assistant.ToolCalls), len(res.Results), len(res.Messages), len(res.History))
		}
		valid := []round.Status{round.StatusOK, round.StatusError, round.StatusDeduped, round.StatusRefused, round.StatusSchema,
			round.StatusUnknown, round.StatusSkipped, round.StatusInvalid, round.StatusUnknownOutcome, round.StatusCancelled}
		for i, c := range in.Assistant.ToolCalls {
			r := res.Results[i]
			if r.CallID != c.ID || res.Messages[i].ToolCallID != c.ID {
				t.Fatalf("result %d is for %q, want %q", i, r.CallID, c.ID)
			}
			if !slices.Contains(valid, r.Status) {
				t.Fatalf("call %s has status %q", c.ID, r.Status)
			}
			if IsFailure(r.Status) && !strings.HasPrefix(r.Content, "tool="+r.Tool+" failed: ") {
				t.Fatalf("failure of %s reads %q", c.ID, r.Content)
			}
			want := r.Content
			if r.Repeat != nil {
				want = r.Repeat.Note() + "\n" + want
			}
			if res.Messages[i].Content != round.MessageContent(r.Tool, want) {
				t.Fatalf("message of %s is not its result", c.ID)
			}
			if snap.Features.HonestRepeats && (r.Status == round.StatusDeduped) != (r.Repeat != nil) {
				t.Fatalf("call %s is %s with repeat %+v: every repeat, and only a repeat, names what it repeats", c.ID, r.Status, r.Repeat)
			}
			if !snap.Features.HonestRepeats && r.Repeat != nil {
				t.Fatalf("call %s names a repeat in a round recorded before honest repeats", c.ID)
			}
			if snap.Features.HonestRepeats && !in.DedupeOn() && r.Status == round.StatusDeduped {
				t.Fatalf("call %s is deduped in a round with dedupe off", c.ID)
			}
			if r.Status == round.StatusCancelled {
				t.Fatalf("call %s neither ran nor settled: %q", c.ID, r.Content)
			}
		}
		for key, e := range res.State.Dedupe {
			if !strings.HasPrefix(e.Content, "out ") {
				t.Fatalf("dedupe entry %q holds a result that was not a success: %q", key, e.Content)
			}
		}
	})
}
