package round

import (
	"encoding/json"
	"time"

	"github.com/toolround/toolround/round/names"
)

// ErrTypeInvalidInput is the application error type of a round input that
// cannot run at all.
const ErrTypeInvalidInput = "InvalidRoundInput"

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
	// ApprovalID must equal the waiting call's approval_id (T1); a decision
	// for other arguments, or an older wait, is not applied.
	ApprovalID string `json:"approval_id,omitempty"`
	// By and Via say who decided and through what (T2): claims, unless the
	// console authenticated them (Verified).
	By       string `json:"by,omitempty"`
	Via      string `json:"via,omitempty"`
	Verified bool   `json:"verified,omitempty"`
	// Args, when set, are the arguments the approver edited: validated
	// against the tool's schema again, then what the call runs with (T1).
	Args json.RawMessage `json:"args,omitempty"`
	// WaitID, when set, must equal the wait's wait_id (B1): a decision for
	// an earlier wait of the call is refused (stale_wait).
	WaitID string `json:"wait_id,omitempty"`
	// UpTo bounds a remembered rule to that many matching calls of the
	// run (B2); it needs Remember.
	UpTo int64 `json:"up_to,omitempty"`
	// Scope is the remembered rule's scope (T12): "read-only" or "write";
	// empty: read-only when the approved call is a read-only form, else
	// write. It needs Remember.
	Scope string `json:"scope,omitempty"`
	// Nonce is the signed link's nonce when the decision came from one
	// (N2, Via "link"): the round refuses a nonce it has recorded
	// (CodeLinkUsed).
	Nonce string `json:"nonce,omitempty"`
}

// Extend is the payload of SignalExtend and UpdateExtend.
type Extend struct {
	CallID  string `json:"call_id"`
	Seconds int64  `json:"seconds"`
}

// Extended is the extend update's answer: the seconds it added to the
// call's deadline, which the 7-day cap may make fewer than it asked for
// (none when the deadline is at the cap already), and the deadline now
// (T3). A round of an older build answers nothing: a zero Extended.
type Extended struct {
	CallID       string    `json:"call_id"`
	AddedSeconds int64     `json:"added_seconds"`
	Deadline     time.Time `json:"deadline"`
}

// Answer is the payload of SignalAnswer.
type Answer struct {
	CallID  string   `json:"call_id"`
	Answers []string `json:"answers"`
}

// ToolResult is the payload of SignalToolResult.
type ToolResult struct {
	CallID string `json:"call_id"`
	// WaitID, when set, must name the call's current wait (B1): the
	// update refuses another as stale_wait.
	WaitID  string `json:"wait_id,omitempty"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Pending is a call that waits for a human decision or an outside result:
// one entry of the answer to QueryPending. It is the one shape of a waiting
// call: the client hands it on (client.PendingCall), the console shows it.
type Pending struct {
	// WorkflowID is the round's workflow id. The round's own answer leaves
	// it out; the client that asked sets it.
	WorkflowID string `json:"workflow_id,omitempty"`
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	// Kind is KindConfirm (approve or deny it), KindAnswer (an ask_user
	// question: answer it) or KindToolResult (a client tool: run it and
	// send its result).
	Kind      string `json:"kind"`
	Arguments string `json:"arguments"`
	// ApprovalID binds a decision to these arguments (T1): a digest over the
	// workflow id, call id, tool and canonical arguments.
	ApprovalID string `json:"approval_id,omitempty"`
	Subject    string `json:"subject,omitempty"`
	// Queue is the task queue of a user tool's tool worker (Y2).
	Queue  string `json:"queue,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Reasons says why the call asks, one short line each (T5); a call
	// past a run limit (Kind KindLimit) has one naming the limit and the
	// count beside those of its approval (B1).
	Reasons []string `json:"reasons,omitempty"`
	// WaitID names this wait of the call (B1): a digest over the approval
	// id, the wait's kind and its sequence in the call.
	WaitID string `json:"wait_id,omitempty"`
	// Limits are the run's limits with what it did, for a call past one.
	Limits    []LimitCount `json:"limits,omitempty"`
	Questions []string     `json:"questions,omitempty"`
	// Elicitation is what an MCP server asks for (KindElicitation, E1).
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	Since       time.Time    `json:"since"`
	// Deadline is when an unanswered wait expires (T3).
	Deadline time.Time `json:"deadline"`
	// AlwaysAsks marks a call that asks whatever the rules say (C4: a
	// sensitive read, a secret sent): only an approver decides it.
	AlwaysAsks bool `json:"always_asks,omitempty"`
}

// Why is every reason the call asks, whichever field carries it.
func (p Pending) Why() []string {
	if len(p.Reasons) > 0 {
		return p.Reasons
	}
	if p.Reason != "" {
		return []string{p.Reason}
	}
	return nil
}

// NeedsDecision reports whether approve/deny applies.
func (p Pending) NeedsDecision() bool { return p.Kind == KindConfirm || p.Kind == KindLimit }

// Pending kinds: what a waiting call waits for, named after the signal that
// ends the wait.
const (
	KindConfirm    = names.SignalConfirm
	KindAnswer     = names.SignalAnswer
	KindToolResult = names.SignalToolResult
	// KindLimit is a call past a run limit (B1): approve or deny it, with
	// the confirm signal or update, by an explicit decision on the call.
	KindLimit = "limit"
)

// Phase is where a round stands.
type Phase string

// Phases of a round, in order.
const (
	PhasePreflight Phase = "preflight" // pass 1
	PhaseConfirm   Phase = "confirm"   // the confirm gate waits for decisions
	PhaseExecute   Phase = "execute"   // pass 2
	PhaseCommit    Phase = "commit"    // pass 3 and its publication
	PhaseDone      Phase = "done"
)

// Progress is the answer to QueryProgress.
type Progress struct {
	Phase    Phase          `json:"phase"`
	Calls    []CallProgress `json:"calls"`
	InFlight int            `json:"in_flight"`
	Peak     int            `json:"peak_in_flight"`
	Bound    int            `json:"bound"`
	// BuildID is the build of the worker that answered (WORKER_BUILD_ID,
	// V1); StartedBuildID the one that started the round, as its memo
	// MemoBuildID says. They differ once a round moved to a new build.
	BuildID        string `json:"build_id,omitempty"`
	StartedBuildID string `json:"started_build_id,omitempty"`
}

// CallProgress is one call's place in the round.
type CallProgress struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// State is "planned", "waiting", "queued", "running" or "done".
	State  string `json:"state"`
	Status Status `json:"status,omitempty"`
	// Decision and By are the call's decision once a person or a rule
	// made one (approved, denied, rule, expired; T2), so that a call
	// approved while others still wait reads as such, not just "planned".
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`
}
