package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// TestChangesThatDidNotSucceedDropDedupeEntries runs rounds whose change
// fails, is lost (unknown_outcome) or is cancelled while it runs: each may
// have changed the workdir, so the next round must not be served the read it
// may have made stale (P3.3). The read of another file stays, but for a
// change that may have touched anything.
func TestChangesThatDidNotSucceedDropDedupeEntries(t *testing.T) {
	readA, readB := tools.DedupeKey("read_files", []byte(`{"paths":["a"]}`)), tools.DedupeKey("read_files", []byte(`{"paths":["b"]}`))
	cases := []struct {
		name   string
		status round.Status
		setup  func(h *harness)
		call   round.ToolCall
		keepB  bool
	}{
		{name: "a failed edit", status: round.StatusError, keepB: true,
			setup: func(h *harness) { h.rec.Fail["edit_file"] = errors.New("edit_file: a: disk full") },
			call:  call("e1", "edit_file", `{"path":"a","new_text":"x"}`)},
		{name: "a failed shell command", status: round.StatusError,
			setup: func(h *harness) { h.rec.Fail["run_command"] = errors.New("run_command: exit code 1") },
			call:  call("e1", "run_command", `{"command":"sed -i s/x/y/ a && false"}`)},
		{name: "a lost change", status: round.StatusUnknownOutcome,
			setup: func(h *harness) {
				h.reg.MustRegister(tools.Definition{
					Name: "scribble", Description: "Change the workdir; the call hangs past its timeout.", SideEffect: tools.AtMostOnce, Volatile: true,
					Timeout: time.Second, Parameters: []byte(`{"type":"object"}`),
					Handler: func(ctx context.Context, _ tools.Request) (tools.Result, error) {
						<-ctx.Done()
						return tools.Result{}, ctx.Err()
					},
				})
			},
			call: call("e1", "scribble", `{}`)},
		{name: "a change cancelled while it ran", status: round.StatusCancelled,
			setup: func(h *harness) {
				h.rec.Block["e1"] = make(chan struct{}) // only the cancellation ends it
				h.at(time.Second, func() { h.env.CancelWorkflow() })
			},
			call: call("e1", "run_command", `{"command":"sed -i s/x/y/ a; sleep 100"}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2)
			tc.setup(h)
			in := auto(input(tc.call))
			in.Round = 2
			in.State.Fetched = append(in.State.Fetched, "scribble")
			in.State.Seq = 2
			in.State.Dedupe = map[string]round.DedupeEntry{
				readA: {Tool: "read_files", Content: "old a", Round: 1, CallID: "r1", Seq: 1, Read: []string{"a"}},
				readB: {Tool: "read_files", Content: "old b", Round: 1, CallID: "r2", Seq: 2, Read: []string{"b"}},
			}
			res := h.run(t, in)
			require.Equal(t, tc.status, res.Results[0].Status, res.Results[0].Content)
			require.NotContains(t, res.State.Dedupe, readA, "a %s left the read of a it may have changed in the dedupe map", tc.name)
			_, kept := res.State.Dedupe[readB]
			require.Equal(t, tc.keepB, kept, "the read of b after %s", tc.name)
		})
	}
}
