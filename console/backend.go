package console

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/round"
)

// Backend is what the console needs from Temporal and Redis. The HTTP layer
// only speaks to this interface: NewTemporalBackend is the real one, tests use
// a fake.
type Backend interface {
	// Submit starts a round (or attaches to the same round already started)
	// and returns its workflow id. Errors wrapping client.ErrInputTooLarge,
	// client.ErrInputMismatch or ErrBadInput map to 413, 409 and 400.
	Submit(ctx context.Context, in *round.Input) (string, error)
	// Wait blocks until the round has finished and returns its result.
	Wait(ctx context.Context, workflowID string) (*round.Result, error)
	// Round reads a round: its result when finished, else what it waits for
	// and its progress. ErrNotFound when there is no such round.
	Round(ctx context.Context, workflowID string) (*RoundView, error)
	// Inbox lists the rounds that wait for a person, newest first; session
	// "" means every session.
	Inbox(ctx context.Context, session string) ([]InboxEntry, error)
	// Session lists a session's rounds, newest first, with their calls.
	Session(ctx context.Context, session string) ([]RoundView, error)
	// Decide approves or denies a waiting call: ErrNotWaiting,
	// ErrStaleApproval or ErrInvalidArgs when the round refuses it.
	Decide(ctx context.Context, d Decision) error
	// Answer answers an ask_user call.
	Answer(ctx context.Context, workflowID, callID string, answers []string) error
	// AnswerElicitation answers a call whose MCP server asks for input
	// (E1): ErrNotWaiting, ErrStaleWait or an error of
	// round.CodeInvalidAnswer when the round refuses it.
	AnswerElicitation(ctx context.Context, workflowID string, a round.ElicitAnswer) error
	// SubmitToolResult answers a client tool's wait with its result (Y5):
	// ErrNotWaiting or ErrStaleWait when the round refuses it.
	SubmitToolResult(ctx context.Context, workflowID string, r round.ToolResult) error
	// Extend pushes a waiting call's deadline by seconds, and answers what
	// the round added under its 7-day cap and the deadline it set (T3).
	Extend(ctx context.Context, workflowID, callID string, seconds int) (round.Extended, error)
	// Cancel cancels a round or an agent run. ErrNotFound when there is
	// no such workflow.
	Cancel(ctx context.Context, workflowID string) error
	// StartAgent starts an agent run (or attaches to the run with the same
	// session and run id) and returns its workflow id. The input has been
	// validated; errors wrapping ErrBadInput map to 400.
	StartAgent(ctx context.Context, in round.AgentInput) (string, error)
	// Agent reads an agent run's status and conversation, its result once
	// it has ended. ErrNotFound when there is no such run.
	Agent(ctx context.Context, workflowID string) (*AgentView, error)
	// SessionAgents lists a session's newest agent runs with their status.
	SessionAgents(ctx context.Context, session string) ([]AgentView, error)
	// SendUserMessage signals user_message to a running agent run:
	// ErrNotFound when there is no such run, ErrNotRunning when it ended.
	SendUserMessage(ctx context.Context, workflowID, text string) error
	// Events calls ready once the stream is being read (every event
	// published after it is seen), then fn for each new event of the session
	// until ctx ends or fn fails. With after set to an event's id, the events
	// published after that one come first (a reconnecting reader's
	// Last-Event-ID); an id no longer in the stream counts as none, and
	// replayFromStart ("0", which no event id is) replays every event the
	// stream keeps.
	Events(ctx context.Context, session, after string, ready func(), fn func(round.Event) error) error
	// OpenWorkflows lists the session's open rounds and agent runs, which
	// keep its workspace in use (W3).
	OpenWorkflows(ctx context.Context, session string) ([]string, error)
	// MoveWorkspace rebinds the session's workspace to host through its
	// workspace/<session> workflow (W4); an error placement.IsHostUnavailable
	// reports when the host has no live poller (W5).
	MoveWorkspace(ctx context.Context, session, host string) (placement.Binding, error)
}

// replayFromStart is the Last-Event-ID (or ?after=) that asks for a
// session's events from the start of its stream: event ids hold their
// workflow id, so none is "0".
const replayFromStart = "0"

// Errors a Backend returns for the HTTP layer to map to statuses (codes,
// in server.go). They are *round.Error values: errors.Is matches any error
// of the same code, the client's (client.ErrNotWaiting, ...) too.
var (
	// ErrNotFound: no such round or agent run (404 not_found).
	ErrNotFound error = &round.Error{Code: round.CodeNotFound, Message: "not found"}
	// ErrNotRunning: the agent run has ended (409 not_running).
	ErrNotRunning error = &round.Error{Code: round.CodeNotRunning, Message: "the agent run has ended"}
	// ErrNotWaiting: the call does not wait for a decision (404 not_waiting).
	ErrNotWaiting error = &round.Error{Code: round.CodeNotWaiting, Message: "the call does not wait for a decision"}
	// ErrStaleApproval: the approval_id is not the waiting call's (409 stale_approval).
	ErrStaleApproval error = &round.Error{Code: round.CodeStaleApproval, Message: "the approval_id does not match the waiting call: its arguments changed or it is another call; read the inbox again"}
	// ErrInvalidArgs: edited arguments refused (400 invalid_args).
	ErrInvalidArgs error = &round.Error{Code: round.CodeInvalidArgs, Message: "invalid arguments"}
	// ErrStaleWait: the wait_id is not the call's current wait (409 stale_wait).
	ErrStaleWait error = &round.Error{Code: round.CodeStaleWait, Message: "the wait_id is not the call's current wait; read the inbox again"}
	// ErrInvalidDecision: the decision carries what its wait does not take
	// (400 invalid_decision).
	ErrInvalidDecision error = &round.Error{Code: round.CodeInvalidDecision, Message: "the decision does not fit the wait"}
	// ErrInvalidPattern: the pattern to remember cannot be a rule for the
	// call's tool (400 invalid_pattern, T4).
	ErrInvalidPattern error = &round.Error{Code: round.CodeInvalidPattern, Message: "invalid pattern"}
	// ErrBadInput: anything else wrong with a request (400 bad_request;
	// 400 invalid_input when it wraps round.ErrUnknownField).
	ErrBadInput error = &round.Error{Code: round.CodeBadRequest, Message: "bad request"}
	// ErrWorkspaceBusy: a round or agent run of the session is open (409
	// workspace_busy).
	ErrWorkspaceBusy error = &round.Error{Code: round.CodeWorkspaceBusy, Message: "the session's workspace is in use"}
	// ErrPlacementOff: the workers keep every workspace in one folder that
	// each of them sees, so no host binding exists to move (409
	// placement_off, W4).
	ErrPlacementOff error = &round.Error{Code: round.CodePlacementOff, Message: "workspaces are not bound to hosts"}
	// ErrHostUnavailable: no worker of the host polls its queue, so a
	// workspace cannot move there (409 host_unavailable, W5).
	ErrHostUnavailable error = &round.Error{Code: round.CodeHostUnavailable, Message: "the host has no live worker"}
	// ErrUnsupported: the workers cannot do this (501 not_implemented).
	ErrUnsupported error = &round.Error{Code: round.CodeNotImplemented, Message: "not supported by the workers"}
)

// Decision is a person's answer to a waiting call (SPEC T1): Decide hands
// it to the client's Approve or Deny, which send it as the round's confirm
// update (round.Confirm).
type Decision struct {
	WorkflowID string `json:"-"`
	CallID     string `json:"call_id"`
	ApprovalID string `json:"approval_id,omitempty"`
	Approve    bool   `json:"approve"`
	Reason     string `json:"reason,omitempty"`
	Remember   bool   `json:"remember,omitempty"`
	Pattern    string `json:"pattern,omitempty"`
	AllowTurn  bool   `json:"allow_turn,omitempty"`
	// By is the token's name, Via "api" or "console"; both verified.
	By       string `json:"by,omitempty"`
	Via      string `json:"via,omitempty"`
	Verified bool   `json:"verified,omitempty"`
	// Args, when set, are the edited arguments the call runs with: the text
	// of a JSON object, as a call's function.arguments.
	Args string `json:"args,omitempty"`
	// WaitID and UpTo are those of round.Confirm (B1, B2).
	WaitID string `json:"wait_id,omitempty"`
	// Nonce is a signed link's nonce (N2), for a decision via "link".
	Nonce string `json:"nonce,omitempty"`
	UpTo  int64  `json:"up_to,omitempty"`
	// Scope is round.Confirm's (T12).
	Scope string `json:"scope,omitempty"`
}

// PendingCall is a call that waits for a person or a client, as the round's
// pending query lists it. Listed under its round (InboxEntry, RoundView),
// it leaves WorkflowID empty.
type PendingCall = round.Pending

// Pending kinds.
const (
	KindConfirm    = round.KindConfirm
	KindAnswer     = round.KindAnswer
	KindToolResult = round.KindToolResult
)

// InboxEntry is one round that waits for a person.
type InboxEntry struct {
	WorkflowID string        `json:"workflow_id"`
	SessionID  string        `json:"session_id"`
	Pending    []PendingCall `json:"pending"`
}

// Round states of a RoundView.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// RoundView is a round as the console shows it.
type RoundView struct {
	WorkflowID string `json:"workflow_id"`
	SessionID  string `json:"session_id,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Round      int    `json:"round,omitempty"`
	// Status is running, completed or failed (cancelled, terminated and
	// timed-out rounds count as failed, with Error saying which).
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	StartTime time.Time `json:"start_time,omitempty"`
	// BuildID is the build whose worker started the round (its memo
	// names.MemoBuildID, V1); empty for rounds from before.
	BuildID string        `json:"build_id,omitempty"`
	Pending []PendingCall `json:"pending,omitempty"`
	// Progress is the round's progress query answer, as the worker gives it.
	Progress json.RawMessage `json:"progress,omitempty"`
	// Calls are the round's calls with their state or final status.
	Calls []CallView `json:"calls,omitempty"`
	// Result is set once the round has completed.
	Result *round.Result `json:"-"`
}

// CallView is one call of a round: its state while the round runs
// (planned, waiting, queued, running, done) and its status once done.
type CallView struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	State  string `json:"state,omitempty"`
	Status string `json:"status,omitempty"`
	// Decision and By: how the call was decided, while the round runs
	// (the progress query's; the result's approval record after).
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`
}

// Label is the call's state as a person reads it: its status once done; a
// decided call that has not started says who decided it and what it waits
// for, instead of "planned".
func (c CallView) Label() string {
	switch {
	case c.Status != "":
		return c.Status
	case c.Decision == "" || c.State != "planned":
		return c.State
	}
	by := ""
	if c.By != "" {
		by = " by " + c.By
	}
	switch c.Decision {
	case round.DecisionApproved, round.DecisionRule:
		return c.Decision + by + ", runs when the round's other calls are decided"
	case round.DecisionDenied:
		return "denied" + by + ", skipped"
	}
	return c.Decision + by
}
