package console

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestBadLimitsAre400 (B1): a round or an agent run whose limits are
// negative, zero, past 10^9 or misspelt is refused with 400 bad_request
// (a misspelt one U8's invalid_input) naming the limit, and starts
// nothing; limits in bounds are taken.
func TestBadLimitsAre400(t *testing.T) {
	ts, f := newTestServer(t)
	for _, limits := range []string{`{"max_calls":-1}`, `{"max_commands":0}`, `{"max_seconds":1000000001}`, `{"max_model_tokens":-5}`, `{"max_cals":5}`, `{"max_writes":"5"}`} {
		body := strings.Replace(roundBody, `"session_id"`, `"limits":`+limits+`,"session_id"`, 1)
		code, out := do(t, ts, "POST", "/api/v1/rounds", agentToken, body)
		require.Equal(t, http.StatusBadRequest, code, limits)
		require.Contains(t, []any{"bad_request", "invalid_input"}, out["error"], limits) // a misspelt field is U8's invalid_input
		require.Contains(t, out["message"], "max_", limits)

		body = strings.Replace(agentBody, `"session_id"`, `"limits":`+limits+`,"session_id"`, 1)
		code, out = do(t, ts, "POST", "/api/v1/agents", agentToken, body)
		require.Equal(t, http.StatusBadRequest, code, limits)
		require.Contains(t, []any{"bad_request", "invalid_input"}, out["error"], limits)
		require.Contains(t, out["message"], "max_", limits)
	}
	require.Empty(t, f.submitted)
	require.Empty(t, f.agents)

	good := `{"max_calls":1000000000,"max_model_tokens":1}`
	code, out := do(t, ts, "POST", "/api/v1/agents", agentToken, strings.Replace(agentBody, `"session_id"`, `"limits":`+good+`,"session_id"`, 1))
	require.Equal(t, http.StatusAccepted, code, out)
	require.Equal(t, &round.Limits{MaxCalls: 1_000_000_000, MaxModelTokens: 1}, f.agents[0].Limits)
}

// TestLimitWaitShowsItsCounts (B1): a call past a limit is in the inbox,
// the API's and the page's, with its reasons, its wait id and each limit
// with its count; its card offers only approve past the limit or deny.
func TestLimitWaitShowsItsCounts(t *testing.T) {
	ts, b := newTestServer(t)
	now := time.Now()
	b.inbox[0].Pending = []PendingCall{{CallID: "call_9", Tool: "calculate", Kind: round.KindLimit, ApprovalID: "ap9", WaitID: "w9",
		Arguments: `{"expression":"3+3"}`, Reasons: []string{"past max_calls: the run made 2 calls (limit 2)"},
		Limits: []round.LimitCount{{Limit: round.LimitCalls, Count: 2, Max: 2}, {Limit: round.LimitWrites, Count: 0, Max: 5}},
		Since:  now.Add(-time.Minute), Deadline: now.Add(time.Hour)}}

	req, _ := http.NewRequest("GET", ts.URL+"/api/v1/inbox", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var entries []map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&entries))
	resp.Body.Close()
	require.Len(t, entries, 1)
	p := entries[0]["pending"].([]any)[0].(map[string]any)
	require.Equal(t, "limit", p["kind"])
	require.Equal(t, "w9", p["wait_id"])
	require.Equal(t, []any{map[string]any{"limit": "max_calls", "count": float64(2), "max": float64(2)},
		map[string]any{"limit": "max_writes", "count": float64(0), "max": float64(5)}}, p["limits"])

	c := browser(t)
	signIn(t, ts, c, approverToken)
	resp, err = c.Get(ts.URL + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), "past max_calls: the run made 2 calls (limit 2)")
	require.Contains(t, string(page), "<code>max_calls</code> 2 of 2")
	require.Contains(t, string(page), "<code>max_writes</code> 0 of 5")
	require.Contains(t, string(page), `name="wait_id" value="w9"`)
	require.Contains(t, string(page), "Approve past the limit")
	require.NotContains(t, string(page), `name="remember"`, "remember is refused on a limit wait")
}

// TestSessionPageShowsAnAgentRunsLimits (B1): the session's page shows an
// agent run's limits with their counts, and why it ended limit_reached.
func TestSessionPageShowsAnAgentRunsLimits(t *testing.T) {
	ts, b := newTestServer(t)
	b.moreAgents = []AgentView{{AgentStatus: round.AgentStatus{WorkflowID: "agentrun/s1/limited", Status: round.AgentLimitReached, Round: 2, ModelCalls: 3,
		Reason: "past max_model_tokens: the run is at 150 model tokens (limit 120)",
		Limits: []round.LimitCount{{Limit: round.LimitCalls, Count: 3, Max: 10}, {Limit: round.LimitModelTokens, Count: 150, Max: 120}}}}}
	c := browser(t)
	signIn(t, ts, c, agentToken)
	resp, err := c.Get(ts.URL + "/sessions/s1")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), "agentrun/s1/limited")
	require.Contains(t, string(page), "limit_reached")
	require.Contains(t, string(page), "past max_model_tokens: the run is at 150 model tokens (limit 120)")
	require.Contains(t, string(page), "<code>max_calls</code> 3 of 10")
	require.Contains(t, string(page), "<code>max_model_tokens</code> 150 of 120")
}
