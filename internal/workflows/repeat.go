package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Features are the behaviour changes made after rounds were recorded. Each
// is on only in executions that recorded its version marker
// (workflow.GetVersion), so that rounds recorded before it replay as they
// ran. The workflow sets them after the catalog snapshot; the catalog never
// does.
type Features struct {
	// HonestRepeats (U3, U4): a deduped result names the round and call it
	// repeats; an entry that recorded the files it read is served only when
	// CheckFiles finds them unchanged; "dedupe": false is honoured; the P1.2
	// refusal of a tool whose schema the model has points to run_tool.
	HonestRepeats bool
	// HelpfulHints (P3.2): a failure gets its next: hint only where it
	// helps, not for invalid arguments (the model fixes them) nor for a
	// tool of an MCP server.
	HelpfulHints bool
	// RunLimits (B1, B2): the run state counts what the run did; a call
	// past a limit waits as kind limit; every wait has a wait_id; counted
	// rules approve at most up_to calls.
	RunLimits bool
}

// features reads the versions of this execution's behaviour changes.
func features(ctx workflow.Context) Features {
	v := Version(ctx, changeHonestRepeats, 1)
	return Features{HonestRepeats: v >= 1, HelpfulHints: Version(ctx, changeHelpfulHints, 1) >= 1, RunLimits: Version(ctx, changeRunLimits, 1) >= 1}
}

// checkRepeats is the start of pass 1 (U3): the dedupe entries that this
// round's calls would be served and that recorded the files they read are
// checked against the workdir by the CheckFiles local activity, all in one
// go. Entries whose files changed, or that could not be checked, leave the
// run state, so their calls run again and their new results replace them
// (pass 3). A round without such repeats runs no activity here.
func (r *run) checkRepeats(ctx workflow.Context, calls []Unwrapped) {
	if !r.snap.Features.HonestRepeats || !r.in.DedupeOn() {
		return
	}
	in := checkInput(calls, r.st)
	if len(in.Checks) == 0 {
		return
	}
	var out wire.CheckFilesOutput
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: checkTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
		Summary:             "check the files of repeats",
	})
	var f workflow.Future
	if r.bound != nil { // on the workspace's host (W4)
		f = onHost[wire.CheckFilesOutput](r, ctx, workflow.ActivityOptions{
			StartToCloseTimeout: checkTimeout, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}, Summary: "check the files of repeats",
		}, wire.ActivityCheckFiles, in)
	} else {
		f = workflow.ExecuteLocalActivity(lctx, wire.ActivityCheckFiles, in)
	}
	if err := f.Get(ctx, &out); err != nil {
		// Unchecked repeats are not served: the calls run again.
		out.Changed = out.Changed[:0]
		for _, c := range in.Checks {
			out.Changed = append(out.Changed, c.Key)
		}
	}
	for _, key := range out.Changed {
		delete(r.st.Dedupe, key)
	}
}

// checkTimeout bounds the CheckFiles activity: it reads the files again to
// digest them.
const checkTimeout = 30 * time.Second

// checkInput lists, in call order and once each, the entries of st that
// the calls would be served and that recorded file states. It is pure.
func checkInput(calls []Unwrapped, st *round.RunState) wire.CheckFilesInput {
	var in wire.CheckFilesInput
	seen := map[string]bool{}
	for _, u := range calls {
		if u.Err != "" {
			continue
		}
		key := tools.DedupeKey(u.Name, []byte(u.Args))
		e, hit := st.Dedupe[key]
		if !hit || len(e.Files) == 0 || seen[key] {
			continue
		}
		seen[key] = true
		in.Checks = append(in.Checks, wire.FileCheck{Key: key, Tool: e.Tool, Files: e.Files})
	}
	return in
}

// repeatOf names the entry a call is served from (U3). An entry with file
// states reaches pass 1 only when CheckFiles found them unchanged.
func repeatOf(e round.DedupeEntry) *round.Repeat {
	return &round.Repeat{Round: e.Round, CallID: e.CallID, Checked: len(e.Files) > 0}
}

// refusedHint is the P1.2 refusal of a tool called directly that is not
// loaded: fetch its schema, then call it through run_tool; or, when the
// model already has its schema (U4), only the second part.
func refusedHint(name string, fetched bool) string {
	if fetched {
		return "tool " + name + " is not loaded, so it did not run. Its schema was already fetched in this run: call it through run_tool(name=\"" +
			name + "\", args={...}), not directly and without fetching it again."
	}
	return "tool " + name + " is not loaded, so it did not run. Fetch its schema with find_tools(query=\"select:" + name +
		"\"), then call run_tool(name=\"" + name + "\", args={...})."
}
