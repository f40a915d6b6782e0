package round

import (
	"fmt"
	"time"
)

// Event types.
const (
	EventRoundStarted          = "round_started"
	EventCallStarted           = "call_started"
	EventConfirmationRequested = "confirmation_requested"
	EventConfirmationAnswered  = "confirmation_answered"
	EventSignalIgnored         = "signal_ignored"
	EventApprovalReminder      = "approval_reminder" // T3
	EventCallFinished          = "call_finished"     // U7: a call's end, as it happens
	EventToolResult            = "tool_result"       // EventToolResult of P3.5
	EventRoundFinished         = "round_finished"
)

// Event is one thing that happened in a round, published to the session's
// event stream and returned with the round. ID is unique and stable, so a
// reader drops duplicates from retried activities.
type Event struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	SessionID  string `json:"session_id,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Round      int    `json:"round,omitempty"`
	WorkflowID string `json:"workflow_id,omitempty"`
	CallID     string `json:"call_id,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Status     Status `json:"status,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// DurationMS is how long a call_finished event's call ran.
	DurationMS int64     `json:"duration_ms,omitempty"`
	Time       time.Time `json:"time"`
	// Approval is a tool_result event's decision record (T2).
	Approval *Approval `json:"approval,omitempty"`
}

// Scope is what every event of one round shares. Its methods are the only
// constructors of events, so every event id is built here: the workflow
// and the ExecuteTool activity, which publishes call_started itself, agree
// on them without a convention.
type Scope struct {
	SessionID  string
	RunID      string
	Round      int
	WorkflowID string
}

// ScopeOf is the scope of the round in that runs as workflowID.
func ScopeOf(in *Input, workflowID string) Scope {
	return Scope{SessionID: in.SessionID, RunID: in.RunID, Round: in.Round, WorkflowID: workflowID}
}

// event is an event of the scope; id is appended to the workflow id.
func (s Scope) event(typ, id string, now time.Time) Event {
	return Event{
		ID: s.WorkflowID + id, Type: typ, SessionID: s.SessionID, RunID: s.RunID, Round: s.Round,
		WorkflowID: s.WorkflowID, Time: now,
	}
}

func (s Scope) callEvent(typ, id string, now time.Time, callID, tool string) Event {
	e := s.event(typ, "/"+callID+id, now)
	e.CallID, e.Tool = callID, tool
	return e
}

// RoundStarted opens the round's events.
func (s Scope) RoundStarted(now time.Time, calls int) Event {
	e := s.event(EventRoundStarted, "/started", now)
	e.Detail = fmt.Sprintf("%d calls", calls)
	return e
}

// CallStarted is a call's start. The workflow records the first attempt's;
// the activity publishes each attempt's, with the worker's clock, and a
// later attempt gets an id of its own.
func (s Scope) CallStarted(now time.Time, callID, tool string, attempt int) Event {
	if attempt <= 1 {
		return s.callEvent(EventCallStarted, "/started", now, callID, tool)
	}
	e := s.callEvent(EventCallStarted, fmt.Sprintf("/started/%d", attempt), now, callID, tool)
	e.Detail = fmt.Sprintf("attempt %d", attempt)
	return e
}

// ConfirmationRequested raises a call at the confirm gate (P1.6).
func (s Scope) ConfirmationRequested(now time.Time, callID, tool, detail string) Event {
	e := s.callEvent(EventConfirmationRequested, "/confirm", now, callID, tool)
	e.Detail = detail
	return e
}

// ConfirmationAnswered is the decision on a call raised at the gate.
func (s Scope) ConfirmationAnswered(now time.Time, callID, tool, detail string) Event {
	e := s.callEvent(EventConfirmationAnswered, "/answered", now, callID, tool)
	e.Detail = detail
	return e
}

// SignalIgnored records the n-th signal of the round that changed nothing.
func (s Scope) SignalIgnored(now time.Time, n int, callID, detail string) Event {
	e := s.event(EventSignalIgnored, fmt.Sprintf("/signal/%d", n), now)
	e.CallID, e.Detail = callID, detail
	return e
}

// ToolResult is a call's result (P3.5), with a preview of its content.
func (s Scope) ToolResult(now time.Time, r CallResult) Event {
	e := s.callEvent(EventToolResult, "/result", now, r.CallID, r.Tool)
	e.Status, e.Detail, e.Approval = r.Status, ResultPreview(r.Content), r.Approval
	return e
}

// CallFinished is a call's end (U7), with a preview of its content: the
// ExecuteTool activity publishes it as its attempt ends, pass 3 for calls
// whose end only the workflow knows. Both build the same id, so the stream
// keeps the first.
func (s Scope) CallFinished(now time.Time, callID, tool string, status Status, content string, d time.Duration) Event {
	e := s.callEvent(EventCallFinished, "/finished", now, callID, tool)
	e.Status, e.Detail, e.DurationMS = status, ResultPreview(content), d.Milliseconds()
	return e
}

// ApprovalReminder reminds that a call still waits for a decision (T3): the
// n-th reminder of its wait.
func (s Scope) ApprovalReminder(now time.Time, callID, tool string, n int, detail string) Event {
	e := s.callEvent(EventApprovalReminder, fmt.Sprintf("/reminder/%d", n), now, callID, tool)
	e.Detail = detail
	return e
}

// RoundFinished closes the round's events.
func (s Scope) RoundFinished(now time.Time, detail string) Event {
	e := s.event(EventRoundFinished, "/finished", now)
	e.Detail = detail
	return e
}
