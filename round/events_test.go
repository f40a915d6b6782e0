package round

import (
	"strings"
	"testing"
	"time"
)

// TestEventIDs pins every event id: readers drop duplicates by id, and the
// workflow and the ExecuteTool activity must build the same call_started id.
func TestEventIDs(t *testing.T) {
	s := ScopeOf(&Input{SessionID: "s", RunID: "r", Round: 2}, "wf")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	long := strings.Repeat("x", 300)
	for _, tt := range []struct {
		e      Event
		id     string
		typ    string
		detail string
	}{
		{s.RoundStarted(now, 3), "wf/started", EventRoundStarted, "3 calls"},
		{s.CallStarted(now, "c1", "t", 0), "wf/c1/started", EventCallStarted, ""},
		{s.CallStarted(now, "c1", "t", 1), "wf/c1/started", EventCallStarted, ""},
		{s.CallStarted(now, "c1", "t", 3), "wf/c1/started/3", EventCallStarted, "attempt 3"},
		{s.ConfirmationRequested(now, "c1", "t", "why"), "wf/c1/confirm", EventConfirmationRequested, "why"},
		{s.ConfirmationAnswered(now, "c1", "t", "approved"), "wf/c1/answered", EventConfirmationAnswered, "approved"},
		{s.SignalIgnored(now, 4, "c9", "confirm: no call"), "wf/signal/4", EventSignalIgnored, "confirm: no call"},
		{s.ToolResult(now, CallResult{CallID: "c1", Tool: "t", Status: StatusOK, Content: long}), "wf/c1/result", EventToolResult, long[:200] + "..."},
		{s.RoundFinished(now, "ok=1"), "wf/finished", EventRoundFinished, "ok=1"},
	} {
		e := tt.e
		if e.ID != tt.id || e.Type != tt.typ || e.Detail != tt.detail {
			t.Errorf("got %s %s %q, want %s %s %q", e.ID, e.Type, e.Detail, tt.id, tt.typ, tt.detail)
		}
		if e.SessionID != "s" || e.RunID != "r" || e.Round != 2 || e.WorkflowID != "wf" || !e.Time.Equal(now) {
			t.Errorf("%s does not carry the round's scope: %+v", e.ID, e)
		}
	}
}
