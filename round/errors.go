package round

import (
	"errors"
	"fmt"
)

// ErrorCode names what went wrong, the same on every side of the wire: the
// workflow's refusals carry it as their application error type, the client
// rebuilds an *Error of it, and the console's HTTP API answers with it as
// the `error` field of its error bodies (SPEC's HTTP API).
type ErrorCode string

// Error codes. The first nine are also the application error types with
// which the validators of the confirm, extend, tool_result and answer
// updates refuse a request before anything is recorded (T1, B1, E1, N2), as
// the workflow sends them: string(CodeNotWaiting) and so on.
const (
	CodeNotWaiting    ErrorCode = "not_waiting"    // the call does not wait for a decision
	CodeStaleApproval ErrorCode = "stale_approval" // the approval_id is not the waiting call's
	CodeInvalidArgs   ErrorCode = "invalid_args"   // edited arguments fail the tool's schema
	// CodeAlreadyDecided: the same decision, with the same approval_id,
	// already landed, so the request changed nothing and did no harm (the
	// API answers it 200).
	CodeAlreadyDecided ErrorCode = "already_decided"
	CodeStaleWait      ErrorCode = "stale_wait"     // the wait_id is not the call's current wait (B1)
	CodeInvalidAnswer  ErrorCode = "invalid_answer" // an elicitation answer that fails its schema, or an action other than accept, decline or cancel (E1)
	// CodeInvalidDecision: a decision with fields its wait does not take:
	// remember, pattern, allow_turn, args or up_to on a call past a limit,
	// or up_to without remember (B1, B2).
	CodeInvalidDecision ErrorCode = "invalid_decision"
	CodeLinkUsed        ErrorCode = "link_used"       // a signed link whose nonce the round has recorded: a link decides once (N2)
	CodeInvalidPattern  ErrorCode = "invalid_pattern" // a pattern to remember that cannot be a rule for the tool (T4, approval.ValidatePattern)

	CodeBadRequest      ErrorCode = "bad_request"      // an input or request that cannot be run at all
	CodeInvalidInput    ErrorCode = "invalid_input"    // a field the contract does not know (U8)
	CodeTooLarge        ErrorCode = "too_large"        // an input above the size a round takes
	CodeInputMismatch   ErrorCode = "input_mismatch"   // a round id reused with another input
	CodeNotFound        ErrorCode = "not_found"        // no such round or agent run
	CodeNotRunning      ErrorCode = "not_running"      // the agent run has ended
	CodeRoundEnded      ErrorCode = "round_ended"      // the round has ended and takes nothing more
	CodeRoundFailed     ErrorCode = "round_failed"     // a run's last round failed, so its state is lost (U9)
	CodeNoWorker        ErrorCode = "no_worker"        // no worker polls the task queue
	CodeNotImplemented  ErrorCode = "not_implemented"  // the workers cannot do this
	CodeTimeout         ErrorCode = "timeout"          // the answer did not come in time
	CodeWorkspaceBusy   ErrorCode = "workspace_busy"   // a round or agent run of the session is open, so its workspace stays (W3)
	CodePlacementOff    ErrorCode = "placement_off"    // workspaces are not bound to hosts, so there is nothing to move (W4)
	CodeHostUnavailable ErrorCode = "host_unavailable" // no worker of the host polls its queue, so a workspace cannot move there (W5)
)

// Error is an error with a code. errors.Is(err, target) holds for a target
// *Error of the same code anywhere in err's chain, so a sentinel such as
// client.ErrNotWaiting matches whichever message the error carries:
//
//	errors.Is(err, &round.Error{Code: round.CodeNotWaiting})
type Error struct {
	Code ErrorCode
	// Message is what Error returns; empty: the wrapped error's text, or
	// the code.
	Message string
	// Err is the cause, for errors.As and errors.Is.
	Err error
}

func (e *Error) Error() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.Code)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Errorf returns an *Error of code whose text and causes are those of
// fmt.Errorf(format, a...).
func Errorf(code ErrorCode, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Code: code, Message: err.Error(), Err: err}
}

// CodeOf returns the code of the first *Error in err's chain; "" when it
// has none.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
