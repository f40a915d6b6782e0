package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// everyFake is a fakeBackend in which every round and agent run exists, in
// whatever session its id names: a console that forgot a check would
// answer for it.
type everyFake struct {
	*fakeBackend
	eventSessions []string
}

func (f *everyFake) Round(_ context.Context, id string) (*RoundView, error) {
	return &RoundView{WorkflowID: id, Status: StatusRunning, Pending: f.inbox[0].Pending}, nil
}

func (f *everyFake) Agent(_ context.Context, id string) (*AgentView, error) {
	return &AgentView{AgentStatus: round.AgentStatus{WorkflowID: id, Status: round.AgentRunning}}, nil
}

func (f *everyFake) Inbox(_ context.Context, session string) ([]InboxEntry, error) {
	var out []InboxEntry
	for _, e := range f.inbox {
		if session == "" || e.SessionID == session {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *everyFake) Session(_ context.Context, session string) ([]RoundView, error) {
	id := "toolround/" + session + "/r1/1"
	return []RoundView{{WorkflowID: id, SessionID: session, Status: StatusRunning, Pending: f.inbox[0].Pending}}, nil
}

func (f *everyFake) SendUserMessage(_ context.Context, id, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages[id] = append(f.messages[id], text)
	return nil
}

func (f *everyFake) Events(ctx context.Context, session, after string, ready func(), fn func(round.Event) error) error {
	f.mu.Lock()
	f.eventSessions = append(f.eventSessions, session)
	f.mu.Unlock()
	return f.fakeBackend.Events(ctx, session, after, ready, fn)
}

// touched is everything the fake was asked to change or stream.
func (f *everyFake) touched() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprint(len(f.submitted), f.decisions, f.answers, f.extended, f.cancelled, len(f.agents), f.messages, f.eventSessions)
}

const (
	teamAAgent    = "team-a-agent-0123456789"
	teamAApprover = "team-a-approver-0123456"
	literalAgent  = "literal-agent-012345678"
	wideApprover  = "wide-approver-012345678"
)

// tokensFile is a CONSOLE_TOKENS file with scoped and unscoped tokens.
const tokensFile = `# tenants
team-a-agent-0123456789 bot-a agent sessions=team-a-*
team-a-approver-0123456 alice-a approver sessions=team-a-*,shared
literal-agent-012345678 bot-l agent sessions=team-a
wide-approver-012345678 root approver
`

func newScopedServer(t *testing.T) (*httptest.Server, *everyFake) {
	t.Helper()
	tokens, err := ParseTokens(strings.NewReader(tokensFile))
	require.NoError(t, err)
	now := time.Now()
	f := &everyFake{fakeBackend: newFake()}
	f.inbox = nil
	for i, s := range []string{"team-a-1", "team-b-1", "shared", "team-a", "TEAM-A-1"} {
		f.inbox = append(f.inbox, InboxEntry{WorkflowID: "toolround/" + s + "/r1/1", SessionID: s, Pending: []PendingCall{{
			CallID: "call_" + s, Tool: "write_file", Kind: KindConfirm, Arguments: `{"path":"x"}`,
			Since: now.Add(-time.Duration(i) * time.Second), Deadline: now.Add(time.Hour)}}})
	}
	s, err := New(Options{Backend: f, Tokens: tokens})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, f
}

// otherTenantRounds are ids a team-a-* token must not reach: another
// tenant's, case variations, a pattern's prefix, encoded slashes, dot
// segments and trailing slashes.
var otherTenantRounds = []string{
	"toolround/team-b-1/r1/1",
	"toolround/TEAM-A-1/r1/1",
	"toolround/Team-a-1/r1/1",
	"toolround/team-a/r1/1",
	"toolround/team-a-1%2F..%2Fteam-b-1/r1/1",
	"toolround/team-b-1%2Fx/r1/1",
	"toolround/team-a-1/../team-b-1/r1/1",
	"toolround/team-b-1/r1/1/",
	"toolround/team-b-1/r1/1/x",
	"toolround/team-b-1//r1/1",
	"toolround/./team-b-1/r1/1",
}

func inboxIDs(t *testing.T, ts *httptest.Server, token, query string) []string {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+"/api/v1/inbox"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var entries []InboxEntry
	b, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(b, &entries), string(b))
	ids := []string{}
	for _, e := range entries {
		ids = append(ids, e.WorkflowID)
	}
	return ids
}

// eventsStatus opens a session's event stream and closes it once the
// status is known.
func eventsStatus(t *testing.T, ts *httptest.Server, token, session string) int {
	t.Helper()
	req, err := http.NewRequest("GET", ts.URL+"/api/v1/sessions/"+session+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestScopedTokenReadsOnlyItsSessionsH10(t *testing.T) {
	ts, f := newScopedServer(t)

	code, _ := do(t, ts, "GET", "/api/v1/rounds/toolround/team-a-1/r1/1", teamAAgent, "")
	require.Equal(t, http.StatusOK, code, "its own session's round")
	code, _ = do(t, ts, "GET", "/api/v1/agents/agentrun/team-a-1/r1", teamAAgent, "")
	require.Equal(t, http.StatusOK, code, "its own session's agent run")

	for _, id := range otherTenantRounds {
		code, body := do(t, ts, "GET", "/api/v1/rounds/"+id, teamAAgent, "")
		require.NotEqual(t, http.StatusOK, code, id)
		require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, code, id)
		if code == http.StatusNotFound {
			require.Equal(t, "not_found", body["error"], id)
		}
		agent := strings.Replace(strings.Replace(id, "toolround/", "agentrun/", 1), "/r1/1", "/r1", 1)
		code, _ = do(t, ts, "GET", "/api/v1/agents/"+agent, teamAAgent, "")
		require.NotEqual(t, http.StatusOK, code, agent)
		code, _ = do(t, ts, "POST", "/api/v1/agents/"+agent+"/messages", teamAAgent, `{"text":"hi"}`)
		require.NotEqual(t, http.StatusOK, code, agent)
	}

	// A literal pattern is the whole session, never a prefix.
	code, _ = do(t, ts, "GET", "/api/v1/rounds/toolround/team-a/r1/1", literalAgent, "")
	require.Equal(t, http.StatusOK, code)
	for _, id := range []string{"toolround/team-a-1/r1/1", "toolround/team-ab/r1/1", "toolround/team/r1/1"} {
		code, _ = do(t, ts, "GET", "/api/v1/rounds/"+id, literalAgent, "")
		require.Equal(t, http.StatusNotFound, code, id)
	}

	// The inbox keeps the token's sessions, whatever the filter asks.
	require.ElementsMatch(t, []string{"toolround/team-a-1/r1/1"}, inboxIDs(t, ts, teamAAgent, ""))
	require.Empty(t, inboxIDs(t, ts, teamAAgent, "?session=team-b-1"))
	require.Empty(t, inboxIDs(t, ts, teamAAgent, "?session=TEAM-A-1"))
	require.ElementsMatch(t, []string{"toolround/team-a-1/r1/1", "toolround/shared/r1/1"}, inboxIDs(t, ts, teamAApprover, ""))
	require.Len(t, inboxIDs(t, ts, wideApprover, ""), 5, "an unscoped token sees every session")

	// Another session's events: 403, and no stream is opened.
	for _, s := range []string{"team-b-1", "TEAM-A-1", "team-a", "team-a-1%2F..%2Fteam-b-1", "team-b-1%2F"} {
		code := eventsStatus(t, ts, teamAAgent, s)
		require.Contains(t, []int{http.StatusForbidden, http.StatusBadRequest}, code, s)
	}
	require.Equal(t, http.StatusOK, eventsStatus(t, ts, teamAAgent, "team-a-1"))
	require.Eventually(t, func() bool { return strings.Contains(f.touched(), "[team-a-1]") }, 5*time.Second, 10*time.Millisecond)
	f.mu.Lock()
	f.eventSessions = nil
	f.mu.Unlock()
	require.Equal(t, "0 [] map[] map[] [] 0 map[] []", f.touched())
}

func TestScopedTokenSubmitsOnlyIntoItsSessionsH10(t *testing.T) {
	ts, f := newScopedServer(t)
	into := func(session string) string {
		return strings.Replace(roundBody, `"session_id":"s1"`, `"session_id":"`+session+`"`, 1)
	}
	agentInto := func(session string) string {
		return strings.Replace(agentBody, `"session_id":"s1"`, `"session_id":"`+session+`"`, 1)
	}
	for _, s := range []string{"team-b-1", "TEAM-A-1", "team-a", "xteam-a-1"} {
		code, body := do(t, ts, "POST", "/api/v1/rounds", teamAAgent, into(s))
		require.Equal(t, http.StatusForbidden, code, s)
		require.Equal(t, "forbidden", body["error"])
		code, _ = do(t, ts, "POST", "/api/v1/rounds?wait=1", teamAAgent, into(s))
		require.Equal(t, http.StatusForbidden, code, s)
		code, _ = do(t, ts, "POST", "/api/v1/agents", teamAAgent, agentInto(s))
		require.Equal(t, http.StatusForbidden, code, s)
	}
	require.Equal(t, "0 [] map[] map[] [] 0 map[] []", f.touched())

	code, body := do(t, ts, "POST", "/api/v1/rounds", teamAAgent, into("team-a-7"))
	require.Equal(t, http.StatusAccepted, code, body)
	code, body = do(t, ts, "POST", "/api/v1/agents", teamAAgent, agentInto("team-a-7"))
	require.Equal(t, http.StatusAccepted, code, body)
	code, _ = do(t, ts, "POST", "/api/v1/rounds", wideApprover, into("team-b-1"))
	require.Equal(t, http.StatusAccepted, code, "an unscoped token submits anywhere")
}

// actions are the approver's verbs on a round id (cancel also takes an
// agent run's).
func actions(id string) map[string]string {
	return map[string]string{
		"/api/v1/approvals": `{"workflow_id":"` + id + `","call_id":"c1","approve":true}`,
		"/api/v1/answers":   `{"workflow_id":"` + id + `","call_id":"c1","answers":["yes"]}`,
		"/api/v1/extend":    `{"workflow_id":"` + id + `","call_id":"c1","seconds":60}`,
		"/api/v1/cancel":    `{"workflow_id":"` + id + `"}`,
	}
}

func TestScopedApproverDecidesOnlyItsSessionsH10(t *testing.T) {
	ts, f := newScopedServer(t)
	others := append([]string{"agentrun/team-b-1/r1", "agentrun/TEAM-A-1/r1"}, otherTenantRounds...)
	for _, id := range others {
		for path, body := range actions(strings.ReplaceAll(id, "%2F", "/")) {
			code, out := do(t, ts, "POST", path, teamAApprover, body)
			require.Equal(t, http.StatusNotFound, code, "%s %s", path, id)
			require.Equal(t, "not_found", out["error"], "%s %s", path, id)
		}
	}
	require.Equal(t, "0 [] map[] map[] [] 0 map[] []", f.touched(), "nothing reached the backend")

	for path, body := range actions("toolround/shared/r1/1") {
		code, out := do(t, ts, "POST", path, teamAApprover, body)
		require.Equal(t, http.StatusOK, code, "%s: %v", path, out)
	}
	code, _ := do(t, ts, "POST", "/api/v1/cancel", teamAApprover, `{"workflow_id":"agentrun/team-a-2/r1"}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"toolround/shared/r1/1", "agentrun/team-a-2/r1"}, f.cancelled)
}

func TestScopedTokenOnThePageH10(t *testing.T) {
	ts, f := newScopedServer(t)
	c := browser(t)
	csrf := signIn(t, ts, c, teamAApprover)
	get := func(path string) (int, string) {
		resp, err := c.Get(ts.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get("/")
	require.Equal(t, http.StatusOK, code)
	card := func(s string) string { return `data-card="toolround/` + s + `/r1/1|call_` + s + `"` }
	require.Contains(t, page, card("team-a-1"))
	require.Contains(t, page, card("shared"))
	for _, other := range []string{"team-b-1", "team-a", "TEAM-A-1"} {
		require.NotContains(t, page, card(other))
	}
	_, page = get("/?session=team-b-1")
	require.NotContains(t, page, card("team-b-1"))

	for _, path := range []string{"/sessions/team-b-1", "/sessions/TEAM-A-1", "/calls/toolround/team-b-1/r1/1?call=c1", "/calls/toolround/team-a/r1/1?call=c1"} {
		code, page = get(path)
		require.Equal(t, http.StatusNotFound, code, path)
		require.NotContains(t, page, "team-b-1/r1/1\"", path)
	}
	code, _ = get("/sessions/team-a-1")
	require.Equal(t, http.StatusOK, code)

	// The signed-in session carries the scope into the actions.
	form := url.Values{"csrf": {csrf}, "workflow_id": {"toolround/team-b-1/r1/1"}, "call_id": {"c1"}, "decision": {"approve"}, "return": {"/"}}
	resp, err := c.PostForm(ts.URL+"/api/v1/approvals", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, err = c.PostForm(ts.URL+"/api/v1/cancel", url.Values{"csrf": {csrf}, "workflow_id": {"toolround/team-b-1/r1/1"}, "return": {"/"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "0 [] map[] map[] [] 0 map[] []", f.touched())
}

func TestParseTokensSessionPatterns(t *testing.T) {
	ts, err := ParseTokens(strings.NewReader(tokensFile))
	require.NoError(t, err)
	require.Len(t, ts, 4)
	for _, bad := range []string{
		"sessions=", "sessions=a,,b", "sessions=,a", "sessions=[a", "sessions=a/b", "sessions=a\\*",
		"session=a", "sessions=a sessions=b", "sessions=[!a]*", "sessions=team-a-*/x", "extra", "sessions=a b", "sessions=a:b", "SESSIONS=a",
	} {
		_, err := ParseTokens(strings.NewReader("abcdefghijklmnop alice approver\nqrstuvwxyz012345 bot agent " + bad + "\n"))
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "line 2", bad)
		require.NotContains(t, err.Error(), "\n", "one line")
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	ts, _ := newTestServer(t)
	for _, h := range []string{"Bearer ", "bearer ", "BEARER ", "bEaReR ", "Bearer   "} {
		req, err := http.NewRequest("GET", ts.URL+"/api/v1/inbox", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", h+agentToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%q", h)
	}
	for _, h := range []string{"Bearerx " + agentToken, "Basic " + agentToken, agentToken, "Bearer", "Bearer " + agentToken + "x"} {
		req, err := http.NewRequest("GET", ts.URL+"/api/v1/inbox", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", h)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%q", h)
	}
}

// TestConsoleActsOnlyOnItsIDShapes: ids that are not the console's round
// or agent-run shapes are refused by every verb before the backend hears
// of them.
func TestConsoleActsOnlyOnItsIDShapes(t *testing.T) {
	f := &everyFake{fakeBackend: newFake()}
	s, err := New(Options{Backend: f, Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	bad := []string{
		"unrelated-workflow", "bench/1", "temporal-sys-scheduler:x", "toolround/s1/r1", "toolround/s1/r1/1/2",
		"toolround/s1/r1/01", "toolround/s1/r1/-1", "toolround/s1/r1/x", "toolround//r1/1", "toolround/s1/../1",
		"Toolround/s1/r1/1", "toolround/.s1/r1/1", "toolround/s1/r1/1 ", " toolround/s1/r1/1", "toolround/s1/r\x001/1",
		"workspace/s1", "notify/w1/x", "agentrun/s1", "agentrun/s1/r1/x", "AgentRun/s1/r1", "agentrun/s1/-r1",
	}
	for _, id := range bad {
		for path, body := range actions(id) {
			b, _ := json.Marshal(id)
			body = strings.Replace(body, `"`+id+`"`, string(b), 1)
			code, out := do(t, ts, "POST", path, approverToken, body)
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, code, "%s %q", path, id)
			require.NotEmpty(t, out["error"])
		}
		if !strings.ContainsAny(id, " \x00") {
			code, _ := do(t, ts, "GET", "/api/v1/rounds/"+id, approverToken, "")
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, code, id)
			code, _ = do(t, ts, "GET", "/api/v1/agents/"+id, approverToken, "")
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, code, id)
			code, _ = do(t, ts, "POST", "/api/v1/agents/"+id+"/messages", approverToken, `{"text":"hi"}`)
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, code, id)
		}
	}
	// Verbs of one kind refuse the other kind's ids.
	for _, path := range []string{"/api/v1/approvals", "/api/v1/answers", "/api/v1/extend"} {
		code, _ := do(t, ts, "POST", path, approverToken, actions("agentrun/s1/r1")[path])
		require.Equal(t, http.StatusNotFound, code, path)
	}
	code, _ := do(t, ts, "GET", "/api/v1/agents/toolround/s1/r1/1", approverToken, "")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = do(t, ts, "POST", "/api/v1/agents/toolround/s1/r1/1/messages", approverToken, `{"text":"hi"}`)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = do(t, ts, "GET", "/api/v1/rounds/agentrun/s1/r1", approverToken, "")
	require.Equal(t, http.StatusNotFound, code)
	for _, s := range []string{"s1%2Fx", "..", ".s1", "a:b"} {
		code = eventsStatus(t, ts, approverToken, s)
		require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, code, s)
		code, _ = do(t, ts, "GET", "/api/v1/inbox?session="+s, approverToken, "")
		require.Equal(t, http.StatusBadRequest, code, s)
	}
	require.Equal(t, "0 [] map[] map[] [] 0 map[] []", f.touched(), "nothing reached the backend")
}

// TestCSRFWhateverTheContentType: a cookie-authenticated request that
// changes state needs the CSRF token whatever its Content-Type says (JSON,
// text/plain, none, a form), on every such endpoint; with the token it
// passes.
func TestCSRFWhateverTheContentType(t *testing.T) {
	ts, f := newTestServer(t)
	c := browser(t)
	csrf := signIn(t, ts, c, approverToken)
	bodies := actions("toolround/s1/r1/1")
	bodies["/api/v1/rounds"] = roundBody
	bodies["/api/v1/agents"] = agentBody
	bodies["/api/v1/agents/agentrun/s1/live/messages"] = `{"text":"hi"}`
	for path, body := range bodies {
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "text/plain", "text/plain;charset=UTF-8", "", "application/octet-stream", "APPLICATION/JSON"} {
			for _, token := range []string{"", otherToken(csrf), csrf[:len(csrf)-1]} {
				req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
				require.NoError(t, err)
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				if token != "" {
					req.Header.Set("X-CSRF-Token", token)
				}
				resp, err := c.Do(req)
				require.NoError(t, err)
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %q token %q: %s", path, ct, token, out)
				require.Contains(t, string(out), `"csrf"`)
			}
		}
	}
	require.Empty(t, f.submitted)
	require.Empty(t, f.decisions)
	require.Empty(t, f.answers)
	require.Empty(t, f.extended)
	require.Empty(t, f.cancelled)
	require.Empty(t, f.agents)
	require.Empty(t, f.messages)

	// With the token the same requests pass.
	for path, body := range bodies {
		req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("X-CSRF-Token", csrf)
		resp, err := c.Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NotEqual(t, http.StatusForbidden, resp.StatusCode, "%s: %s", path, out)
	}
	require.NotEmpty(t, f.cancelled)
	require.NotEmpty(t, f.submitted)
}
