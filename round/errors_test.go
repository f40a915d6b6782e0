package round

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestErrorsMatchOnTheirCode(t *testing.T) {
	sentinel := &Error{Code: CodeNotWaiting, Message: "the call does not wait for a decision"}
	cause := errors.New("the round's explanation")
	err := fmt.Errorf("confirm c1 of wf: %w", &Error{Code: CodeNotWaiting, Message: "refused", Err: cause})
	require.ErrorIs(t, err, sentinel, "another *Error of the same code")
	require.ErrorIs(t, err, cause, "its cause")
	require.NotErrorIs(t, err, &Error{Code: CodeStaleApproval})
	require.Equal(t, CodeNotWaiting, CodeOf(err))
	require.Equal(t, ErrorCode(""), CodeOf(cause))

	err = Errorf(CodeBadRequest, "invalid round input: %w", cause)
	require.Equal(t, "invalid round input: the round's explanation", err.Error(), "the text of fmt.Errorf")
	require.ErrorIs(t, err, cause)
	require.ErrorIs(t, err, &Error{Code: CodeBadRequest})
	require.Equal(t, "not_found", (&Error{Code: CodeNotFound}).Error(), "without a message, the code")

	// The validator's application error types are the codes.
	require.Equal(t, []ErrorCode{"not_waiting", "stale_approval", "invalid_args"}, []ErrorCode{CodeNotWaiting, CodeStaleApproval, CodeInvalidArgs})

	// An unknown field is an invalid input (U8).
	unknown := &UnknownFieldError{Field: "sesion_id", What: "the round input"}
	require.ErrorIs(t, fmt.Errorf("parse: %w", unknown), ErrUnknownField)
	require.ErrorIs(t, unknown, &Error{Code: CodeInvalidInput})
	require.NotErrorIs(t, unknown, &Error{Code: CodeBadRequest})
}

// TestPendingShape: the waiting call's JSON, as the client (with its
// workflow id) and the console (under its round, without) write it.
func TestPendingShape(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := Pending{WorkflowID: "toolround/s/r/1", CallID: "c1", Tool: "edit_file", Kind: KindConfirm, Arguments: `{"path":"a"}`, ApprovalID: "ab",
		Subject: "a", Reason: "edits", Reasons: []string{"edits a"}, Since: at, Deadline: at.Add(time.Hour)}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	require.Equal(t, `{"workflow_id":"toolround/s/r/1","call_id":"c1","tool":"edit_file","kind":"confirm","arguments":"{\"path\":\"a\"}","approval_id":"ab",`+
		`"subject":"a","reason":"edits","reasons":["edits a"],"since":"2026-01-02T03:04:05Z","deadline":"2026-01-02T04:04:05Z"}`, string(b))
	p.WorkflowID = ""
	b, err = json.Marshal(p)
	require.NoError(t, err)
	require.Equal(t, `{"call_id":"c1","tool":"edit_file","kind":"confirm","arguments":"{\"path\":\"a\"}","approval_id":"ab",`+
		`"subject":"a","reason":"edits","reasons":["edits a"],"since":"2026-01-02T03:04:05Z","deadline":"2026-01-02T04:04:05Z"}`, string(b))
	require.Equal(t, []string{"edits a"}, p.Why())
	p.Reasons = nil
	require.Equal(t, []string{"edits"}, p.Why())
	require.True(t, p.NeedsDecision())
	p.Kind = KindAnswer
	require.False(t, p.NeedsDecision())
}
