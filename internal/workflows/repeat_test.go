package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// honest runs pass 1 as the workflow does in executions with the
// honest-repeats version (on) or recorded before it (off).
func honest(t *testing.T, on bool, in *round.Input) planned {
	t.Helper()
	require.NoError(t, in.Validate())
	reg := testtools.Registry(testtools.NewRecorder())
	un := UnwrapAll(in.Assistant.ToolCalls)
	snap := NewCatalog(reg, CatalogOptions{MaxConcurrent: 3}).Snapshot(SnapshotRequest{Provider: in.Provider, Calls: un})
	snap.Features.HonestRepeats = on
	st := in.State.Clone()
	return planned{in: in, snap: snap, st: st, plan: Preflight(in, un, &snap, st)}
}

func roundOf(n int, provider string, st *round.RunState, calls ...round.ToolCall) *round.Input {
	return &round.Input{SessionID: "s", RunID: "r", Round: n, Provider: provider, State: st,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
}

func commitOf(p planned) round.Result {
	return Commit(CommitInput{Input: p.in, WorkflowID: "wf", Calls: p.plan, Snapshot: &p.snap, State: p.st}).Result
}

var (
	readA    = `{"paths":["a.txt"]}`
	calcArgs = `{"expression":"7"}`
)

// state holds an earlier read of a.txt (round 1, with file states) and an
// earlier calculation (round 2).
func state() *round.RunState {
	return &round.RunState{
		Fetched: []string{"calculate", "edit_file", "read_files"},
		Seq:     2,
		Dedupe: map[string]round.DedupeEntry{
			tools.DedupeKey("read_files", []byte(readA)): {Tool: "read_files", Content: "a.txt: hello", Round: 1, CallID: "r1", Seq: 1,
				Read: []string{"a.txt"}, Files: map[string]round.FileState{"a.txt": {Size: 5, ModTime: 1, SHA256: "ab"}}},
			tools.DedupeKey("calculate", []byte(calcArgs)): {Tool: "calculate", Content: "= 7", Round: 2, CallID: "c9", Seq: 2},
		},
	}
}

// TestRepeatsNameTheirRound is U3's pure part, table-driven: what a
// deduped result says, with and without the version, and "dedupe": false.
func TestRepeatsNameTheirRound(t *testing.T) {
	off := false
	tests := []struct {
		name     string
		on       bool
		dedupe   *bool
		statuses []round.Status
		messages []string // the tool messages, in call order
	}{
		{name: "recorded before the change: bare repeats", on: false,
			statuses: []round.Status{round.StatusDeduped, round.StatusDeduped, round.StatusOK, round.StatusDeduped},
			messages: []string{"[read_files] a.txt: hello", "[calculate] = 7", "[calculate] = 9", "[calculate] = 9"}},
		{name: "repeats say the round they repeat", on: true,
			statuses: []round.Status{round.StatusDeduped, round.StatusDeduped, round.StatusOK, round.StatusDeduped},
			messages: []string{
				"[read_files] (repeats the result of round 1 of this run; the files it read have not changed since)\na.txt: hello",
				"[calculate] (repeats the result of round 2 of this run)\n= 7",
				"[calculate] = 9",
				"[calculate] (repeats the result of call x1, an identical call of this round, round 3)\n= 9"}},
		{name: "dedupe false: every call runs", on: true, dedupe: &off,
			statuses: []round.Status{round.StatusOK, round.StatusOK, round.StatusOK, round.StatusOK},
			messages: []string{"[read_files] ran", "[calculate] ran", "[calculate] ran", "[calculate] ran"}},
		{name: "dedupe false is not read by rounds recorded before it", on: false, dedupe: &off,
			statuses: []round.Status{round.StatusDeduped, round.StatusDeduped, round.StatusOK, round.StatusDeduped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := roundOf(3, tools.ProviderClaudeCode, state(),
				call("r2", "read_files", readA), call("c1", "calculate", calcArgs),
				call("x1", "calculate", `{"expression":"9"}`), call("x2", "calculate", `{ "expression": "9" }`))
			in.Dedupe = tt.dedupe
			p := honest(t, tt.on, in)
			for i := range p.plan {
				if p.plan[i].State == CallReady {
					content := "ran"
					if tt.dedupe == nil || !tt.on {
						content = "= 9"
					}
					p.plan[i].Outcome, p.plan[i].State = &Outcome{Status: round.StatusOK, Content: content}, CallDone
				}
			}
			res := commitOf(p)
			var got []round.Status
			var msgs []string
			for i, r := range res.Results {
				got = append(got, r.Status)
				msgs = append(msgs, res.Messages[i].Content)
			}
			require.Equal(t, tt.statuses, got)
			if tt.messages != nil {
				require.Equal(t, tt.messages, msgs)
			}
			if tt.on && tt.dedupe == nil {
				require.Equal(t, &round.Repeat{Round: 1, CallID: "r1", Checked: true}, res.Results[0].Repeat)
				require.Equal(t, "a.txt: hello", res.Results[0].Content, "the note is in the message, not in the content")
			}
			if tt.dedupe != nil && tt.on {
				// The map is still updated: the runs replace the entries.
				require.Equal(t, 3, res.State.Dedupe[tools.DedupeKey("calculate", []byte(calcArgs))].Round)
			}
		})
	}
}

// TestRefusalHintMatchesTheState is U4: the P1.2 refusal of a tool whose
// schema the model already has says to call it through run_tool; of one it
// does not have, to fetch it first; rounds recorded before keep the old hint.
func TestRefusalHintMatchesTheState(t *testing.T) {
	const fetchHint = `Fetch its schema with find_tools(query="select:edit_file"), then call run_tool(name="edit_file", args={...}).`
	const runHint = `Its schema was already fetched in this run: call it through run_tool(name="edit_file", args={...}), not directly and without fetching it again.`
	tests := []struct {
		name    string
		on      bool
		fetched []string
		want    string
		not     string
	}{
		{"fetched", true, []string{"edit_file"}, runHint, "find_tools"},
		{"not fetched", true, nil, fetchHint, "already fetched"},
		{"fetched, recorded before the change", false, []string{"edit_file"}, fetchHint, "already fetched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := honest(t, tt.on, roundOf(2, "openai", &round.RunState{Fetched: tt.fetched},
				call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`)))
			require.Equal(t, round.StatusRefused, p.plan[0].Status)
			require.Contains(t, p.plan[0].Content, "tool edit_file is not loaded, so it did not run. ")
			require.Contains(t, p.plan[0].Content, tt.want)
			require.NotContains(t, p.plan[0].Content, tt.not)
		})
	}
}

// TestCheckInputListsRepeatsWithFileStates: only entries the round's calls
// would be served and that recorded file states are checked, once each, in
// call order.
func TestCheckInputListsRepeatsWithFileStates(t *testing.T) {
	st := state()
	readB := `{"paths":["b.txt"]}`
	st.Dedupe[tools.DedupeKey("read_files", []byte(readB))] = round.DedupeEntry{Tool: "read_files", Content: "b", Round: 2,
		Files: map[string]round.FileState{"b.txt": {Size: 1}}}
	calls := UnwrapAll([]round.ToolCall{
		call("1", "calculate", calcArgs),
		call("2", "read_files", readB),
		call("3", "read_files", `{"paths":["c.txt"]}`),
		runTool("4", "read_files", `{ "paths": ["a.txt"] }`),
		call("5", "read_files", readA),
		call("6", tools.RunTool, `not json`),
	})
	in := checkInput(calls, st)
	require.Len(t, in.Checks, 2)
	require.Equal(t, tools.DedupeKey("read_files", []byte(readB)), in.Checks[0].Key)
	require.Equal(t, tools.DedupeKey("read_files", []byte(readA)), in.Checks[1].Key)
	require.Equal(t, "read_files", in.Checks[1].Tool)
	require.Equal(t, map[string]round.FileState{"a.txt": {Size: 5, ModTime: 1, SHA256: "ab"}}, in.Checks[1].Files)
}

// TestCommitRecordsFileStates: a result's file states enter its dedupe
// entry, so that the next round can check them.
func TestCommitRecordsFileStates(t *testing.T) {
	p := honest(t, true, roundOf(1, tools.ProviderClaudeCode, fetched("read_files"), call("r1", "read_files", readA)))
	files := map[string]round.FileState{"a.txt": {Size: 5, ModTime: 7, SHA256: "cd"}}
	p.plan[0].Outcome, p.plan[0].State = &Outcome{Status: round.StatusOK, Content: "a.txt: hello", Files: files}, CallDone
	res := commitOf(p)
	e := res.State.Dedupe[tools.DedupeKey("read_files", []byte(readA))]
	require.Equal(t, files, e.Files)
	require.Equal(t, 1, e.Round)
	require.Equal(t, "[read_files] a.txt: hello", res.Messages[0].Content, "the file states stay out of what the model sees")
}
