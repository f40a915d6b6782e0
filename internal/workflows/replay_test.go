package workflows_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// recorded is one history of testdata/ with the input it started with and
// the result it completed with.
type recorded struct {
	name    string
	path    string
	history *historypb.History
	input   round.Input
	result  round.Output
}

func loadHistories(t *testing.T) []recorded {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(historyDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no recorded histories; record them with: go test ./workflows -run TestRecordHistories -record")
	dc := converter.GetDefaultDataConverter()
	var out []recorded
	for _, p := range paths {
		h := testenv.ReadHistory(t, p)
		r := recorded{name: strings.TrimSuffix(filepath.Base(p), ".json"), path: p, history: h}
		events := h.GetEvents()
		require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, events[0].GetEventType(), p)
		require.NoError(t, dc.FromPayloads(events[0].GetWorkflowExecutionStartedEventAttributes().GetInput(), &r.input), p)
		last := events[len(events)-1]
		require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, last.GetEventType(), "%s: a recorded round completes", p)
		require.NoError(t, dc.FromPayloads(last.GetWorkflowExecutionCompletedEventAttributes().GetResult(), &r.result), p)
		out = append(out, r)
	}
	return out
}

// refusingCatalog fails the replay if the workflow asks it anything: the
// catalog snapshot is a side effect, read from history on replay, so a
// worker whose registry changed still replays old rounds the same way.
type refusingCatalog struct{ calls atomic.Int32 }

func (c *refusingCatalog) Snapshot(workflows.SnapshotRequest) workflows.Snapshot {
	c.calls.Add(1)
	return workflows.Snapshot{}
}

// replay replays one history with fn registered as the round workflow and
// returns the result it computed. A replay that issues other commands than
// the history holds fails with a nondeterminism error.
func replay(t *testing.T, h recorded, fn any) (round.Output, error) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: names.WorkflowName})
	wfID := h.input.WorkflowID()
	if err := r.ReplayWorkflowHistoryWithOptions(testenv.QuietLogger(), h.history, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: wfID},
	}); err != nil {
		return round.Output{}, err
	}
	results, ok := r.(interface{ GetWorkflowResult(string, any) error })
	require.True(t, ok, "the SDK's replayer no longer gives the replayed result")
	var res round.Output
	require.NoError(t, results.GetWorkflowResult(wfID, &res))
	return res, nil
}

// TestReplayRecordedHistories replays every recorded round with today's
// workflow code: it must issue the same commands and compute the same
// result, without asking the catalog anything.
func TestReplayRecordedHistories(t *testing.T) {
	for _, h := range loadHistories(t) {
		t.Run(h.name, func(t *testing.T) {
			cat := &refusingCatalog{}
			wf := &workflows.RoundWorkflow{Catalog: cat}
			res, err := replay(t, h, wf.Run)
			require.NoError(t, err)
			require.Equal(t, h.result, res, "replay computed another result than the recorded run")
			require.Zero(t, cat.calls.Load(), "replay asked the catalog; the snapshot must come from history")
		})
	}
}

// TestReplayFromJSONFile replays the files as they are, through the SDK's
// own loader, as `temporal workflow show --output json` files are replayed.
// Rounds with approvals bind approval ids to the workflow id, which the
// history's events do not hold: those replays need the original workflow id
// (ReplayWorkflowHistoryWithOptions), as a file of another id would approve
// nothing.
func TestReplayFromJSONFile(t *testing.T) {
	for _, h := range loadHistories(t) {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions((&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run, workflow.RegisterOptions{Name: names.WorkflowName})
		if !hasApprovals(h) {
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(testenv.QuietLogger(), h.path), h.name)
			continue
		}
		require.NoError(t, r.ReplayWorkflowHistoryWithOptions(testenv.QuietLogger(), h.history, worker.ReplayWorkflowHistoryOptions{
			OriginalExecution: workflow.Execution{ID: h.input.WorkflowID()},
		}), h.name)
	}
}

// hasApprovals reports whether a round ran with the approvals version.
func hasApprovals(h recorded) bool {
	for _, r := range h.result.Results {
		if r.Approval != nil {
			return true
		}
	}
	return false
}

// TestRecordedHistoriesCoverEveryPath guards the recordings themselves:
// between them they hold every status, every kind of signal, a confirm
// timeout, a timed-out side effect, retries, cancellation, a fan-out that
// reached its bound and a round that moved results out to fit its budget.
// A re-recording that lost a path fails here.
func TestRecordedHistoriesCoverEveryPath(t *testing.T) {
	statuses := map[round.Status]bool{}
	events := map[string]bool{}
	signals := map[string]int{}
	var details []string
	seen := map[enumspb.EventType]bool{}
	retried, markers, stored, storedState, checked := false, map[string]int{}, false, false, false
	changes := map[string]bool{}
	reconciled, ranAgain := false, false
	for _, h := range loadHistories(t) {
		for _, r := range h.result.Results {
			statuses[r.Status] = true
			checked = checked || (r.Repeat != nil && r.Repeat.Checked)
			retried = retried || r.Attempts >= 3
			stored = stored || r.ContentRef != ""
			reconciled = reconciled || (r.Status == round.StatusOK && r.Reconciled)
			ranAgain = ranAgain || (r.Status == round.StatusOK && !r.Reconciled && r.Attempts == 2 && r.OperationID != "")
		}
		for _, e := range h.result.State.Dedupe {
			storedState = storedState || e.ContentRef != ""
		}
		for _, e := range h.result.Events {
			events[e.Type] = true
			details = append(details, e.Detail)
		}
		for _, e := range h.history.GetEvents() {
			seen[e.GetEventType()] = true
			if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
				signals[a.GetSignalName()]++
			}
			if a := e.GetMarkerRecordedEventAttributes(); a != nil {
				markers[a.GetMarkerName()]++
				if p := a.GetDetails()["change-id"]; a.GetMarkerName() == "Version" && p != nil {
					var id string
					require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(p, &id))
					changes[id] = true
				}
			}
		}
	}
	all := []round.Status{round.StatusOK, round.StatusError, round.StatusDeduped, round.StatusRefused, round.StatusSchema,
		round.StatusUnknown, round.StatusSkipped, round.StatusInvalid, round.StatusUnknownOutcome, round.StatusCancelled, round.StatusExpired}
	for _, s := range all {
		require.True(t, statuses[s], "no recorded round ends a call with status %s", s)
	}
	for _, typ := range []string{round.EventSignalIgnored, round.EventConfirmationAnswered, round.EventConfirmationRequested, round.EventApprovalReminder} {
		require.True(t, events[typ], "no recorded round has a %s event", typ)
	}
	for _, want := range []string{"no call with this id", "malformed payload", "not waiting for confirmation", "not waiting for answer",
		"remembered run_command git *", "allowed for the rest of the round", "denied: not now",
		"stale approval_id", "approved with edited arguments", "expired: no decision", "approved by rule run_command git *"} {
		require.True(t, slices.ContainsFunc(details, func(d string) bool { return strings.Contains(d, want) }), "no event says %q", want)
	}
	require.GreaterOrEqual(t, signals[names.SignalConfirm], 5)
	require.GreaterOrEqual(t, signals[names.SignalAnswer], 2)
	require.GreaterOrEqual(t, signals[names.SignalToolResult], 2)
	require.GreaterOrEqual(t, signals[names.SignalExtend], 1)
	for _, typ := range []enumspb.EventType{
		enumspb.EVENT_TYPE_TIMER_FIRED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
		enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
	} {
		require.True(t, seen[typ], "no recorded history has %s", typ)
	}
	for _, m := range []string{"SideEffect", "LocalActivity"} {
		require.Positive(t, markers[m], "no %s marker", m)
	}
	require.Positive(t, markers["Version"], "no round recorded a version marker")
	require.True(t, checked, "no round served a repeat whose files were checked (U3)")
	for _, id := range []string{"operation-ids", "key-limits", "reconcile-lost-attempts", "reconcile-lost-again"} {
		require.True(t, changes[id], "no round recorded the version %q", id)
	}
	require.True(t, reconciled, "no lost attempt was reconciled as applied")
	require.True(t, ranAgain, "no lost attempt ran once more after its effect was proven absent")
	require.True(t, retried, "no call succeeded or failed after retries")
	require.True(t, stored, "no round moved results out of its result to fit ResultBudget")
	require.True(t, storedState, "no round moved dedupe entries out of its state to fit StateBudget")
}

// TestReplayCatchesChangedWorkflow replays the same histories with
// deliberately changed copies of the workflow registered under its name.
// Each change must break the replay of the histories it affects: by a
// nondeterminism error (other commands) or by another result.
func TestReplayCatchesChangedWorkflow(t *testing.T) {
	histories := loadHistories(t)
	wf := &workflows.RoundWorkflow{Catalog: &refusingCatalog{}}
	alter := func(change func(ctx workflow.Context, in *round.Input)) func(workflow.Context, round.Input) (round.Output, error) {
		return func(ctx workflow.Context, in round.Input) (round.Output, error) {
			change(ctx, &in)
			return wf.Run(ctx, in)
		}
	}
	tests := []struct {
		name string
		fn   func(workflow.Context, round.Input) (round.Output, error)
		// mustBreak lists histories that must fail; every must be true when
		// all of them must.
		mustBreak []string
		every     bool
	}{
		{name: "a timer before the round starts", every: true,
			fn: alter(func(ctx workflow.Context, _ *round.Input) { _ = workflow.Sleep(ctx, time.Millisecond) })},
		{name: "a bound of one instead of the recorded one", mustBreak: []string{"fanout"},
			fn: alter(func(_ workflow.Context, in *round.Input) { in.MaxConcurrent = 1 })},
		{name: "auto-approve forced on", mustBreak: []string{"signals", "allow_turn", "cancel_confirm", "confirm_timeout", "approvals", "signed_rules"},
			fn: alter(func(_ workflow.Context, in *round.Input) { in.AutoApprove = true })},
		{name: "the per-round confirm timeout ignored", mustBreak: []string{"confirm_timeout"},
			fn: alter(func(_ workflow.Context, in *round.Input) { in.ConfirmTimeoutSeconds = 0 })},
		{name: "dedupe forced on", mustBreak: []string{"dedupe_off"},
			fn: alter(func(_ workflow.Context, in *round.Input) { in.Dedupe = nil })},
		{name: "repeats served unchecked", mustBreak: []string{"repeats"},
			fn: alter(func(_ workflow.Context, in *round.Input) {
				for k, e := range in.State.Dedupe {
					e.Files = nil
					in.State.Dedupe[k] = e
				}
			})},
		{name: "pass 3 changes a result", mustBreak: []string{"pass1"},
			fn: func(ctx workflow.Context, in round.Input) (round.Output, error) {
				res, err := wf.Run(ctx, in)
				for i := range res.Results {
					if res.Results[i].Status == round.StatusRefused {
						res.Results[i].Content = "refused"
					}
				}
				return res, err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var broken []string
			for _, h := range histories {
				res, err := replay(t, h, tt.fn)
				switch {
				case err != nil:
					require.True(t, isNondeterminism(err), "%s: %v", h.name, err)
					broken = append(broken, h.name)
				case !resultsEqual(res, h.result):
					broken = append(broken, h.name)
				}
			}
			sort.Strings(broken)
			if tt.every {
				require.Len(t, broken, len(histories), "every history must break; broke: %v", broken)
				return
			}
			for _, name := range tt.mustBreak {
				require.Contains(t, broken, name, "the change went unnoticed by the %s history", name)
			}
		})
	}
}

func isNondeterminism(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "nondeterministic") || strings.Contains(msg, "TMPRL1100")
}

func resultsEqual(a, b round.Output) bool {
	ja, errA := converter.GetDefaultDataConverter().ToPayload(a)
	jb, errB := converter.GetDefaultDataConverter().ToPayload(b)
	return errA == nil && errB == nil && string(ja.GetData()) == string(jb.GetData())
}

// TestBaselineRecordsOneVersionMarker: a round started on this code records
// one version marker (the baseline) and one TemporalChangeVersion update for
// it, where it recorded one of each per change before; rounds recorded
// before the baseline still replay with their own markers (the replay test).
func TestBaselineRecordsOneVersionMarker(t *testing.T) {
	found := 0
	for _, h := range loadHistories(t) {
		if !strings.HasPrefix(h.name, "baseline_") {
			continue
		}
		found++
		var changes []string
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetDetails()["change-id"], &id))
				changes = append(changes, id)
			}
		}
		require.Equal(t, []string{"baseline-2026-11-30"}, changes, h.name)
	}
	require.Equal(t, 2, found, "the baseline recordings are missing")
}

// versionMarkers are the change ids of a recorded history's version markers.
func versionMarkers(t *testing.T, h recorded) []string {
	t.Helper()
	var changes []string
	for _, e := range h.history.GetEvents() {
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
			var id string
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetDetails()["change-id"], &id))
			changes = append(changes, id)
		}
	}
	return changes
}

// TestCallFinishedHistoryHasOneMarker: a round recorded with changeBaseline2
// (testdata/call_finished.json) took the call_finished change (U7) with the
// baseline's one marker and replays with today's code.
func TestCallFinishedHistoryHasOneMarker(t *testing.T) {
	for _, h := range loadHistories(t) {
		if h.name != "call_finished" {
			continue
		}
		require.Equal(t, []string{"baseline-2026-12-01"}, versionMarkers(t, h))
		for _, e := range h.result.Events {
			require.NotEqual(t, round.EventCallFinished, e.Type, "call_finished is not in the result's events")
		}
		_, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		return
	}
	t.Fatal("testdata/call_finished.json is missing")
}

// TestBaseline3HistoryHasOneMarker: a round recorded with changeBaseline3
// (testdata/baseline3_live.json) took run-limits and live-decisions with the
// baseline's one marker and replays with today's code.
func TestBaseline3HistoryHasOneMarker(t *testing.T) {
	for _, h := range loadHistories(t) {
		if h.name != "baseline3_live" {
			continue
		}
		require.Equal(t, []string{"baseline-2026-12-02"}, versionMarkers(t, h))
		res, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		require.Equal(t, h.result, res)
		return
	}
	t.Fatal("testdata/baseline3_live.json is missing")
}

// TestBaseline4HistoryLeavesOutTheTurn: a round recorded with
// changeBaseline4 (testdata/lean_output.json) has the one marker, an output
// without the turn (H3), and replays with today's code to the same output;
// the result rebuilt from its input has the history an older output gives.
func TestBaseline4HistoryLeavesOutTheTurn(t *testing.T) {
	for _, h := range loadHistories(t) {
		if h.name != "lean_output" {
			continue
		}
		require.Equal(t, []string{"baseline-2026-12-02b"}, versionMarkers(t, h))
		require.True(t, h.result.TurnLeftOut())
		res, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		require.Equal(t, h.result, res)
		full := h.result
		full.Assistant = h.input.Assistant
		require.Equal(t, full.Result(), h.result.WithTurn(&h.input).Result())
		rebuilt := h.result.WithTurn(&h.input).Result()
		require.Equal(t, h.input.Assistant.ToolCalls, rebuilt.History[0].ToolCalls)
		for i, r := range h.result.Results {
			if r.OperationID != "" {
				require.True(t, strings.HasPrefix(r.OperationID, "/"), "the output's operation id leaves out the workflow id: %s", r.OperationID)
				require.Equal(t, h.result.WorkflowID+r.OperationID, rebuilt.Results[i].OperationID)
			}
		}
		for _, e := range rebuilt.Events {
			require.True(t, strings.HasPrefix(e.ID, h.result.WorkflowID+"/"), e.ID)
		}
		// V1: the memo names the build that started the round.
		var builds []string
		for _, e := range h.history.GetEvents() {
			if a := e.GetWorkflowPropertiesModifiedEventAttributes(); a != nil {
				if p, ok := a.GetUpsertedMemo().GetFields()[names.MemoBuildID]; ok {
					var b string
					require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &b))
					builds = append(builds, b)
				}
			}
		}
		require.Equal(t, []string{"recorder-build"}, builds)
		return
	}
	t.Fatal("testdata/lean_output.json is missing")
}

// TestHelpfulHintsHistory: testdata/helpful_hints.json, recorded with
// helpful-hints (in baseline-2026-12-01), replays to its result: invalid
// arguments without a next: hint, a tool's failure with the seed's.
func TestHelpfulHintsHistory(t *testing.T) {
	for _, h := range loadHistories(t) {
		if h.name != "helpful_hints" {
			continue
		}
		res, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		require.Equal(t, h.result, res)
		r := res.Result().Results
		require.NotContains(t, r[0].Content, "next:")
		require.Contains(t, r[1].Content, "\nnext: succeed another way, then record what worked with write_error(")
		return
	}
	t.Fatal("testdata/helpful_hints.json is missing")
}

// TestRuleLockdownHistory: testdata/rule_lockdown.json, recorded with
// rule-command-lockdown, holds its marker beside the baseline's, tells the
// tool that a rule approved the git command and no other call, and replays.
func TestRuleLockdownHistory(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	for _, h := range loadHistories(t) {
		if h.name != "rule_lockdown" {
			continue
		}
		var changes []string
		ruleApproved := map[string]bool{}
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
				changes = append(changes, id)
			}
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == wire.ActivityExecuteTool {
				var in wire.ExecuteInput
				require.NoError(t, dc.FromPayloads(a.GetInput(), &in))
				ruleApproved[in.CallID] = in.RuleApproved
			}
		}
		require.Equal(t, []string{"baseline-2026-12-01", "rule-command-lockdown"}, changes)
		require.Equal(t, map[string]bool{"g1": true, "c1": false}, ruleApproved, "the rule-approved call is told so, and no other")
		_, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		return
	}
	t.Fatal("testdata/rule_lockdown.json is missing")
}

// TestErrorCodeHistory: the round recorded with error-code holds its
// marker, once, and the call's error_code (W3); a round whose failures have
// no code pays no marker (every other recording). Its replay is in
// TestReplayRecordedHistories.
func TestErrorCodeHistory(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	found := false
	for _, h := range loadHistories(t) {
		n := 0
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
				if id == "error-code" {
					n++
				}
			}
		}
		if h.name == "user_tools" { // its u3 is a user tool's tool_error (Y1a)
			require.Equal(t, 1, n, "user_tools: a coded failure asks for error-code once")
			require.Equal(t, "tool_error", h.result.Results[2].ErrorCode)
			continue
		}
		if h.name != "error_code" {
			require.Zero(t, n, "%s: a round without a coded failure asked for error-code", h.name)
			continue
		}
		found = true
		require.Equal(t, 1, n)
		require.Equal(t, tools.CodeWorkspaceFull, h.result.Results[0].ErrorCode)
		require.Empty(t, h.result.Results[1].ErrorCode)
	}
	require.True(t, found, "testdata/error_code.json is missing")
}

// TestRunLimitsHistories: the rounds recorded with run-limits (B1, B2)
// hold its marker and what it did: calls past max_calls waited as kind
// limit and one approval grew the limit once; a rule remembered with
// up_to 1 approved one call and the next asked. Their replay is in
// TestReplayRecordedHistories.
func TestRunLimitsHistories(t *testing.T) {
	byName := map[string]recorded{}
	for _, h := range loadHistories(t) {
		byName[h.name] = h
	}
	dc := converter.GetDefaultDataConverter()
	for _, name := range []string{"run_limits", "counted_rules"} {
		h, ok := byName[name]
		require.True(t, ok, "testdata/%s.json is missing", name)
		var changes []string
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
				changes = append(changes, id)
			}
		}
		require.Contains(t, changes, "run-limits", name)
	}

	res := byName["run_limits"].result.Result()
	u := res.State.Usage
	require.Equal(t, int64(3), u.Calls, "one call before, c1 and g1 in the round")
	require.Equal(t, map[string]int64{round.LimitCalls: 2}, u.Grown)
	require.Equal(t, []string{round.LimitCalls}, res.Results[1].Approval.Limits)
	require.Equal(t, round.StatusSkipped, res.Results[2].Status)
	require.Empty(t, res.State.Allow, "remember on a call past a limit is refused")

	res = byName["counted_rules"].result.Result()
	require.Equal(t, round.DecisionRule, res.Results[1].Approval.Decision)
	require.Equal(t, int64(1), res.Results[1].Approval.Uses)
	require.Equal(t, int64(1), res.Results[1].Approval.UpTo)
	require.Equal(t, round.DecisionDenied, res.Results[2].Approval.Decision, "the rule's one call was used: g2 asked")
	require.Equal(t, int64(1), res.State.Allow[0].UpTo)
}

// TestSignedUsageHistories: the rounds recorded on a worker with
// WORKER_LIMITS hold the signed-usage marker and what it did (B1): usage
// that verifies lets the round run and the usage it hands on is signed
// anew; usage without a MAC made every call wait as kind limit, one
// denied and one approved. Their replay is in TestReplayRecordedHistories.
func TestSignedUsageHistories(t *testing.T) {
	byName := map[string]recorded{}
	for _, h := range loadHistories(t) {
		byName[h.name] = h
	}
	for _, name := range []string{"signed_usage", "unsigned_usage"} {
		h, ok := byName[name]
		require.True(t, ok, "testdata/%s.json is missing", name)
		require.Contains(t, versionMarkers(t, h), "signed-usage", name)
	}

	res := byName["signed_usage"].result.Result()
	for _, r := range res.Results {
		require.Equal(t, round.DecisionNotNeeded, r.Approval.Decision, "verified usage: nobody was asked for %s", r.CallID)
		require.Empty(t, r.Approval.Limits)
	}
	require.Equal(t, int64(3), res.State.Usage.Calls)
	require.NotEmpty(t, res.State.Usage.MAC, "the usage handed on is signed")

	res = byName["unsigned_usage"].result.Result()
	for _, r := range res.Results {
		require.NotNil(t, r.Approval, "call %s asked", r.CallID)
		require.Equal(t, []string{round.LimitUnverified}, r.Approval.Limits, r.CallID)
	}
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Equal(t, round.StatusOK, res.Results[1].Status)
	require.NotEmpty(t, res.State.Usage.MAC, "the round signs what it hands on, verified or not")
}

// TestBoundUsageHistories: the rounds recorded with T15 hold its markers
// and what they did: round 2 took the usage round 1 signed for its round,
// whose count of git * (up_to 2) let g1 run and made g2 ask, and signed
// the usage it handed on for round 2; two subagents of a run with
// max_calls 20, beside a calculate call, got floor((20-3)/2) calls each.
// Their replay is in TestReplayRecordedHistories.
func TestBoundUsageHistories(t *testing.T) {
	byName := map[string]recorded{}
	for _, h := range loadHistories(t) {
		byName[h.name] = h
	}
	h, ok := byName["bound_usage"]
	require.True(t, ok, "testdata/bound_usage.json is missing")
	require.Contains(t, versionMarkers(t, h), "round-bound-usage")
	res := h.result.Result()
	require.Equal(t, round.DecisionRule, res.Results[0].Approval.Decision)
	require.Equal(t, int64(2), res.Results[0].Approval.Uses, "round 1's count carried over")
	require.Equal(t, round.DecisionDenied, res.Results[1].Approval.Decision, "the rule's two calls were used: g2 asked")
	require.Equal(t, 2, res.State.Usage.Round)
	require.NotEmpty(t, res.State.Usage.MAC)

	h, ok = byName["floor_shares"]
	require.True(t, ok, "testdata/floor_shares.json is missing")
	require.Contains(t, versionMarkers(t, h), "floor-shares")
	dc := converter.GetDefaultDataConverter()
	children := 0
	for _, e := range h.history.GetEvents() {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetWorkflowType().GetName() == names.AgentWorkflowName {
			var in round.AgentInput
			require.NoError(t, dc.FromPayloads(a.GetInput(), &in))
			require.Equal(t, int64(8), in.Limits.MaxCalls, "floor((20-3)/2)")
			children++
		}
	}
	require.Equal(t, 2, children)
}

// TestSubagentsHistory: the round recorded with subagents holds its
// marker, once, and started each subagent as a child agent run whose id
// derives from the call's operation id, with a share of the round's
// limit (G1); a round without a subagents call pays no marker. Its replay
// is in TestReplayRecordedHistories.
func TestSubagentsHistory(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	found := false
	for _, h := range loadHistories(t) {
		markers := 0
		var children []round.AgentInput
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
				if id == "subagents" {
					markers++
				}
			}
			if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetWorkflowType().GetName() == names.AgentWorkflowName {
				var in round.AgentInput
				require.NoError(t, dc.FromPayloads(a.GetInput(), &in))
				require.Equal(t, names.AgentWorkflowID(in.SessionID, in.RunID), a.GetWorkflowId())
				children = append(children, in)
			}
		}
		if h.name == "floor_shares" { // TestBoundUsageHistories
			continue
		}
		if h.name == "kinds" { // TestKindsHistory
			continue
		}
		if h.name != "subagents" {
			require.Zero(t, markers, "%s: a round without a subagents call asked for subagents", h.name)
			continue
		}
		found = true
		require.Equal(t, 1, markers)
		require.Len(t, children, 2)
		var want, got []string
		for _, r := range h.result.Results[:2] {
			require.Equal(t, round.StatusOK, r.Status)
			require.Equal(t, "answered", r.Content)
			want = append(want, names.SubagentRunID(h.result.WorkflowID+r.OperationID)) // the lean output leaves the workflow id out
		}
		for _, c := range children {
			got = append(got, c.RunID)
			require.Equal(t, int64(10), c.Limits.MaxCalls, "half of the 20 calls left")
			require.Subset(t, c.Exclude, round.RecursiveTools)
			if c.Task == "say hello" {
				require.Contains(t, c.Exclude, "run_command")
			}
		}
		require.ElementsMatch(t, want, got, "each child's id derives from its call's operation id")
		require.Equal(t, int64(3), h.result.State.Usage.Calls, "two subagents and calculate; the children made no call")
	}
	require.True(t, found, "testdata/subagents.json is missing")
}

// TestKindsHistory: the round recorded after ToolInfo.Kind names each
// tool's kind in its snapshot, while subagents.json and chatbots.json,
// recorded before, name none; all replay (TestReplayRecordedHistories),
// the older ones through ToolInfo.pastKind.
func TestKindsHistory(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range loadHistories(t) {
		if h.name != "kinds" && h.name != "subagents" && h.name != "chatbots" {
			continue
		}
		seen[h.name] = true
		snap := recordedSnapshot(t, h)
		if h.name != "kinds" {
			for name, raw := range snap {
				require.NotContains(t, string(raw), `"kind"`, "%s: %s was recorded before ToolInfo.Kind", h.name, name)
			}
			continue
		}
		want := map[string]string{"subagents": "child_run", "send_to_chatbot": "chatbot", "calculate": "activity"}
		require.Len(t, snap, len(want))
		for name, kind := range want {
			var ti map[string]any
			require.NoError(t, json.Unmarshal(snap[name], &ti))
			require.Equal(t, kind, ti["kind"], name)
		}
		for _, r := range h.result.Results {
			require.Equal(t, round.StatusOK, r.Status, r.CallID)
		}
	}
	require.Equal(t, map[string]bool{"kinds": true, "subagents": true, "chatbots": true}, seen, "a recorded history is missing")
}

// TestFailedAttemptsHistory: the round recorded after changeFailedAttempts
// reports each attempt of its calls whose attempts all failed, in passing
// (the attempt in the failure's details) and by timeout (Temporal stopped
// at the policy's maximum), and recorded the change's marker once;
// retries.json, recorded before, reports the one attempt it did.
func TestFailedAttemptsHistory(t *testing.T) {
	seen := 0
	for _, h := range loadHistories(t) {
		attempts := map[string]int{}
		for _, r := range h.result.Results {
			attempts[r.CallID] = r.Attempts
		}
		switch h.name {
		case "failed_attempts":
			require.Equal(t, map[string]int{"x1": 3, "x2": 3, "c1": 1}, attempts)
			require.Equal(t, 1, len(slices.DeleteFunc(versionMarkers(t, h), func(id string) bool { return id != "failed-attempts" })), "one marker for the round")
		case "retries":
			require.Equal(t, 1, attempts["l3"], "recorded before the change, as it ran")
		default:
			continue
		}
		seen++
	}
	require.Equal(t, 2, seen, "a recorded history is missing")
}

// recordedSnapshot is the tools of the round's catalog snapshot, the
// first side effect whose value has them, as recorded.
func recordedSnapshot(t *testing.T, h recorded) map[string]json.RawMessage {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	for _, e := range h.history.GetEvents() {
		a := e.GetMarkerRecordedEventAttributes()
		if a == nil || a.GetMarkerName() != "SideEffect" {
			continue
		}
		var v struct {
			Tools map[string]json.RawMessage `json:"tools"`
		}
		if dc.FromPayloads(a.GetDetails()["data"], &v) == nil && len(v.Tools) > 0 {
			return v.Tools
		}
	}
	t.Fatalf("%s: no snapshot in the history", h.name)
	return nil
}

// TestUserToolSecretsHistoryHoldsNoValue: the recorded round whose user
// tool call sent a stored secret (Y3, T9) asked for user-tool-secrets,
// holds the value only sealed, its result redacted, and replays.
func TestUserToolSecretsHistoryHoldsNoValue(t *testing.T) {
	for _, h := range loadHistories(t) {
		if h.name != "user_tool_secrets" {
			continue
		}
		require.Contains(t, versionMarkers(t, h), "user-tool-secrets")
		raw, err := os.ReadFile(h.path)
		require.NoError(t, err)
		decoded := decodedPayloads(t, raw)
		require.NotContains(t, decoded, recordedSecret)
		require.Contains(t, decoded, "sealed:v1:")
		require.Contains(t, h.result.Results[0].Content, `"id":"[secret:api]"`)
		_, err = replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		return
	}
	t.Fatal("testdata/user_tool_secrets.json is missing")
}

// decodedPayloads is every payload's data in a history file, decoded.
func decodedPayloads(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if d, ok := v["data"].(string); ok {
				if p, err := base64.StdEncoding.DecodeString(d); err == nil {
					b.Write(p)
					b.WriteByte('\n')
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
