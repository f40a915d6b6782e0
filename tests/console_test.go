package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

var (
	consoleBuild sync.Once
	consoleBin   string
	consoleErr   error
)

// buildConsole builds bin/console once per test binary, beside the worker
// and starter that TestMain builds.
func buildConsole(t *testing.T) string {
	t.Helper()
	consoleBuild.Do(func() {
		consoleBin = filepath.Join(binDir, "console")
		out, err := exec.Command("go", "build", "-o", consoleBin, "../cmd/console").CombinedOutput()
		if err != nil {
			consoleErr = fmt.Errorf("build console: %v\n%s", err, out)
		}
	})
	require.NoError(t, consoleErr)
	return consoleBin
}

// console is a running bin/console with an approver and an agent token.
type consoleProc struct {
	url      string
	approver string
	agent    string
	logs     *syncBuffer
}

var listening = regexp.MustCompile(`console listening on (http://\S+)`)

func (e *env) startConsole() *consoleProc {
	e.t.Helper()
	return e.startConsoles(1)[0]
}

// newConsoleEnv is newEnv with a worker and a console running.
func newConsoleEnv(t *testing.T, extra ...string) (*env, *consoleProc) {
	t.Helper()
	e := newEnv(t, extra...)
	e.startWorker()
	return e, e.startConsole()
}

// startConsoles starts n consoles that share one tokens file (alice the
// approver, bot the agent) and the extra environment, as replicas behind
// one address run (O3).
func (e *env) startConsoles(n int, extra ...string) []*consoleProc {
	e.t.Helper()
	approver, agent := "approver-"+fmt.Sprint(time.Now().UnixNano()), "agent-"+fmt.Sprint(time.Now().UnixNano())
	tokens := filepath.Join(e.t.TempDir(), "tokens")
	require.NoError(e.t, os.WriteFile(tokens, []byte(approver+" alice approver\n"+agent+" bot agent\n"), 0o600))
	var out []*consoleProc
	for range n {
		c := &consoleProc{approver: approver, agent: agent, logs: &syncBuffer{}}
		e.runConsole(c, append([]string{"CONSOLE_TOKENS=" + tokens}, extra...))
		out = append(out, c)
	}
	return out
}

// runConsole starts the console binary for c and waits until it listens.
func (e *env) runConsole(c *consoleProc, extra []string) {
	e.t.Helper()
	bin := buildConsole(e.t)
	cmd := exec.Command(bin)
	cmd.Env = append(append(e.environ(), "CONSOLE_ADDR=127.0.0.1:0"), extra...)
	cmd.Stdout, cmd.Stderr = c.logs, c.logs
	startUntilCleanup(e.t, cmd, "console log", c.logs.String)
	require.Eventually(e.t, func() bool {
		m := listening.FindStringSubmatch(c.logs.String())
		if m == nil {
			return false
		}
		c.url = strings.TrimSuffix(m[1], "/")
		consoleHosts.Add(c.url)
		return true
	}, 30*time.Second, 20*time.Millisecond, "console did not start:\n%s", c.logs.String())
}

type apiReply struct {
	code int
	body []byte
}

func (r apiReply) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), string(r.body))
}

func (r apiReply) errorCode(t *testing.T) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	r.json(t, &e)
	return e.Error
}

// call makes an API request with a bearer token ("" for none).
func (c *consoleProc) call(t *testing.T, method, path, token string, body any) apiReply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return apiReply{code: resp.StatusCode, body: b}
}

// pendingOf waits until the round lists the call as pending.
func (c *consoleProc) pendingOf(t *testing.T, wfID, callID string) map[string]any {
	t.Helper()
	var found map[string]any
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/rounds/"+wfID, c.agent, nil)
		if r.code != http.StatusOK {
			return false
		}
		var v struct {
			Status  string           `json:"status"`
			Pending []map[string]any `json:"pending"`
		}
		if json.Unmarshal(r.body, &v) != nil || v.Status != "running" {
			return false
		}
		for _, p := range v.Pending {
			if p["call_id"] == callID {
				found = p
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond)
	return found
}

// waitInbox waits until the session's inbox lists n waiting calls
// (visibility may lag a round's start).
func (c *consoleProc) waitInbox(t *testing.T, session string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/inbox?session="+session, c.agent, nil)
		var inbox []struct {
			Pending []json.RawMessage `json:"pending"`
		}
		if r.code != http.StatusOK || json.Unmarshal(r.body, &inbox) != nil {
			return false
		}
		got := 0
		for _, e := range inbox {
			got += len(e.Pending)
		}
		return got == n
	}, 30*time.Second, 50*time.Millisecond)
}

// resultOf waits for the round's result through GET /api/v1/rounds.
func (c *consoleProc) resultOf(t *testing.T, wfID string) round.Result {
	t.Helper()
	var res round.Result
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/rounds/"+wfID, c.agent, nil)
		if r.code != http.StatusOK || !bytes.Contains(r.body, []byte(`"results"`)) {
			return false
		}
		return json.Unmarshal(r.body, &res) == nil
	}, 60*time.Second, 50*time.Millisecond)
	return res
}

// sse reads a session's event stream in the background.
type sse struct {
	mu     sync.Mutex
	events []round.Event
	ready  chan struct{}
}

func (c *consoleProc) stream(t *testing.T, session string) *sse {
	t.Helper()
	return c.streamAfter(t, session, "")
}

// streamAfter reads the stream from after the event with the id after, as
// a reconnecting EventSource does.
func (c *consoleProc) streamAfter(t *testing.T, session, after string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", c.url+"/api/v1/sessions/"+session+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.agent)
	if after != "" {
		req.Header.Set("Last-Event-ID", after)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{ready: make(chan struct{})}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		readyOnce := sync.OnceFunc(func() { close(s.ready) })
		for sc.Scan() {
			line := sc.Text()
			if line == ": ready" {
				readyOnce()
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var ev round.Event
				if json.Unmarshal([]byte(d), &ev) == nil {
					s.mu.Lock()
					s.events = append(s.events, ev)
					s.mu.Unlock()
				}
			}
		}
	}()
	select {
	case <-s.ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not get ready")
	}
	return s
}

func (s *sse) has(typ, callID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		if e.Type == typ && (callID == "" || e.CallID == callID) {
			return true
		}
	}
	return false
}

func editRound(e *env, n int, callID, path, oldText, newText string) round.Input {
	args := map[string]any{"path": path, "new_text": newText}
	if oldText != "" {
		args["old_text"] = oldText
	}
	return e.input(n, "claude-code", &round.RunState{Fetched: allTools}, call(callID, "edit_file", args))
}

// TestConsoleAPI drives every endpoint of the HTTP API (H1..H8) against the
// real console, worker, Temporal server and Redis, with every error status.
func TestConsoleAPI(t *testing.T) {
	e, c := newConsoleEnv(t)
	notes := filepath.Join(e.workdir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("one\ntwo\n"), 0o644))

	// H1: no token, a wrong token: 401 on every endpoint.
	for _, ep := range [][2]string{
		{"POST", "/api/v1/rounds"}, {"GET", "/api/v1/rounds/toolround/x/y/1"}, {"GET", "/api/v1/inbox"},
		{"POST", "/api/v1/approvals"}, {"POST", "/api/v1/answers"}, {"POST", "/api/v1/extend"},
		{"POST", "/api/v1/cancel"}, {"POST", "/api/v1/agents"}, {"GET", "/api/v1/agents/agentrun/x/y"},
		{"POST", "/api/v1/agents/agentrun/x/y/messages"},
		{"GET", "/api/v1/sessions/" + e.session + "/events"},
	} {
		for _, tok := range []string{"", "not-a-token-of-this-console"} {
			r := c.call(t, ep[0], ep[1], tok, "{}")
			require.Equal(t, http.StatusUnauthorized, r.code, "%v %q", ep, tok)
			require.Equal(t, "unauthorized", r.errorCode(t))
		}
	}

	// H2: bad input 400, too large 413, auto_approve from an agent 403.
	r := c.call(t, "POST", "/api/v1/rounds", c.agent, `{"session_id":`)
	require.Equal(t, http.StatusBadRequest, r.code)
	require.Equal(t, "bad_request", r.errorCode(t))
	big := e.input(90, "openai", nil, call("c1", "calculate", map[string]any{"expression": strings.Repeat("1+", 800<<10) + "1"}))
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.code, string(r.body))
	require.Equal(t, "too_large", r.errorCode(t))
	auto := editRound(e, 91, "e1", "auto.txt", "", "x")
	auto.AutoApprove = true
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, auto)
	require.Equal(t, http.StatusForbidden, r.code)
	_, err := os.Stat(filepath.Join(e.workdir, "auto.txt"))
	require.True(t, os.IsNotExist(err), "nothing ran")

	// H2 ?wait=1: the result as `starter round` prints it.
	calc := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, call("c1", "calculate", map[string]any{"expression": "6*7"}))
	r = c.call(t, "POST", "/api/v1/rounds?wait=1", c.agent, calc)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var res round.Result
	r.json(t, &res)
	require.Equal(t, calc.WorkflowID(), res.WorkflowID)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Contains(t, res.Results[0].Content, "42")
	// The same round id with another input: 409.
	calc.Assistant.ToolCalls[0] = call("c1", "calculate", map[string]any{"expression": "1+1"})
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, calc)
	require.Equal(t, http.StatusConflict, r.code)
	require.Equal(t, "input_mismatch", r.errorCode(t))

	// A round that waits for an approval, watched through the event stream.
	events := c.stream(t, e.session)
	in := editRound(e, 2, "e1", "notes.txt", "two", "2")
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, in)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	var started struct {
		WorkflowID string `json:"workflow_id"`
	}
	r.json(t, &started)
	wfID := started.WorkflowID
	require.Equal(t, in.WorkflowID(), wfID)
	p := c.pendingOf(t, wfID, "e1")
	approvalID, _ := p["approval_id"].(string)

	// H3: running, with pending and progress.
	r = c.call(t, "GET", "/api/v1/rounds/"+wfID, c.agent, nil)
	var running struct {
		Status   string            `json:"status"`
		Pending  []json.RawMessage `json:"pending"`
		Progress map[string]any    `json:"progress"`
	}
	r.json(t, &running)
	require.Equal(t, "running", running.Status)
	require.Len(t, running.Pending, 1)
	require.NotEmpty(t, running.Progress)
	r = c.call(t, "GET", "/api/v1/rounds/toolround/"+e.session+"/none/1", c.agent, nil)
	require.Equal(t, http.StatusNotFound, r.code)
	require.Equal(t, "not_found", r.errorCode(t))

	// H4: the inbox lists it.
	c.waitInbox(t, e.session, 1)
	r = c.call(t, "GET", "/api/v1/inbox?session="+e.session, c.agent, nil)
	require.Equal(t, http.StatusOK, r.code)
	var inbox []struct {
		WorkflowID string           `json:"workflow_id"`
		SessionID  string           `json:"session_id"`
		Pending    []map[string]any `json:"pending"`
	}
	r.json(t, &inbox)
	require.Len(t, inbox, 1)
	require.Equal(t, wfID, inbox[0].WorkflowID)
	require.Equal(t, e.session, inbox[0].SessionID)
	require.Equal(t, "edit_file", inbox[0].Pending[0]["tool"])
	r = c.call(t, "GET", "/api/v1/inbox", c.agent, nil)
	require.Equal(t, http.StatusOK, r.code)
	require.Contains(t, string(r.body), wfID, "the inbox across sessions has it too")

	// H5 errors: agents may not decide (403); unknown call 404; bad
	// edited arguments 400; a stale approval_id 409; nothing runs.
	decision := map[string]any{"workflow_id": wfID, "call_id": "e1", "approval_id": approvalID, "approve": true}
	r = c.call(t, "POST", "/api/v1/approvals", c.agent, decision)
	require.Equal(t, http.StatusForbidden, r.code)
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": "ghost", "approve": true})
	require.Equal(t, http.StatusNotFound, r.code)
	require.Equal(t, "not_waiting", r.errorCode(t))
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e1", "approve": true, "args": []int{1}})
	require.Equal(t, http.StatusBadRequest, r.code)
	require.Equal(t, "invalid_args", r.errorCode(t))
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, `{"workflow_id":`)
	require.Equal(t, http.StatusBadRequest, r.code)
	if approvalID != "" {
		r = c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e1", "approval_id": "0" + approvalID[1:] + "0", "approve": true})
		require.Equal(t, http.StatusConflict, r.code, string(r.body))
		require.Equal(t, "stale_approval", r.errorCode(t))
	} else {
		t.Log("the worker's pending list has no approval_id yet: the 409 stale_approval check waits for it (the unit tests cover the mapping)")
	}
	// H6 on a call that waits for a decision, not an answer: 404.
	r = c.call(t, "POST", "/api/v1/answers", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e1", "answers": []string{"x"}})
	require.Equal(t, http.StatusNotFound, r.code)
	require.Equal(t, "not_waiting", r.errorCode(t))
	r = c.call(t, "POST", "/api/v1/extend", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e1", "seconds": 0})
	require.Equal(t, http.StatusBadRequest, r.code)
	r = c.call(t, "POST", "/api/v1/extend", c.approver, map[string]any{"workflow_id": wfID, "call_id": "nosuch", "seconds": 600})
	require.Equal(t, http.StatusNotFound, r.code, "a call that does not wait moves nothing: %s", r.body)
	require.Equal(t, "not_waiting", r.errorCode(t))
	r = c.call(t, "POST", "/api/v1/extend", c.approver, map[string]any{"workflow_id": wfID, "call_id": "e1", "seconds": 600})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	got, err := os.ReadFile(notes)
	require.NoError(t, err)
	require.Equal(t, "one\ntwo\n", string(got), "no refused request ran the call")
	require.False(t, events.has(round.EventToolResult, "e1"))

	// H5: approve; the stream shows the round finish.
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, decision)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var ok map[string]any
	r.json(t, &ok)
	require.Equal(t, "alice", ok["by"])
	require.Equal(t, "api", ok["via"])
	res = c.resultOf(t, wfID)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	got, err = os.ReadFile(notes)
	require.NoError(t, err)
	require.Equal(t, "one\n2\n", string(got))
	require.Eventually(t, func() bool {
		return events.has(round.EventRoundFinished, "") && events.has(round.EventToolResult, "e1")
	},
		30*time.Second, 20*time.Millisecond, "H8: the events arrived through the stream")
	// A reader that reconnects with its last event's id gets what followed.
	resumed := c.streamAfter(t, e.session, wfID+"/e1/answered")
	require.Eventually(t, func() bool {
		return resumed.has(round.EventToolResult, "e1") && resumed.has(round.EventRoundFinished, "")
	},
		10*time.Second, 20*time.Millisecond)
	require.False(t, resumed.has(round.EventRoundStarted, ""), "only the events after the last one seen")
	// The call no longer waits.
	r = c.call(t, "POST", "/api/v1/approvals", c.approver, decision)
	require.Equal(t, http.StatusNotFound, r.code)
	require.Equal(t, "not_waiting", r.errorCode(t))

	// H6: answer an ask_user call.
	ask := e.input(3, "openai", &round.RunState{Fetched: allTools}, call("q1", "ask_user", map[string]any{"questions": []string{"Which colour?"}}))
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, ask)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	c.pendingOf(t, ask.WorkflowID(), "q1")
	r = c.call(t, "POST", "/api/v1/answers", c.agent, map[string]any{"workflow_id": ask.WorkflowID(), "call_id": "q1", "answers": []string{"green"}})
	require.Equal(t, http.StatusForbidden, r.code)
	r = c.call(t, "POST", "/api/v1/answers", c.approver, map[string]any{"workflow_id": ask.WorkflowID(), "call_id": "q1", "answers": []string{}})
	require.Equal(t, http.StatusBadRequest, r.code)
	r = c.call(t, "POST", "/api/v1/answers", c.approver, map[string]any{"workflow_id": ask.WorkflowID(), "call_id": "q1", "answers": []string{"green"}})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	res = c.resultOf(t, ask.WorkflowID())
	require.Contains(t, res.Results[0].Content, "green")

	// H6: cancel a round that waits; every call still gets a result.
	wait := editRound(e, 4, "e2", "never.txt", "", "x")
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, wait)
	require.Equal(t, http.StatusAccepted, r.code)
	c.pendingOf(t, wait.WorkflowID(), "e2")
	r = c.call(t, "POST", "/api/v1/cancel", c.agent, map[string]any{"workflow_id": wait.WorkflowID()})
	require.Equal(t, http.StatusForbidden, r.code)
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]any{})
	require.Equal(t, http.StatusBadRequest, r.code)
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]any{"workflow_id": "toolround/" + e.session + "/none/9"})
	require.Equal(t, http.StatusNotFound, r.code)
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]any{"workflow_id": wait.WorkflowID()})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Eventually(t, func() bool {
		r := c.call(t, "GET", "/api/v1/rounds/"+wait.WorkflowID(), c.agent, nil)
		return r.code == http.StatusOK && !bytes.Contains(r.body, []byte(`"status":"running"`))
	}, 30*time.Second, 50*time.Millisecond)
	_, err = os.Stat(filepath.Join(e.workdir, "never.txt"))
	require.True(t, os.IsNotExist(err))

	// H7: no such agent run (console_agent_test.go runs one).
	r = c.call(t, "GET", "/api/v1/agents/"+names.AgentWorkflowID(e.session, "a"), c.agent, nil)
	require.Equal(t, http.StatusNotFound, r.code, string(r.body))
	require.Equal(t, "not_found", r.errorCode(t))
}

// TestHTTPAgentExample runs examples/http-agent/agent.py, an agent loop in
// Python that uses only the HTTP API, against the console with an agent
// token; a person (this test, with an approver token) approves its
// edit_file call through the API meanwhile.
func TestHTTPAgentExample(t *testing.T) {
	e, c := newConsoleEnv(t)
	out, errb, done := startHTTPAgent(t, e, c)

	// The person: approve the edit_file call once it waits.
	approved := false
	for !approved {
		select {
		case err := <-done:
			t.Fatalf("agent.py ended before its edit_file was approved: %v\n%s%s", err, out.String(), errb.String())
		case <-time.After(200 * time.Millisecond):
		}
		// The script says, from the API alone, that its call waits; only
		// then does the person answer (else the answer can come first).
		if !strings.Contains(errb.String(), "waiting for a person: edit_file") {
			continue
		}
		for _, p := range c.inboxCalls(t, e.session) {
			require.Equal(t, "edit_file", p.Tool)
			r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{
				"workflow_id": p.WorkflowID, "call_id": p.CallID, "approval_id": p.ApprovalID, "approve": true})
			require.Equal(t, http.StatusOK, r.code, string(r.body))
			approved = true
		}
	}
	require.NoError(t, <-done, "agent.py:\n%s%s", out.String(), errb.String())
	require.Contains(t, out.String(), "Done: ", errb.String())
	got, err := os.ReadFile(filepath.Join(e.workdir, "answer.txt"))
	require.NoError(t, err)
	require.Equal(t, "The answer is 42.\n", string(got), errb.String())
	require.Contains(t, errb.String(), "waiting for a person: edit_file")
}

// TestConsoleSealsSecrets submits a store_secret call through the API: the
// console seals it as the client does, so the value is in none of the
// console's answers, its event stream, nor the round's history (T9).
func TestConsoleSealsSecrets(t *testing.T) {
	e, c := newConsoleEnv(t, "TOOLROUND_SECRET_KEY="+testKey)
	events := c.stream(t, e.session)
	const secret = "s3cr3t-console-value"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"store_secret"}},
		call("s1", "store_secret", map[string]any{"name": "api_token", "value": secret}))
	r := c.call(t, "POST", "/api/v1/rounds?wait=1", c.agent, in)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var res round.Result
	r.json(t, &res)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.NotContains(t, string(r.body), secret)
	r = c.call(t, "GET", "/api/v1/rounds/"+in.WorkflowID(), c.agent, nil)
	require.Equal(t, http.StatusOK, r.code)
	require.NotContains(t, string(r.body), secret)
	require.Eventually(t, func() bool { return events.has(round.EventRoundFinished, "") }, 30*time.Second, 20*time.Millisecond)
	events.mu.Lock()
	b, _ := json.Marshal(events.events)
	events.mu.Unlock()
	require.NotContains(t, string(b), secret)
	if os.Getenv("TEMPORAL_CLI") != "" {
		require.NotContains(t, e.history(in.WorkflowID()), secret)
	}
}
