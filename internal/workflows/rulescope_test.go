package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// TestRuleApprovedCallsRunWithTheRuleScope (T12): a call a pattern rule
// approved hears the rule's scope (round.ExecuteInput.RuleScope), a rule
// stored without one is write, and a call an exact rule approved hears
// none; each result's approval record names the scope.
func TestRuleApprovedCallsRunWithTheRuleScope(t *testing.T) {
	h := newHarness(t, 3)
	scopes := map[string]string{}
	h.env.OnActivity(wire.ActivityExecuteTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in wire.ExecuteInput) (wire.ExecuteOutput, error) {
			scopes[in.CallID] = in.RuleScope
			return wire.ExecuteOutput{Content: "ok"}, nil
		})
	in := input(
		call("g1", "run_command", `{"command":"git status"}`),
		call("m1", "run_command", `{"command":"make test"}`),
		call("l1", "run_command", `{"command":"ls"}`),
	)
	in.State.Allow = []round.AllowRule{
		signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "git *", Scope: approval.ScopeReadOnly}),
		signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "make *"}),
		signed("s", "r", approval.Rule{Tool: "run_command", Args: `{"command":"ls"}`}),
	}
	res := h.run(t, in)
	require.Equal(t, map[string]string{"g1": approval.ScopeReadOnly, "m1": approval.ScopeWrite, "l1": ""}, scopes)
	for _, r := range res.Results {
		require.Equal(t, round.DecisionRule, r.Approval.Decision, r.CallID)
		require.Equal(t, scopes[r.CallID], r.Approval.Scope, r.CallID)
	}
}

// TestRememberedRulesCarryAScope (T12): a rule remembered without a scope
// is read-only for a read-only form and write otherwise; one that names a
// scope keeps it, but a rule over a program that runs the workspace's
// code is write whatever it names; a scope that is not one, or without remember, is refused
// before anything is recorded.
func TestRememberedRulesCarryAScope(t *testing.T) {
	h := newHarness(t, 3)
	var bad []*updateResult
	h.at(time.Second, func() {
		id := h.approvalID("g1")
		bad = append(bad,
			h.update("u1", round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, Remember: true, Pattern: "git status *", Scope: "everything"}),
			h.update("u2", round.Confirm{CallID: "g1", Approve: true, ApprovalID: id, Scope: approval.ScopeWrite}),
		)
	})
	h.at(2*time.Second, func() {
		h.confirm(round.Confirm{CallID: "g1", Approve: true, ApprovalID: h.approvalID("g1"), Remember: true, Pattern: "git status *"})
		h.confirm(round.Confirm{CallID: "m1", Approve: true, ApprovalID: h.approvalID("m1"), Remember: true, Pattern: "make *", Scope: approval.ScopeReadOnly})
		h.confirm(round.Confirm{CallID: "w1", Approve: true, ApprovalID: h.approvalID("w1"), Remember: true, Pattern: "wc *", Scope: approval.ScopeWrite})
	})
	res := h.run(t, input(
		call("g1", "run_command", `{"command":"git status"}`),
		call("m1", "run_command", `{"command":"make test"}`),
		call("w1", "run_command", `{"command":"wc -l a.txt"}`),
	))
	for _, u := range bad {
		require.Error(t, u.rejected)
		require.Equal(t, string(round.CodeInvalidDecision), errType(u.rejected))
	}
	require.Contains(t, bad[0].rejected.Error(), `scope "everything"`)
	require.Contains(t, bad[1].rejected.Error(), "needs remember")
	got := map[string]string{}
	for _, r := range res.State.Allow {
		got[r.Pattern] = r.Scope
	}
	require.Equal(t, map[string]string{"git status *": approval.ScopeReadOnly, "make *": approval.ScopeWrite, "wc *": approval.ScopeWrite}, got)
}

// TestRuleScopeHistory: testdata/rule_scope.json, recorded with rule-scope,
// holds its marker, hands each call a pattern rule approved its rule's
// scope (a rule stored without one: write), names it in the result, keeps
// the scope of the rule remembered there (read-only, for wc), and replays.
func TestRuleScopeHistory(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	for _, h := range loadHistories(t) {
		if h.name != "rule_scope" {
			continue
		}
		changes := versionMarkers(t, h)
		scopes := map[string]string{}
		for _, e := range h.history.GetEvents() {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == wire.ActivityExecuteTool {
				var in wire.ExecuteInput
				require.NoError(t, dc.FromPayloads(a.GetInput(), &in))
				scopes[in.CallID] = in.RuleScope
			}
		}
		require.Contains(t, changes, "rule-scope")
		require.Equal(t, map[string]string{"g1": approval.ScopeReadOnly, "m1": approval.ScopeWrite, "w1": ""}, scopes)
		for _, r := range h.result.Results {
			require.Equal(t, scopes[r.CallID], r.Approval.Scope, r.CallID)
		}
		var remembered []string
		for _, r := range h.result.State.Allow {
			remembered = append(remembered, r.Pattern+" "+r.Scope)
		}
		require.Contains(t, remembered, "wc * read-only")
		_, err := replay(t, h, (&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run)
		require.NoError(t, err)
		return
	}
	t.Fatal("testdata/rule_scope.json is missing")
}

// TestNoRulesForCommandsWithoutASandbox (T12): on a worker without a
// sandbox no rule approves a command call, exact or pattern: it asks, with
// the reason that says so; rules for other tools still approve.
func TestNoRulesForCommandsWithoutASandbox(t *testing.T) {
	h := newHarness(t, 3)
	h.wf.Catalog.(*workflows.RegistryCatalog).Options.NoSandbox = true
	var pending []round.Pending
	h.at(time.Second, func() {
		pending = h.pending(t)
		h.confirm(round.Confirm{CallID: "g1", Approve: true, ApprovalID: h.approvalID("g1")})
		h.confirm(round.Confirm{CallID: "l1", Approve: true, ApprovalID: h.approvalID("l1")})
	})
	in := input(
		call("g1", "run_command", `{"command":"git status"}`),
		call("l1", "run_command", `{"command":"ls"}`),
		call("e1", "edit_file", `{"path":"a.txt","new_text":"x"}`),
	)
	in.State.Allow = []round.AllowRule{
		signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "git *", Scope: approval.ScopeReadOnly}),
		signed("s", "r", approval.Rule{Tool: "run_command", Args: `{"command":"ls"}`}),
		signed("s", "r", approval.Rule{Tool: "edit_file", Pattern: "*.txt"}),
	}
	res := h.run(t, in)
	require.Len(t, pending, 2)
	for _, p := range pending {
		require.Contains(t, p.Reasons, workflows.ReasonNoSandbox, p.CallID)
	}
	byID := map[string]*round.Approval{}
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, r.CallID)
		byID[r.CallID] = r.Approval
	}
	require.Equal(t, round.DecisionApproved, byID["g1"].Decision)
	require.Equal(t, round.DecisionApproved, byID["l1"].Decision)
	require.Equal(t, round.DecisionRule, byID["e1"].Decision)
}
