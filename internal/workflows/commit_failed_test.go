package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// TestCommitChangesThatDidNotSucceedDropEntries: a change that failed, was
// cancelled or whose outcome is unknown may still have changed the workdir
// (P3.3), so the dedupe entries it may have touched go as after a success;
// a change that never ran (skipped, refused) leaves them.
func TestCommitChangesThatDidNotSucceedDropEntries(t *testing.T) {
	changes := []struct {
		name    string
		call    round.ToolCall
		touched []string
	}{
		{"edit_file reporting the path", call("e", "edit_file", `{"path":"a","new_text":"x"}`), []string{"a"}},
		{"edit_file naming it in its arguments", call("e", "edit_file", `{"path":"a","new_text":"x"}`), nil},
		{"remove_file", call("e", "remove_file", `{"path":"a"}`), nil},
		{"run_command", call("e", "run_command", `{"command":"sed -i s/x/y/ a"}`), nil},
	}
	statuses := []struct {
		status  round.Status
		dropped bool
	}{
		{round.StatusOK, true},
		{round.StatusError, true},
		{round.StatusUnknownOutcome, true},
		{round.StatusCancelled, true},
		{round.StatusSkipped, false},
		{round.StatusRefused, false},
	}
	readA, readB := tools.DedupeKey("read_files", []byte(`{"paths":["a"]}`)), tools.DedupeKey("read_files", []byte(`{"paths":["b"]}`))
	for _, ch := range changes {
		for _, st := range statuses {
			t.Run(ch.name+"/"+string(st.status), func(t *testing.T) {
				state := &round.RunState{Fetched: []string{"read_files", "edit_file", "remove_file", "run_command"}, Dedupe: map[string]round.DedupeEntry{
					readA: {Tool: "read_files", Content: "old a", Round: 1, CallID: "r1", Seq: 1, Read: []string{"a"}},
					readB: {Tool: "read_files", Content: "old b", Round: 1, CallID: "r2", Seq: 2, Read: []string{"b"}},
				}, Seq: 2}
				p := preflight(t, tools.ProviderClaudeCode, state, ch.call)
				if _, ok := p.snap.Tools["remove_file"]; !ok && ch.call.Function.Name == "remove_file" {
					// The test registry has no remove_file: the snapshot
					// has the facts of the built-in.
					p.snap.Tools["remove_file"] = ToolInfo{Name: "remove_file", SideEffect: tools.AtMostOnce, TouchesPath: true}
				}
				p.in.AutoApprove = true
				p.plan[0].State = CallReady
				out := commit(p, &Outcome{Status: st.status, Content: "whatever happened", Touched: ch.touched, Attempts: 1}).Result.State
				_, keptA := out.Dedupe[readA]
				require.Equal(t, !st.dropped, keptA, "the read of a after a %s change with status %s", ch.name, st.status)
				_, keptB := out.Dedupe[readB]
				require.Equal(t, ch.call.Function.Name != "run_command" || !st.dropped, keptB,
					"the read of b after a %s change with status %s (a shell command may change anything)", ch.name, st.status)
			})
		}
	}
}
