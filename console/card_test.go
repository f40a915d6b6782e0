package console

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCardShowsADiffForAnyCallThatReplacesText: the card of a waiting call
// shows a diff from its arguments' shape (a path and the new text), not from
// the tool's name; a call with a path and no new text shows none.
func TestCardShowsADiffForAnyCallThatReplacesText(t *testing.T) {
	s, err := New(Options{Backend: newFake(), Tokens: []Token{{Secret: "t", Name: "a", Role: RoleApprover}}})
	require.NoError(t, err)
	card := func(tool, args string) card {
		return s.newCard(principal{Role: RoleApprover}, "toolround/s/r/1", "s", PendingCall{Tool: tool, CallID: "c", Arguments: args}, "/")
	}

	for _, tool := range []string{"edit_file", "script_patch"} {
		c := card(tool, `{"path":"a.txt","old_text":"one\n","new_text":"two\n"}`)
		require.Equal(t, "a.txt", c.Path, tool)
		require.Equal(t, "the text it replaces, once", c.DiffNote, tool)
		require.NotEmpty(t, c.Diff, tool)
	}
	c := card("edit_file", `{"path":"new.txt","new_text":"x"}`)
	require.Equal(t, "creates or overwrites the file", c.DiffNote)

	for _, args := range []string{`{"path":"a.txt"}`, `{"command":"ls"}`, `not json`} {
		c := card("remove_file", args)
		require.Empty(t, c.Diff, args)
		require.Empty(t, c.Path, args)
	}
}
