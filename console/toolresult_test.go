package console

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// Y5: POST /api/v1/tool-results sends a client tool's result; an agent
// token may (the wait is the agent's), a token out of the session's scope
// may not; a stale wait is 409, a bad body 400.
func TestToolResultsY5(t *testing.T) {
	ts, f := newTestServer(t)
	code, body := do(t, ts, "POST", "/api/v1/tool-results", agentToken,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"k1","wait_id":"w1","content":"opened a.go","is_error":true}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, true, body["accepted"])
	require.Equal(t, round.ToolResult{CallID: "k1", WaitID: "w1", Content: "opened a.go", IsError: true}, f.toolResults["toolround/s1/r1/1|k1"])

	code, body = do(t, ts, "POST", "/api/v1/tool-results", agentToken, `{"workflow_id":"toolround/s1/r1/1","call_id":"k1","wait_id":"stale","content":"x"}`)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "stale_wait", body["error"])
	code, body = do(t, ts, "POST", "/api/v1/tool-results", agentToken, `{"workflow_id":"toolround/s1/r1/1","content":"x"}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body["message"], "call_id")
	code, _ = do(t, ts, "POST", "/api/v1/tool-results", agentToken, `{"workflow_id":"toolround/s1/r1/1","call_id":"k1","contents":"x"}`)
	require.Equal(t, http.StatusBadRequest, code, "an unknown field (U8)")
	code, _ = do(t, ts, "POST", "/api/v1/tool-results", "", `{"workflow_id":"toolround/s1/r1/1","call_id":"k1"}`)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = do(t, ts, "POST", "/api/v1/tool-results", agentToken, `{"workflow_id":"agentrun/s1/r1","call_id":"k1"}`)
	require.NotEqual(t, http.StatusOK, code, "only a round's calls wait for a tool result")
}
