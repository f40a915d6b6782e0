package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// eventsOf are the round's events of one type.
func eventsOf(res round.Result, typ string) []round.Event {
	var out []round.Event
	for _, e := range res.Events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// updateResult is what became of a confirm update, once the round ran it.
type updateResult struct {
	rejected error
	accepted bool
}

// update sends the confirm update; its result is known after the round ran.
func (h *harness) update(id string, c round.Confirm) *updateResult {
	u := &updateResult{}
	h.env.UpdateWorkflow(names.UpdateConfirm, id, &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { u.rejected = err },
		OnAccept:   func() { u.accepted = true },
		OnComplete: func(any, error) {},
	}, c)
	return u
}

func errType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

func TestEveryWaitingCallHasAnApprovalID(t *testing.T) {
	h := newHarness(t, 3)
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.confirm(round.Confirm{CallID: "e1", Approve: true, By: "ann@host", Via: "cli"})
	})
	res := h.run(t, input(call("e1", "edit_file", `{ "path":"a", "new_text":"x" }`), call("c1", "calculate", `{"expression":"1"}`)))
	require.Len(t, seen, 1)
	p := seen[0]
	require.Equal(t, approval.ID("default-test-workflow-id", "e1", "edit_file", `{"new_text":"x","path":"a"}`), p.ApprovalID, "T1")
	require.NotEmpty(t, p.Reasons)
	require.False(t, p.Since.IsZero())
	require.Equal(t, workflows.DefaultConfirmTimeout, p.Deadline.Sub(p.Since))

	a := res.Results[0].Approval
	require.Equal(t, round.DecisionApproved, a.Decision, "T2")
	require.Equal(t, "ann@host", a.By)
	require.Equal(t, "cli", a.Via)
	require.False(t, a.Verified)
	require.False(t, a.At.IsZero())
	require.Equal(t, round.DecisionNotNeeded, res.Results[1].Approval.Decision, "T2: every result has a record")
	results := eventsOf(res, round.EventToolResult)
	require.Equal(t, a, results[0].Approval, "T2: the same record in the result event")
}

func TestStaleApprovalIDIsIgnoredAndRecorded(t *testing.T) {
	h := newHarness(t, 3)
	var still []round.Pending
	h.at(time.Second, func() {
		h.env.SignalWorkflow(names.SignalConfirm, round.Confirm{CallID: "e1", Approve: true, ApprovalID: "feedface"})
		h.env.SignalWorkflow(names.SignalConfirm, round.Confirm{CallID: "e1", Approve: true}) // no id at all
	})
	h.at(1500*time.Millisecond, func() {
		h.confirm(round.Confirm{CallID: "e1", Approve: false, Reason: "no", By: "mallory", Verified: true})
	})
	h.at(1400*time.Millisecond, func() { still = h.pending(t) })
	res := h.run(t, input(call("e1", "run_command", `{"command":"touch X"}`)))
	require.Len(t, still, 1, "T1: the call keeps waiting after a stale decision")
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Equal(t, 0, h.rec.RunsOf("e1"))
	ignored := eventsOf(res, round.EventSignalIgnored)
	require.Len(t, ignored, 2)
	for _, e := range ignored {
		require.Equal(t, "e1", e.CallID)
		require.Contains(t, e.Detail, "stale approval_id")
	}
	require.Equal(t, round.DecisionDenied, res.Results[0].Approval.Decision)
	require.Equal(t, "signal", res.Results[0].Approval.Via, "the way it came, when the decision does not say")
	require.False(t, res.Results[0].Approval.Verified, "a signal never vouches for who decided")
}

func TestConfirmUpdateValidatorRejectsBeforeAnythingIsRecorded(t *testing.T) {
	h := newHarness(t, 3)
	var rejected []*updateResult
	var ok *updateResult
	var still []round.Pending
	h.at(time.Second, func() {
		id := h.approvalID("e1")
		rejected = append(rejected,
			h.update("u1", round.Confirm{CallID: "nosuch", Approve: true, ApprovalID: id}),
			h.update("u2", round.Confirm{CallID: "c1", Approve: true}),
			h.update("u3", round.Confirm{CallID: "e1", Approve: true, ApprovalID: "stale"}),
			h.update("u4", round.Confirm{CallID: "e1", Approve: true, ApprovalID: id, Args: []byte(`{"command":""}`)}),
			h.update("u5", round.Confirm{CallID: "e1", Approve: true, ApprovalID: id, Args: []byte(`[1]`)}),
		)
	})
	h.at(2*time.Second, func() {
		still = h.pending(t)
		ok = h.update("u6", round.Confirm{CallID: "e1", Approve: true, ApprovalID: h.approvalID("e1")})
	})
	res := h.run(t, input(call("e1", "run_command", `{"command":"make"}`), call("c1", "calculate", `{"expression":"1"}`)))
	var types []string
	for _, u := range rejected {
		require.False(t, u.accepted)
		types = append(types, errType(u.rejected))
	}
	require.Equal(t, []string{string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeStaleApproval), string(round.CodeInvalidArgs), string(round.CodeInvalidArgs)}, types, "T1")
	require.Contains(t, rejected[3].rejected.Error(), "command")
	require.Len(t, still, 1, "the call still waits after the rejected updates")
	require.Empty(t, eventsOf(res, round.EventSignalIgnored), "a rejected update leaves no trace in the round")
	require.Len(t, eventsOf(res, round.EventConfirmationAnswered), 1)
	require.NoError(t, ok.rejected)
	require.True(t, ok.accepted)
	require.Equal(t, []round.Status{"ok", "ok"}, statuses(res))
	require.Equal(t, "update", res.Results[0].Approval.Via)
}

// TestConfirmUpdateRefusesAnInvalidPattern: a pattern that cannot be a rule
// for the call's tool is refused before anything is recorded (T4), instead
// of the call being approved with the rule silently dropped.
func TestConfirmUpdateRefusesAnInvalidPattern(t *testing.T) {
	h := newHarness(t, 3)
	var bad []*updateResult
	var still []round.Pending
	var ok *updateResult
	h.at(time.Second, func() {
		id := h.approvalID("e1")
		bad = append(bad,
			h.update("u1", round.Confirm{CallID: "e1", Approve: true, ApprovalID: id, Remember: true, Pattern: "bash"}),
			h.update("u2", round.Confirm{CallID: "e1", Approve: true, ApprovalID: id, Remember: true, Pattern: "*"}),
		)
	})
	h.at(2*time.Second, func() {
		still = h.pending(t)
		ok = h.update("u3", round.Confirm{CallID: "e1", Approve: true, ApprovalID: h.approvalID("e1"), Remember: true, Pattern: "make *"})
	})
	res := h.run(t, input(call("e1", "run_command", `{"command":"make"}`)))
	for _, u := range bad {
		require.False(t, u.accepted)
		require.Equal(t, string(round.CodeInvalidPattern), errType(u.rejected), "%v", u.rejected)
	}
	require.Contains(t, bad[0].rejected.Error(), `invalid pattern "bash" for run_command`)
	require.Contains(t, bad[0].rejected.Error(), "must name a script file")
	require.Len(t, still, 1, "the call still waits after the refused patterns")
	require.Empty(t, eventsOf(res, round.EventSignalIgnored), "a rejected update leaves no trace in the round")
	require.NoError(t, ok.rejected)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Len(t, res.State.Allow, 1)
	require.Equal(t, "make *", res.State.Allow[0].Pattern)
}

func TestEditedArgumentsAreValidatedAndRun(t *testing.T) {
	h := newHarness(t, 3)
	var u *updateResult
	h.at(time.Second, func() {
		u = h.update("u1", round.Confirm{CallID: "e1", Approve: true, ApprovalID: h.approvalID("e1"), Remember: true,
			Args: []byte(`{"command":"git status"}`), By: "bob"})
	})
	res := h.run(t, input(call("e1", "run_command", `{"command":"git status; touch X"}`)))
	require.NoError(t, u.rejected)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, "ran: git status", res.Results[0].Content, "T1: the edited arguments are what runs")
	a := res.Results[0].Approval
	require.True(t, a.Edited)
	require.Equal(t, `{"command":"git status; touch X"}`, a.OriginalArgs)
	require.Equal(t, "bob", a.By)
	require.Len(t, res.State.Allow, 1)
	require.Equal(t, `{"command":"git status"}`, res.State.Allow[0].Args, "T1: remember without a pattern binds to the accepted arguments")
	require.Contains(t, res.State.Dedupe, tools.DedupeKey("run_command", []byte(`{"command":"git status"}`)), "T1: the dedupe key is the edited call's")
}

func TestInvalidArgumentsNeverAsk(t *testing.T) {
	h := newHarness(t, 3)
	var seen []round.Pending
	h.at(time.Second, func() { seen = h.pending(t) })
	res := h.run(t, input(call("e1", "edit_file", `{"path":"a"}`), call("c1", "calculate", `{"expression":"1"}`)))
	require.Empty(t, seen, "P1.7 before P1.6: nobody is asked about a call that cannot run")
	require.Equal(t, round.StatusInvalid, res.Results[0].Status)
	require.Contains(t, res.Results[0].Content, "new_text")
	require.Empty(t, eventsOf(res, round.EventConfirmationRequested))
}

func TestExtendMovesTheDeadlineAndCapsAtSevenDays(t *testing.T) {
	h := newHarness(t, 3)
	in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`), call("e2", "edit_file", `{"path":"b","new_text":"y"}`))
	in.ConfirmTimeoutSeconds = 60
	var after []round.Pending
	h.at(30*time.Second, func() {
		h.env.SignalWorkflow(names.SignalExtend, round.Extend{CallID: "e1", Seconds: 120})
		h.env.SignalWorkflow(names.SignalExtend, round.Extend{CallID: "e2", Seconds: 30 * 24 * 3600})
		h.env.SignalWorkflow(names.SignalExtend, round.Extend{CallID: "nosuch", Seconds: 10})
		h.env.SignalWorkflow(names.SignalExtend, round.Extend{CallID: "e1", Seconds: -5})
	})
	h.at(31*time.Second, func() { after = h.pending(t) })
	res := h.run(t, in)
	require.Equal(t, []round.Status{"expired", "expired"}, statuses(res))
	require.Equal(t, 180*time.Second, waited(t, res, "/e1/answered"), "T3: 60s + 120s")
	require.Equal(t, 7*24*time.Hour, waited(t, res, "/e2/answered"), "T3: at most 7 days after the wait began")
	require.Equal(t, 180*time.Second, after[0].Deadline.Sub(after[0].Since), "pending shows the new deadline")
	require.Len(t, eventsOf(res, round.EventSignalIgnored), 2, "an unknown call and a negative extension are recorded")
}

// TestExtendUpdateAnswersWhatItAdded: the extend update answers the seconds
// it added and the new deadline, which the 7-day cap may make less than
// what was asked, down to nothing (T3).
func TestExtendUpdateAnswersWhatItAdded(t *testing.T) {
	h := newHarness(t, 3)
	in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`))
	in.ConfirmTimeoutSeconds = 60
	var got []round.Extended
	var since time.Time
	extend := func(name string, secs int64) {
		h.env.UpdateWorkflow(names.UpdateExtend, name, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("%s refused: %v", name, err) },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				e, ok := v.(round.Extended)
				require.True(t, ok, "%T", v)
				got = append(got, e)
			},
		}, round.Extend{CallID: "e1", Seconds: secs})
	}
	h.at(30*time.Second, func() {
		since = h.pending(t)[0].Since
		extend("some", 120)
		extend("past the cap", 30*24*3600)
		extend("at the cap", 600)
	})
	h.run(t, in)
	require.Len(t, got, 3)
	require.Equal(t, round.Extended{CallID: "e1", AddedSeconds: 120, Deadline: since.Add(180 * time.Second)}, got[0])
	require.Equal(t, round.Extended{CallID: "e1", AddedSeconds: 7*24*3600 - 180, Deadline: since.Add(7 * 24 * time.Hour)}, got[1], "T3: what the cap let in")
	require.Equal(t, round.Extended{CallID: "e1", AddedSeconds: 0, Deadline: since.Add(7 * 24 * time.Hour)}, got[2])
}

func TestRemindersAtHalfAndNinetyPercentOfTheWait(t *testing.T) {
	h := newHarness(t, 3)
	in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`))
	in.ConfirmTimeoutSeconds = 100
	res := h.run(t, in)
	rem := eventsOf(res, round.EventApprovalReminder)
	require.Len(t, rem, 2)
	start := res.Events[0].Time
	require.Equal(t, 50*time.Second, rem[0].Time.Sub(start))
	require.Equal(t, 90*time.Second, rem[1].Time.Sub(start))

	// An extension at 60s (after the first reminder) makes the wait 200s:
	// the next reminders come at 100s and 180s.
	h2 := newHarness(t, 3)
	h2.at(60*time.Second, func() { h2.env.SignalWorkflow(names.SignalExtend, round.Extend{CallID: "e1", Seconds: 100}) })
	res2 := h2.run(t, in)
	var at []time.Duration
	for _, e := range eventsOf(res2, round.EventApprovalReminder) {
		at = append(at, e.Time.Sub(res2.Events[0].Time))
	}
	require.Equal(t, []time.Duration{50 * time.Second, 100 * time.Second, 180 * time.Second}, at, "T3: reminders are rescheduled")
	require.Equal(t, 200*time.Second, waited(t, res2, "/e1/answered"))
}

// signed is a rule signed as the test workers sign.
func signed(session, run string, r approval.Rule) round.AllowRule {
	return round.AllowRule(approval.Sign(ruleKey, session, run, r))
}

func TestOnlyRulesSignedForThisRunApply(t *testing.T) {
	git := approval.Rule{Tool: "run_command", Pattern: "git *"}
	forged := round.AllowRule{Tool: "run_command", Pattern: "git *", MAC: "AAAA"}
	for _, tt := range []struct {
		name string
		rule round.AllowRule
		asks bool
	}{
		{"signed for this run", signed("s", "r", git), false},
		{"unsigned, as before T4", round.AllowRule{Tool: "run_command", Pattern: "git *"}, true},
		{"forged MAC", forged, true},
		{"from another run", signed("s", "other", git), true},
		{"from another session", signed("other", "r", git), true},
		{"changed after signing", func() round.AllowRule { r := signed("s", "r", git); r.Pattern = "*"; return r }(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 3)
			in := input(call("g1", "run_command", `{"command":"git status"}`))
			in.ConfirmTimeoutSeconds = 5
			in.State.Allow = []round.AllowRule{tt.rule}
			res := h.run(t, in)
			if tt.asks {
				require.Equal(t, round.StatusExpired, res.Results[0].Status, "T4: the rule is ignored")
				return
			}
			require.Equal(t, round.StatusOK, res.Results[0].Status)
			require.Equal(t, round.DecisionRule, res.Results[0].Approval.Decision)
		})
	}
}

func TestPatternRuleNeverApprovesMoreThanItSays(t *testing.T) {
	h := newHarness(t, 3)
	in := input(
		call("a", "run_command", `{"command":"git status; touch X"}`),
		call("b", "run_command", `{"command":"git $(touch X)"}`),
		call("c", "run_command", `{"command":"git log | sh"}`),
		call("d", "run_command", `{"command":"git log"}`),
	)
	in.ConfirmTimeoutSeconds = 5
	in.State.Allow = []round.AllowRule{signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "git *"})}
	res := h.run(t, in)
	require.Equal(t, []round.Status{"expired", "expired", "expired", "ok"}, statuses(res), "T4")
}

func TestAllowTurnDoesNotApproveASensitiveRead(t *testing.T) {
	h := newHarness(t, 3)
	h.rec.Files[".env"] = "KEY=1"
	in := input(
		call("e1", "edit_file", `{"path":"a","new_text":"x"}`),
		call("e2", "run_command", `{"command":"make"}`),
		call("s1", "read_files", `{"paths":[".env"]}`),
	)
	in.ConfirmTimeoutSeconds = 60
	h.at(time.Second, func() { h.confirm(round.Confirm{CallID: "e1", Approve: true, AllowTurn: true, By: "ann"}) })
	res := h.run(t, in)
	require.Equal(t, []round.Status{"ok", "ok", "expired"}, statuses(res), "C4: allow_turn never approves a sensitive read")
	require.Equal(t, round.DecisionApproved, res.Results[1].Approval.Decision)
	require.Equal(t, "ann", res.Results[1].Approval.By)
	require.Contains(t, res.Results[1].Approval.Reason, "allow_turn")
}

func TestSafeHTTPMethodsDoNotAskOthersDo(t *testing.T) {
	h := newHarness(t, 3)
	in := input(
		call("g", "http_request", `{"url":"http://x/","method":"get"}`),
		call("h", "http_request", `{"url":"http://x/","method":"HEAD"}`),
		call("p", "http_request", `{"url":"http://x/","method":"POST"}`),
		call("o", "http_request", `{"url":"http://x/","method":"GET","headers":{"X-HTTP-Method-Override":"DELETE"}}`),
		call("s", "http_request", `{"url":"http://x/?k={{secret:TOKEN}}","method":"GET"}`),
	)
	in.ConfirmTimeoutSeconds = 5
	res := h.run(t, in)
	require.Equal(t, []round.Status{"ok", "ok", "expired", "expired", "expired"}, statuses(res), "T5")
}

func TestMCPToolsAskUnlessTheirServerIsTrusted(t *testing.T) {
	h := newHarness(t, 3)
	noop := func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("done"), nil }
	h.reg.MustRegister(
		tools.Definition{Name: "mcp_fs_rm", Description: "Says it is read-only.", SideEffect: tools.ReadOnly, Source: tools.SourceMCP, Handler: noop},
		tools.Definition{Name: "mcp_docs_get", Description: "Trusted server.", SideEffect: tools.ReadOnly, Source: tools.SourceMCP, TrustReadOnlyHints: true, Handler: noop},
	)
	in := input(call("m1", "mcp_fs_rm", `{}`), call("m2", "mcp_docs_get", `{}`))
	in.State.Fetched = append(in.State.Fetched, "mcp_docs_get", "mcp_fs_rm")
	in.ConfirmTimeoutSeconds = 5
	res := h.run(t, in)
	require.Equal(t, []round.Status{"expired", "ok"}, statuses(res), "T5: what a server declares never skips approval on its own")
}

func TestWorkerThatDeniesAutoApproveIgnoresIt(t *testing.T) {
	h := newHarness(t, 3)
	h.wf.Catalog.(*workflows.RegistryCatalog).Options.DenyAutoApprove = true
	in := auto(input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`)))
	in.ConfirmTimeoutSeconds = 5
	res := h.run(t, in)
	require.Equal(t, round.StatusExpired, res.Results[0].Status, "T5: AUTO_APPROVE=deny")

	h2 := newHarness(t, 3)
	res2 := h2.run(t, in)
	require.Equal(t, round.StatusOK, res2.Results[0].Status)
	require.Equal(t, round.DecisionAuto, res2.Results[0].Approval.Decision)
}

func TestRulesAreIgnoredWithoutARuleKey(t *testing.T) {
	h := newHarness(t, 3)
	acts := h.acts
	acts.RuleKey = nil
	in := input(call("g1", "run_command", `{"command":"git status"}`))
	in.ConfirmTimeoutSeconds = 5
	in.State.Allow = []round.AllowRule{signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "git *"})}
	res := h.run(t, in)
	require.Equal(t, round.StatusExpired, res.Results[0].Status)
}

// TestRuleApprovedCallsTellTheTool: the tool hears that a rule, not a
// person, approved a call (round.ExecuteInput.RuleApproved), so that
// commands run git locked down (T4); calls approved otherwise do not.
func TestRuleApprovedCallsTellTheTool(t *testing.T) {
	h := newHarness(t, 3)
	seen := map[string]bool{}
	h.env.OnActivity(wire.ActivityExecuteTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in wire.ExecuteInput) (wire.ExecuteOutput, error) {
			seen[in.CallID] = in.RuleApproved
			return wire.ExecuteOutput{Content: "ok"}, nil
		})
	in := auto(input(call("g1", "run_command", `{"command":"git status"}`), call("m1", "run_command", `{"command":"make"}`)))
	in.State.Allow = []round.AllowRule{signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "git *"})}
	res := h.run(t, in)
	require.Equal(t, round.DecisionRule, res.Results[0].Approval.Decision)
	require.Equal(t, round.DecisionAuto, res.Results[1].Approval.Decision)
	require.Equal(t, map[string]bool{"g1": true, "m1": false}, seen)
}

// TestRepeatedDecisionIsAlreadyDecided: a confirm update that repeats the
// decision a call got (same approval_id, approve or deny as it was) is
// refused as already_decided, so a client's retry knows it did no harm; a
// different decision, a stale approval_id or other edited arguments for
// that call stay not_waiting, and none of them leaves a trace.
func TestRepeatedDecisionIsAlreadyDecided(t *testing.T) {
	h := newHarness(t, 3)
	var e1, d1, x1 string
	var repeats, others []*updateResult
	h.at(time.Second, func() {
		e1, d1, x1 = h.approvalID("e1"), h.approvalID("d1"), h.approvalID("x1")
		h.confirm(round.Confirm{CallID: "e1", Approve: true, ApprovalID: e1})
		h.confirm(round.Confirm{CallID: "d1", Approve: false, ApprovalID: d1, Reason: "no"})
		h.confirm(round.Confirm{CallID: "x1", Approve: true, ApprovalID: x1, Args: []byte(`{"command":"make test"}`)})
	})
	h.at(2*time.Second, func() {
		repeats = append(repeats,
			h.update("r1", round.Confirm{CallID: "e1", Approve: true, ApprovalID: e1}),
			h.update("r2", round.Confirm{CallID: "d1", Approve: false, ApprovalID: d1, Reason: "still no"}),
			h.update("r3", round.Confirm{CallID: "x1", Approve: true, ApprovalID: x1, Args: []byte(`{"command":"make test"}`)}),
		)
		others = append(others,
			h.update("o1", round.Confirm{CallID: "e1", Approve: false, ApprovalID: e1}),
			h.update("o2", round.Confirm{CallID: "d1", Approve: true, ApprovalID: d1}),
			h.update("o3", round.Confirm{CallID: "e1", Approve: true, ApprovalID: "stale"}),
			h.update("o4", round.Confirm{CallID: "e1", Approve: true}),
			h.update("o5", round.Confirm{CallID: "x1", Approve: true, ApprovalID: x1, Args: []byte(`{"command":"make lint"}`)}),
			h.update("o6", round.Confirm{CallID: "x1", Approve: true, ApprovalID: x1}),
			h.update("o7", round.Confirm{CallID: "c1", Approve: true}),
		)
	})
	h.at(3*time.Second, func() {
		h.confirm(round.Confirm{CallID: "w1", Approve: true, ApprovalID: h.approvalID("w1")})
	})
	res := h.run(t, input(
		call("e1", "run_command", `{"command":"make"}`),
		call("d1", "run_command", `{"command":"rm -r build"}`),
		call("x1", "run_command", `{"command":"make all"}`),
		call("w1", "run_command", `{"command":"make install"}`),
		call("c1", "calculate", `{"expression":"1"}`)))
	require.Len(t, repeats, 3)
	for _, u := range repeats {
		require.False(t, u.accepted)
		require.Equal(t, string(round.CodeAlreadyDecided), errType(u.rejected), "%v", u.rejected)
	}
	require.Contains(t, repeats[0].rejected.Error(), "already approved")
	require.Contains(t, repeats[1].rejected.Error(), "already denied")
	var types []string
	for _, u := range others {
		require.False(t, u.accepted)
		types = append(types, errType(u.rejected))
	}
	require.Equal(t, []string{string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeNotWaiting), string(round.CodeNotWaiting)}, types)
	require.Empty(t, eventsOf(res, round.EventSignalIgnored), "a rejected update leaves no trace in the round")
	require.Len(t, eventsOf(res, round.EventConfirmationAnswered), 4, "one answer per call, the first")
	require.Equal(t, round.DecisionDenied, res.Results[1].Approval.Decision)
	require.Equal(t, "no", res.Results[1].Approval.Reason, "the first decision stands")
}

// TestExtendUpdateRefusesACallThatDoesNotWait: the extend update (T3) is
// validated as confirm is: a call that does not wait, an unknown call and
// fewer than one second are refused before anything is recorded, and an
// accepted extension moves the deadline as the signal does.
func TestExtendUpdateRefusesACallThatDoesNotWait(t *testing.T) {
	h := newHarness(t, 3)
	in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`), call("c1", "calculate", `{"expression":"1"}`))
	in.ConfirmTimeoutSeconds = 60
	results := map[string]*updateResult{}
	h.at(30*time.Second, func() {
		for name, e := range map[string]round.Extend{
			"waits":   {CallID: "e1", Seconds: 120},
			"runs":    {CallID: "c1", Seconds: 120},
			"unknown": {CallID: "nosuch", Seconds: 120},
			"zero":    {CallID: "e1", Seconds: 0},
		} {
			u := &updateResult{}
			results[name] = u
			h.env.UpdateWorkflow(names.UpdateExtend, name, &testsuite.TestUpdateCallback{
				OnReject:   func(err error) { u.rejected = err },
				OnAccept:   func() { u.accepted = true },
				OnComplete: func(any, error) {},
			}, e)
		}
	})
	res := h.run(t, in)
	require.True(t, results["waits"].accepted, "%v", results["waits"].rejected)
	for _, name := range []string{"runs", "unknown"} {
		require.Equal(t, string(round.CodeNotWaiting), errType(results[name].rejected), name)
	}
	require.Equal(t, string(round.CodeBadRequest), errType(results["zero"].rejected))
	require.Equal(t, 180*time.Second, waited(t, res, "/e1/answered"), "60s + 120s")
	require.Empty(t, eventsOf(res, round.EventSignalIgnored), "a refused update records nothing")
}
