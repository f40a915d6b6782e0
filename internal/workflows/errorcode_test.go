package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// W3: a tool failure that carries a code (workspace_full) reaches the
// call's result as error_code; a plain failure carries none.
func TestToolFailureCodeReachesTheResult(t *testing.T) {
	h := newHarness(t, 3)
	h.rec.Fail["edit_file"] = tools.WithCode(tools.CodeWorkspaceFull, errors.New("the workspace is full"))
	h.rec.Fail["read_files"] = errors.New("a: no such file")
	in := input(call("e1", "edit_file", `{"path":"a","new_text":"x"}`), call("r1", "read_files", `{"paths":["a"]}`))
	in.AutoApprove = true
	res := h.run(t, in)
	require.Equal(t, round.StatusError, res.Results[0].Status)
	require.Equal(t, tools.CodeWorkspaceFull, res.Results[0].ErrorCode)
	require.Contains(t, res.Results[0].Content, "the workspace is full")
	require.Equal(t, round.StatusError, res.Results[1].Status)
	require.Empty(t, res.Results[1].ErrorCode)
}
