package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// Y5: a client tool's result by the tool_result update. Its validator
// refuses, before anything is recorded, a call that does not wait for a
// result and another wait's wait_id; the right one completes the call.
func TestClientToolResultByTheUpdateY5(t *testing.T) {
	h := newHarness(t, 3)
	send := func(id string, r round.ToolResult) *updateResult {
		u := &updateResult{}
		h.env.UpdateWorkflow(names.UpdateToolResult, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { u.rejected = err }, OnAccept: func() { u.accepted = true }, OnComplete: func(any, error) {},
		}, r)
		return u
	}
	var unknown, notClient, stale, ok *updateResult
	var pend []round.Pending
	h.at(time.Second, func() {
		pend = h.pending(t)
		unknown = send("u1", round.ToolResult{CallID: "nosuch", Content: "x"})
		notClient = send("u2", round.ToolResult{CallID: "c1", Content: "x"})
		stale = send("u3", round.ToolResult{CallID: "k1", WaitID: "stale", Content: "x"})
		ok = send("u4", round.ToolResult{CallID: "k1", WaitID: pend[0].WaitID, Content: "opened a.go", IsError: true})
	})
	in := input(call("k1", "ide_open", `{"file":"a.go"}`), call("c1", "calculate", `{"expression":"1"}`))
	in.ClientTools = []tools.ToolSpec{{Type: "function", Function: tools.FunctionSpec{Name: "ide_open", Parameters: []byte(`{"type":"object"}`)}}}
	res := h.run(t, in)
	require.Len(t, pend, 1)
	require.Equal(t, round.KindToolResult, pend[0].Kind)
	require.NotEmpty(t, pend[0].WaitID, "every wait has a wait_id (B1)")
	require.Equal(t, string(round.CodeNotWaiting), errType(unknown.rejected))
	require.Equal(t, string(round.CodeNotWaiting), errType(notClient.rejected))
	require.Equal(t, string(round.CodeStaleWait), errType(stale.rejected))
	require.NoError(t, ok.rejected)
	require.True(t, ok.accepted)
	require.Equal(t, round.StatusError, res.Results[0].Status, "is_error is the call's result")
	require.Contains(t, res.Results[0].Content, "opened a.go")
	require.Empty(t, eventsOf(res, round.EventSignalIgnored), "a refused update records nothing")
}
