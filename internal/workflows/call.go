package workflows

import (
	"time"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// CallState is where a call stands in its round. Pass 1 leaves every call
// CallDone (settled without running), CallWaiting, CallReady or CallDup;
// the gate turns CallWaiting into CallReady or CallDone; pass 2 takes
// CallReady through CallQueued and CallRunning to CallDone.
type CallState int

const (
	// CallDone calls have their result: Status and Content when the round
	// settled them without running them, Outcome when they ran.
	CallDone CallState = iota
	// CallWaiting calls wait at the confirm gate for a human decision (P1.6).
	CallWaiting
	// CallReady calls run in pass 2.
	CallReady
	// CallDup calls repeat an earlier call of the same round (DupOf) and take
	// its result in pass 3 (P1.3).
	CallDup
	// CallQueued calls wait in pass 2 for a place under the bound or for
	// their turn in the serial lane.
	CallQueued
	// CallRunning calls run: an activity, or a wait for an ask_user answer
	// or a client tool's result.
	CallRunning
)

// String is the state as the progress query shows it.
func (s CallState) String() string {
	switch s {
	case CallDone:
		return "done"
	case CallWaiting:
		return "waiting"
	case CallQueued:
		return "queued"
	case CallRunning:
		return "running"
	default: // CallReady, CallDup
		return "planned"
	}
}

// Call is the one record of a call for its whole round: what pass 1 made
// of it, where it stands, what it waits for, and what pass 2 reported.
type Call struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Via    bool   `json:"via,omitempty"`
	// Test: the model called test_tool, which runs this script_* tool (G4).
	Test  bool      `json:"test,omitempty"`
	Args  string    `json:"args"`
	Key   string    `json:"key"`
	State CallState `json:"state"`
	DupOf int       `json:"dup_of"`
	Facts CallFacts `json:"facts"`
	// Status and Content are the result of a call settled without running.
	// For failures, Content is the bare error; pass 3 adds
	// "tool=<name> failed:" and the hint.
	Status     round.Status `json:"status,omitempty"`
	Content    string       `json:"content,omitempty"`
	ContentRef string       `json:"content_ref,omitempty"`
	// Repeat names the earlier result a deduped call is served (U3).
	Repeat *round.Repeat `json:"repeat,omitempty"`
	// ConfirmWhy says why the call needs a decision.
	ConfirmWhy string `json:"confirm_why,omitempty"`
	// ApprovalID binds a decision to the call's arguments (T1); Reasons say
	// why it asks; Always: neither auto_approve nor allow_turn approves it
	// (approval.Verdict).
	ApprovalID string   `json:"approval_id,omitempty"`
	Reasons    []string `json:"reasons,omitempty"`
	Always     bool     `json:"always,omitempty"`
	// Limits are the run limits the call is past (B1): it waits as kind
	// limit, and only an explicit decision on it answers.
	Limits []string `json:"limits,omitempty"`
	// Waits counts the call's waits for a person, for their wait_ids.
	Waits int `json:"waits,omitempty"`
	// Approval is how the call was allowed or refused (T2); nil in rounds
	// older than the record.
	Approval *round.Approval `json:"approval,omitempty"`
	// Outcome is what pass 2 reported, for a call that ran.
	Outcome *Outcome `json:"outcome,omitempty"`

	// pending is what the call waits for (a decision, an answer, a client's
	// result), nil when it waits for nothing.
	pending *round.Pending
	// answer is the signal that answered an ask_user or client call.
	answer *wire.ExecuteOutput
	// elicit is the MCP elicitation the call waits for (E1, elicit.go).
	elicit *elicitState
	// deadline is when an unanswered confirmation expires (T3); reminded
	// is how many of its reminders (at half and 90% of the wait) are out.
	deadline time.Time
	reminded int
	// notedReminders numbers the wait's reminder notifications (N1); it
	// never goes back, so an extension's reminders get new ids.
	notedReminders int
	// started is when pass 2 started the call.
	started time.Time
	// selfPublished: the activity publishes the call's call_started event.
	selfPublished bool
	// activity: the call runs as an ExecuteTool activity (local or not);
	// selfFinished: its result came from an attempt of it, which published
	// the call's call_finished event (U7).
	activity, selfFinished bool
	// ruleScope is the scope of the pattern rules that approved the call
	// (T12, ruleScope); execute.go hands it to the tool and names it in
	// the call's Approval under changeRuleScope.
	ruleScope string
}

// done settles a call without running it.
func (c *Call) done(status round.Status, content string) {
	c.State, c.Status, c.Content = CallDone, status, content
}

// waitsForDecision reports whether the call waits for a person's
// decision: an approval or a limit (B1).
func (c *Call) waitsForDecision() bool {
	return c.pending != nil && (c.pending.Kind == round.KindConfirm || c.pending.Kind == round.KindLimit)
}

// waitsForPerson reports whether the call waits for a person: a
// decision, an ask_user answer or an answer to an MCP elicitation.
func (c *Call) waitsForPerson() bool {
	return c.waitsForDecision() || c.waitsFor(round.KindAnswer) || c.waitsFor(round.KindElicitation)
}

// waitsFor reports whether the call waits for a signal of that kind.
func (c *Call) waitsFor(kind string) bool {
	return c.pending != nil && c.pending.Kind == kind
}

// Outcome is what pass 2 reports for a call that ran.
type Outcome struct {
	Status     round.Status `json:"status"`
	Content    string       `json:"content"`
	ContentRef string       `json:"content_ref,omitempty"`
	Fetched    []string     `json:"fetched,omitempty"`
	Touched    []string     `json:"touched,omitempty"`
	Read       []string     `json:"read,omitempty"`
	// Files is the state of each file the call read (U3).
	Files      map[string]round.FileState `json:"files,omitempty"`
	FromCache  bool                       `json:"from_cache,omitempty"`
	Attempts   int                        `json:"attempts,omitempty"`
	DurationMS int64                      `json:"duration_ms,omitempty"`
	// OperationID is set for calls that ran as activities (SPEC R).
	OperationID string `json:"operation_id,omitempty"`
	// Reconciled: a reconciler found the effect of a lost attempt.
	Reconciled bool `json:"reconciled,omitempty"`
	// Images are the images of the output (F2), kept only under
	// changeImages; with a blob store on the worker, their references.
	Images []round.Image `json:"images,omitempty"`
	// ErrorCode is the code of a tool's failure that has one (W3).
	ErrorCode string `json:"error_code,omitempty"`
	// Usage is what a subagents call's child run did (G1).
	Usage *round.Usage `json:"usage,omitempty"`
	// Child is the background subagent the call started (G2).
	Child string `json:"child,omitempty"`
}
