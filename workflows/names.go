// Package workflows runs one round of tool calls as a Temporal workflow: pass 1
// (pre-flight) and pass 3 (commit) are pure functions over the round's data,
// pass 2 is a bounded fan-out of activities in workflow code.
package workflows

import (
	"time"

	"github.com/toolround/toolround/round"
)

// Names registered with Temporal. They are stable strings, apart from Go
// identifiers, so renaming a function never orphans a running round.
const (
	WorkflowName         = "ToolRound"
	ActivityExecuteTool  = "ExecuteTool"
	ActivityPublishRound = "PublishRound"
	// ActivityStoreContents moves results that do not fit a round's result
	// to the blob store (see ResultBudget).
	ActivityStoreContents = "StoreContents"

	// SignalConfirm carries a human decision on a call (P1.6).
	SignalConfirm = "confirm"
	// SignalAnswer carries the answer to an ask_user call.
	SignalAnswer = "answer"
	// SignalToolResult carries the result of a client tool that the client ran.
	SignalToolResult = "tool_result"
	// QueryPending lists the calls that wait for a human or a client.
	QueryPending = "pending"
	// QueryProgress tells which calls are queued, running, waiting or done.
	QueryProgress = "progress"
)

// DefaultConfirmTimeout is how long a confirmation waits before it counts as
// a denial (P1.6).
const DefaultConfirmTimeout = 30 * time.Minute

// Confirm is the payload of SignalConfirm.
type Confirm struct {
	CallID  string `json:"call_id"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason,omitempty"`
	// Remember adds an allow rule for the tool and Pattern (default: this
	// call's exact subject) to the run state.
	Remember bool `json:"remember,omitempty"`
	// AllowTurn approves every later confirmation of the same round.
	AllowTurn bool   `json:"allow_turn,omitempty"`
	Pattern   string `json:"pattern,omitempty"`
}

// Answer is the payload of SignalAnswer.
type Answer struct {
	CallID  string   `json:"call_id"`
	Answers []string `json:"answers"`
}

// ToolResult is the payload of SignalToolResult.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Pending is a call that waits for a human decision or an outside result.
type Pending struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Kind is "confirm", "answer" (ask_user) or "tool_result" (client tool).
	Kind      string    `json:"kind"`
	Arguments string    `json:"arguments"`
	Subject   string    `json:"subject,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Questions []string  `json:"questions,omitempty"`
	Since     time.Time `json:"since"`
	Deadline  time.Time `json:"deadline"`
}

// Pending kinds.
const (
	KindConfirm    = "confirm"
	KindAnswer     = "answer"
	KindToolResult = "tool_result"
)

// Progress is the answer to QueryProgress.
type Progress struct {
	Phase    string         `json:"phase"`
	Calls    []CallProgress `json:"calls"`
	InFlight int            `json:"in_flight"`
	Peak     int            `json:"peak_in_flight"`
	Bound    int            `json:"bound"`
}

// CallProgress is one call's place in the round.
type CallProgress struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// State is "planned", "waiting", "queued", "running" or "done".
	State  string `json:"state"`
	Status string `json:"status,omitempty"`
}

// ExecuteInput is the input of the ExecuteTool activity.
type ExecuteInput struct {
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Args       string `json:"args"`
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	Round      int    `json:"round"`
	WorkflowID string `json:"workflow_id"`
}

// ExecuteOutput is the result of the ExecuteTool activity. A tool's own
// failure is IsError with the message in Content, not an activity error.
type ExecuteOutput struct {
	Content    string   `json:"content"`
	ContentRef string   `json:"content_ref,omitempty"`
	IsError    bool     `json:"is_error,omitempty"`
	Fetched    []string `json:"fetched,omitempty"`
	Touched    []string `json:"touched,omitempty"`
	Read       []string `json:"read,omitempty"`
	FromCache  bool     `json:"from_cache,omitempty"`
	// Attempt is the attempt that produced the output, from 1.
	Attempt int `json:"attempt,omitempty"`
}

// PublishInput is the input of the PublishRound local activity: pass 3's
// side effects outside history (events to the session stream, the result
// cache for http_request GETs).
type PublishInput struct {
	SessionID   string        `json:"session_id"`
	RunID       string        `json:"run_id"`
	Round       int           `json:"round"`
	WorkflowID  string        `json:"workflow_id"`
	Events      []round.Event `json:"events"`
	CacheWrites []CacheWrite  `json:"cache_writes,omitempty"`
	// History is the round's assistant message and tool messages, appended to
	// the session's history when the round ends.
	History []round.Message `json:"history,omitempty"`
}

// CacheWrite is one successful http_request GET result for the result cache.
type CacheWrite struct {
	Tool    string `json:"tool"`
	Args    string `json:"args"`
	Content string `json:"content"`
	// ContentRef is set when Content is only the preview of a large result:
	// the whole result is cached, read back from the blob store.
	ContentRef string `json:"content_ref,omitempty"`
}
