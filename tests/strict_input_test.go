package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestStarterRefusesUnknownFieldsU8: a misspelt field of a round input is
// refused before anything starts (exit 2, the field and the closest known
// name), so the same round number then runs, corrected (U8).
func TestStarterRefusesUnknownFieldsU8(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	good := mustJSON(t, e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}})))

	for _, c := range []struct{ from, to, line string }{
		{`"assistant":`, `"asistant":`, `starter: unknown field "asistant" in the round input; did you mean "assistant"?`},
		{`"tool_calls":`, `"tool_call":`, `starter: unknown field "tool_call" in assistant of the round input; did you mean "tool_calls"?`},
		{`"arguments":`, `"args":`, `starter: unknown field "args" in assistant.tool_calls[0].function of the round input`},
		// Names match exactly and once, though encoding/json folds case and keeps the last.
		{`"assistant":`, `"Session_ID":"other","assistant":`, `starter: unknown field "Session_ID" in the round input; did you mean "session_id"?`},
		{`"assistant":`, `"round":2,"assistant":`, `starter: duplicate field "round" in the round input`},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		require.NotEqual(t, good, bad)
		// Refused at once, before it looks for a worker (there is none yet).
		bctx, bcancel := context.WithTimeout(ctx, 15*time.Second)
		r := e.starter(bctx, bad, "round", "-")
		bcancel()
		require.Equal(t, 2, r.code, r.stderr)
		require.Equal(t, c.line, strings.TrimSpace(r.stderr))
		require.Empty(t, r.stdout)
	}
	// Nothing was started: no round of that number exists.
	wfID := names.WorkflowID(e.session, "run-1", 1)
	r := e.starter(ctx, "", "pending", wfID)
	require.Contains(t, r.stderr, "does not exist yet")

	e.startWorker()
	r = e.starter(ctx, good, "round", "-")
	res := decodeResult(t, r)
	require.Equal(t, wfID, res.WorkflowID)
	require.Len(t, res.Results, 1)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
}

// TestConsoleRefusesUnknownFieldsU8: through bin/console, a misspelt field
// of a round or a decision is 400 invalid_input with the closest known
// name, and the same round number is then taken, corrected (U8).
func TestConsoleRefusesUnknownFieldsU8(t *testing.T) {
	e := newEnv(t)
	c := e.startConsole()
	good := mustJSON(t, e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}})))
	wfID := names.WorkflowID(e.session, "run-1", 1)
	for _, bad := range []struct{ path, body, want string }{
		{"/api/v1/rounds", strings.Replace(good, `"assistant":`, `"asistant":`, 1),
			`unknown field "asistant" in the round input; did you mean "assistant"?`},
		{"/api/v1/rounds", strings.Replace(good, `"name":`, `"nmae":`, 1),
			`unknown field "nmae" in assistant.tool_calls[0].function of the round input; did you mean "name"?`},
		{"/api/v1/approvals", `{"workflow_id":"` + wfID + `","call_id":"t1","aprove":true}`,
			`unknown field "aprove" in the request; did you mean "approve"?`},
		{"/api/v1/cancel", `{"workflow_id":"` + wfID + `","reason":"x"}`, `unknown field "reason" in the request`},
	} {
		r := c.call(t, "POST", bad.path, c.approver, bad.body)
		require.Equal(t, http.StatusBadRequest, r.code, string(r.body))
		require.Equal(t, "invalid_input", r.errorCode(t))
		var msg struct {
			Message string `json:"message"`
		}
		r.json(t, &msg)
		require.Contains(t, msg.Message, bad.want)
	}
	r := c.call(t, "GET", "/api/v1/rounds/"+wfID, c.approver, nil)
	require.Equal(t, http.StatusNotFound, r.code, "nothing was started: %s", r.body)

	r = c.call(t, "POST", "/api/v1/rounds", c.agent, good)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
}
