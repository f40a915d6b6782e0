package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// upserts records every UpsertTypedSearchAttributes of the round as
// "session waiting calls" lines; a field the upsert left out is "-".
func (h *harness) upserts() *[]string {
	var got []string
	h.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		got = append(got, searchLine(args.Get(0).(temporal.SearchAttributes)))
	}).Return(nil)
	return &got
}

func searchLine(sa temporal.SearchAttributes) string {
	line := ""
	if s, ok := sa.GetKeyword(workflows.SearchSession); ok {
		line += s
	} else {
		line += "-"
	}
	if w, ok := sa.GetBool(workflows.SearchWaiting); ok {
		line += fmt.Sprintf(" %v", w)
	} else {
		line += " -"
	}
	if n, ok := sa.GetInt64(workflows.SearchWaitingCalls); ok {
		line += fmt.Sprintf(" %d", n)
	} else {
		line += " -"
	}
	return line
}

// TestSearchAttributesFollowTheCallsThatWaitForAPerson (T7): the session at
// the start, then the waiting flag and count each time the calls that wait
// for a decision or an answer change; a client tool's wait does not count.
func TestSearchAttributesFollowTheCallsThatWaitForAPerson(t *testing.T) {
	h := newHarness(t, 3)
	got := h.upserts()
	h.at(time.Second, func() { h.confirm(round.Confirm{CallID: "e1", Approve: true}) })
	h.at(2*time.Second, func() { h.confirm(round.Confirm{CallID: "e2", Approve: false}) })
	h.at(3*time.Second, func() {
		h.env.SignalWorkflow(names.SignalAnswer, round.Answer{CallID: "q1", Answers: []string{"yes"}})
	})
	h.at(4*time.Second, func() {
		h.env.SignalWorkflow(names.SignalToolResult, round.ToolResult{CallID: "k1", Content: "opened"})
	})
	in := input(
		call("e1", "edit_file", `{"path":"a","new_text":"x"}`),
		call("e2", "run_command", `{"command":"make"}`),
		call("q1", "ask_user", `{"questions":["Ship it?"]}`),
		call("k1", "ide_open", `{"file":"a.go"}`),
	)
	in.SessionID = "sess-inbox"
	in.ClientTools = []tools.ToolSpec{{Type: "function", Function: tools.FunctionSpec{Name: "ide_open", Parameters: []byte(`{"type":"object"}`)}}}
	res := h.run(t, in)
	require.Equal(t, []round.Status{"ok", "skipped", "ok", "ok"}, statuses(res))
	require.Equal(t, []string{
		"sess-inbox false 0", // at the start
		"- true 2",           // e1 and e2 wait for a decision
		"- true 1",           // e1 approved
		"- false 0",          // e2 denied
		"- true 1",           // q1 waits for an answer (k1, a client tool, does not count)
		"- false 0",          // q1 answered
	}, *got)
}

// sinceMemos records every waiting-since memo the round upserts, as the
// time since start.
func (h *harness) sinceMemos(t *testing.T, start time.Time) *[]time.Duration {
	var got []time.Duration
	h.env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		memo := args.Get(0).(map[string]any)
		since, ok := memo[names.MemoWaitingSince].(time.Time)
		require.True(t, ok, "memo %v", memo)
		got = append(got, since.Sub(start))
	}).Return(nil)
	return &got
}

// TestWaitingSinceMemoIsTheOldestWait: the memo tells when the oldest call
// that waits for a person began to wait: the gate's start while e1 or e2
// waits (a decision on one leaves the other's time), then the start of
// q1's wait for an answer, which began after the gate.
func TestWaitingSinceMemoIsTheOldestWait(t *testing.T) {
	h := newHarness(t, 3)
	got := h.upserts()
	start := h.env.Now()
	memos := h.sinceMemos(t, start)
	h.at(time.Second, func() { h.confirm(round.Confirm{CallID: "e1", Approve: true}) })
	h.at(2*time.Second, func() { h.confirm(round.Confirm{CallID: "e2", Approve: true}) })
	h.at(5*time.Second, func() {
		h.env.SignalWorkflow(names.SignalAnswer, round.Answer{CallID: "q1", Answers: []string{"yes"}})
	})
	in := input(
		call("e1", "edit_file", `{"path":"a","new_text":"x"}`),
		call("e2", "run_command", `{"command":"true"}`),
		call("q1", "ask_user", `{"questions":["Ship it?"]}`),
	)
	res := h.run(t, in)
	require.Equal(t, []round.Status{"ok", "ok", "ok"}, statuses(res))
	require.Len(t, *memos, 2, "%v", *memos)
	require.Equal(t, time.Duration(0), (*memos)[0], "e1 and e2 wait from the round's first task")
	require.GreaterOrEqual(t, (*memos)[1], 2*time.Second, "q1 waits from pass 2, after e2's decision")
	require.Less(t, (*memos)[1], 5*time.Second)
	require.Equal(t, []string{"- true 2", "- true 1", "- false 0", "- true 1", "- false 0"}, (*got)[1:],
		"the attributes change only with the count of waiting calls")
}

// TestSearchAttributesClearWhenTheRoundEndsWaiting: a round cancelled while
// calls wait, and one whose confirmations time out, wait for no one after.
func TestSearchAttributesClearWhenTheRoundEndsWaiting(t *testing.T) {
	for _, cancel := range []bool{true, false} {
		h := newHarness(t, 3)
		got := h.upserts()
		if cancel {
			h.at(time.Second, func() { h.env.CancelWorkflow() })
		}
		in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`), call("q1", "ask_user", `{"questions":["?"]}`))
		in.ConfirmTimeoutSeconds = 5
		h.run(t, in)
		require.Equal(t, "- true 1", (*got)[1], "cancel=%v", cancel)
		require.Equal(t, "- false 0", (*got)[len(*got)-1], "cancel=%v: %v", cancel, *got)
	}
}

// TestRecordedInboxHistoryUpsertsTheAttributes: the recorded inbox round
// (testdata/inbox.json) carries the version marker and the upserts that the
// server indexed, and the older recordings carry none (they replay without).
func TestRecordedInboxHistoryUpsertsTheAttributes(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	found := false
	for _, h := range loadHistories(t) {
		var lines []string
		for _, e := range h.history.GetEvents() {
			a := e.GetUpsertWorkflowSearchAttributesEventAttributes()
			if a == nil {
				continue
			}
			fields := a.GetSearchAttributes().GetIndexedFields()
			if _, ok := fields[names.SearchWaiting]; !ok {
				continue // TemporalChangeVersion, upserted by the version marker
			}
			var session string
			var waiting bool
			var calls int64
			line := "-"
			if p, ok := fields[names.SearchSession]; ok {
				require.NoError(t, dc.FromPayload(p, &session))
				line = session
			}
			require.NoError(t, dc.FromPayload(fields[names.SearchWaiting], &waiting))
			require.NoError(t, dc.FromPayload(fields[names.SearchWaitingCalls], &calls))
			lines = append(lines, fmt.Sprintf("%s %v %d", line, waiting, calls))
		}
		// Recorded after the attributes: inbox, and the baseline rounds
		// (their one version marker stands for inbox-search-attributes).
		want, ok := map[string][]string{
			"inbox":              {"replay-inbox false 0", "- true 1", "- false 0", "- true 1", "- false 0"},
			"baseline_fanout":    {"replay-baseline_fanout false 0"},
			"baseline_approvals": {"replay-baseline_approvals false 0", "- true 4", "- true 3", "- true 1", "- false 0"},
			"call_finished":      {"replay-call_finished false 0"}, // baseline-2026-12-01 stands for it too
			"helpful_hints":      {"replay-helpful_hints false 0"},
			"rule_lockdown":      {"replay-rule_lockdown false 0"},
			"live_decisions":     {"replay-live_decisions false 0", "- true 2", "- true 1", "- false 0"},
			"baseline3_live":     {"replay-baseline3_live false 0", "- true 2", "- true 1", "- false 0"},
			"lean_output":        {"replay-lean_output false 0", "- true 2", "- true 1", "- false 0"},
			"notify_webhooks":    {"replay-notify_webhooks false 0", "- true 2", "- true 1", "- false 0"},
			// Calls past a run limit wait for a person too (B1).
			"run_limits":    {"replay-run_limits false 0", "- true 2", "- true 1", "- false 0"},
			"counted_rules": {"replay-counted_rules false 0", "- true 3", "- true 1", "- false 0"},
			"tool_images":   {"replay-tool_images false 0"},
			// On a worker with WORKER_LIMITS: usage that verifies asks
			// nobody, usage without a MAC makes every call wait.
			"signed_usage":   {"replay-signed_usage false 0"},
			"unsigned_usage": {"replay-unsigned_usage false 0", "- true 2", "- true 1", "- false 0"},
			"error_code":     {"replay-error_code false 0"},
			// Placed rounds (W4, W5).
			"workspace_placement":   {"replay-workspace_placement false 0"},
			"workspace_unavailable": {"replay-workspace_unavailable false 0"},
			// Subagents (G1): the round itself asks nobody.
			"subagents": {"replay-subagents false 0"},
			// Tests of a script with auto_approve (G4).
			"test_tool": {"replay-test_tool false 0"},
			// A message to a chatbot (G3): the round itself asks nobody.
			"chatbots": {"replay-chatbots false 0"},
			// A tool of each kind but the waits, recorded with their kinds.
			"kinds": {"replay-kinds false 0"},
			// Calls that failed on every attempt: nobody is asked.
			"failed_attempts": {"replay-failed_attempts false 0"},
			// Each MCP server's request waits for a person in turn (E1).
			"mcp_elicitation": {"replay-mcp_elicitation false 0", "- true 1", "- false 0", "- true 1", "- false 0"},
			// A task's request waits for a person as E1's do (E2).
			"mcp_tasks": {"replay-mcp_tasks false 0", "- true 1", "- false 0"},
			// A counted rule used up by the count round 1 signed (T15).
			"bound_usage":  {"replay-bound_usage false 0", "- true 1", "- false 0"},
			"floor_shares": {"replay-floor_shares false 0"},
			// A call waits for a rule to be remembered (T12).
			"rule_scope": {"replay-rule_scope false 0", "- true 1", "- false 0"},
			// User tools with auto_approve (Y3): the round asks nobody.
			"user_tools": {"replay-user_tools false 0"},
			// A user tool's call that sends a secret asks even so (Y3).
			"user_tool_secrets": {"replay-user_tool_secrets false 0", "- true 1", "- false 0"},
		}[h.name]
		if !ok {
			if !strings.Contains(fmt.Sprint(h.history.GetEvents()), "inbox-search-attributes") {
				require.Empty(t, lines, "%s was recorded before the attributes", h.name)
				continue
			}
			// Rounds recorded since then that never wait for a person.
			require.Equal(t, []string{h.input.SessionID + " false 0"}, lines, h.name)
			continue
		}
		require.Equal(t, want, lines, h.name)
		if h.name == "inbox" {
			found = true
			require.True(t, strings.Contains(fmt.Sprint(h.history.GetEvents()), "inbox-search-attributes"), "the version marker")
		}
	}
	require.True(t, found, "testdata/inbox.json: record it with go test ./workflows -run TestRecordHistories/inbox -record")
}
