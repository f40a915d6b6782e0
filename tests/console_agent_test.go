package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// agentOf reads an agent run through GET /api/v1/agents.
func (c *consoleProc) agentOf(t *testing.T, wid string) round.AgentStatus {
	t.Helper()
	r := c.call(t, "GET", "/api/v1/agents/"+wid, c.agent, nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var st round.AgentStatus
	r.json(t, &st)
	return st
}

// page signs in with token and returns the page at path.
func (c *consoleProc) page(t *testing.T, token, path string) string {
	t.Helper()
	return newPagePerson(t).signIn(c, token, path)
}

// approveAll approves, with the approver token, every call the session's
// inbox lists.
func (c *consoleProc) approveAll(t *testing.T, session string) {
	t.Helper()
	for _, p := range c.inboxCalls(t, session) {
		// A call approved twice (the inbox lags) is refused; either way it
		// has its decision.
		c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{
			"workflow_id": p.WorkflowID, "call_id": p.CallID, "approval_id": p.ApprovalID, "approve": true})
	}
}

// inboxCall is a call that waits, as the inbox lists it.
type inboxCall struct {
	WorkflowID, CallID, Tool, ApprovalID string
}

// inboxCalls is every call the session's inbox lists, read with the
// approver token.
func (c *consoleProc) inboxCalls(t *testing.T, session string) []inboxCall {
	t.Helper()
	r := c.call(t, "GET", "/api/v1/inbox?session="+session, c.approver, nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var inbox []struct {
		WorkflowID string `json:"workflow_id"`
		Pending    []struct {
			CallID     string `json:"call_id"`
			Tool       string `json:"tool"`
			ApprovalID string `json:"approval_id"`
		} `json:"pending"`
	}
	r.json(t, &inbox)
	var out []inboxCall
	for _, e := range inbox {
		for _, p := range e.Pending {
			out = append(out, inboxCall{WorkflowID: e.WorkflowID, CallID: p.CallID, Tool: p.Tool, ApprovalID: p.ApprovalID})
		}
	}
	return out
}

// startHTTPAgent runs examples/http-agent/agent.py with args, for at most
// two minutes, against console c with its agent token, as run-1 of e's
// session; done gives its exit, out and errb hold its output.
func startHTTPAgent(t *testing.T, e *env, c *consoleProc, args ...string) (out, errb *syncBuffer, done <-chan error) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Unavailable(t, "python3: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, py, append([]string{"../examples/http-agent/agent.py"}, args...)...)
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+c.url, "CONSOLE_TOKEN="+c.agent, "SESSION="+e.session, "RUN=run-1")
	out, errb = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return out, errb, exited
}

// approveUntil approves through c, every tick, each call of session that
// waits, until done gives its value, which it returns; it fails after
// timeout.
func approveUntil[T any](t *testing.T, c *consoleProc, session string, done <-chan T, timeout, tick time.Duration) T {
	t.Helper()
	var v T
	require.Eventually(t, func() bool {
		select {
		case v = <-done:
			return true
		default:
		}
		c.approveAll(t, session)
		return false
	}, timeout, tick)
	return v
}

// TestConsoleAgentRun starts an agent run through the HTTP API with an
// agent token against the scripted model, sends it a user message, has a
// person approve its calls through the API, and reads its final answer
// with GET /api/v1/agents (H7, A4).
func TestConsoleAgentRun(t *testing.T) {
	m := newScriptedModel(t)
	m.holdStep(2)
	e := newAgentEnv(t, m.modelServer)
	c := e.startConsole()
	wid := names.AgentWorkflowID(e.session, "run-1")
	body := map[string]any{"session_id": e.session, "run_id": "run-1", "task": "go", "max_rounds": 10}

	// An agent token never starts a run with auto_approve.
	auto := map[string]any{"session_id": e.session, "run_id": "run-1", "task": "go", "auto_approve": true}
	r := c.call(t, "POST", "/api/v1/agents", c.agent, auto)
	require.Equal(t, http.StatusForbidden, r.code, string(r.body))
	r = c.call(t, "POST", "/api/v1/agents", c.agent, map[string]any{"session_id": e.session, "run_id": "run-1"})
	require.Equal(t, http.StatusBadRequest, r.code, string(r.body))
	require.Equal(t, "bad_request", r.errorCode(t))
	r = c.call(t, "GET", "/api/v1/agents/"+wid, c.agent, nil)
	require.Equal(t, http.StatusNotFound, r.code, "nothing was started: %s", r.body)

	r = c.call(t, "POST", "/api/v1/agents", c.agent, body)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	var started struct {
		WorkflowID string `json:"workflow_id"`
	}
	r.json(t, &started)
	require.Equal(t, wid, started.WorkflowID)

	// A user message while model call 2 runs joins before call 3.
	require.Eventually(t, func() bool { c.approveAll(t, e.session); return m.count(2) == 1 }, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "running", c.agentOf(t, wid).Status)
	r = c.call(t, "POST", "/api/v1/agents/"+wid+"/messages", c.agent, map[string]string{"text": "also say hi"})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	m.releaseHold()

	var st round.AgentStatus
	require.Eventually(t, func() bool {
		c.approveAll(t, e.session)
		st = c.agentOf(t, wid)
		return st.Status != round.AgentRunning
	}, 2*time.Minute, 100*time.Millisecond)
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, agentFinal, st.Final)
	require.Equal(t, 3, st.Round)
	require.Equal(t, "assistant", st.Conversation[len(st.Conversation)-1].Role)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "two"))
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "three"))
	require.Equal(t, []string{"go", "also say hi"}, m.users(3), "the message joined before call 3")

	// The same body again attaches to the finished run: no model call.
	r = c.call(t, "POST", "/api/v1/agents", c.agent, body)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	require.Equal(t, agentFinal, c.agentOf(t, wid).Final)
	require.Equal(t, 1, m.count(4))
	// An ended run takes no message.
	r = c.call(t, "POST", "/api/v1/agents/"+wid+"/messages", c.agent, map[string]string{"text": "late"})
	require.Equal(t, http.StatusConflict, r.code, string(r.body))
	require.Equal(t, "not_running", r.errorCode(t))
	// The session's page lists the run with its final answer.
	require.Contains(t, c.page(t, c.agent, "/sessions/"+e.session), wid)
	require.Contains(t, c.page(t, c.agent, "/sessions/"+e.session), "completed")
	// The console's answer is starter agent-status's.
	var fromStarter, fromAPI map[string]any
	b, err := json.Marshal(e.agentStatus(wid))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &fromStarter))
	c.call(t, "GET", "/api/v1/agents/"+wid, c.agent, nil).json(t, &fromAPI)
	require.Equal(t, fromStarter, fromAPI)
}

// TestConsoleAgentCancel: an approver cancels an agent run with POST
// /api/v1/cancel (an agent token may not); its running round gives its
// call a result and the run ends with status cancelled.
func TestConsoleAgentCancel(t *testing.T) {
	m := newScriptedModel(t)
	m.commands[2] = "echo two >> log.txt; while [ ! -f go ]; do sleep 0.1; done"
	e := newAgentEnv(t, m.modelServer)
	c := e.startConsole()
	wid := names.AgentWorkflowID(e.session, "run-1")
	r := c.call(t, "POST", "/api/v1/agents", c.approver, map[string]any{"session_id": e.session, "run_id": "run-1", "task": "go", "auto_approve": true})
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	log := filepath.Join(e.workdir, "log.txt")
	require.Eventually(t, func() bool { return countLines(t, log, "two") == 1 }, 60*time.Second, 10*time.Millisecond)

	r = c.call(t, "POST", "/api/v1/cancel", c.agent, map[string]string{"workflow_id": wid})
	require.Equal(t, http.StatusForbidden, r.code, string(r.body))
	require.Equal(t, round.AgentRunning, c.agentOf(t, wid).Status)
	r = c.call(t, "POST", "/api/v1/cancel", c.approver, map[string]string{"workflow_id": wid})
	require.Equal(t, http.StatusOK, r.code, string(r.body))

	var st round.AgentStatus
	require.Eventually(t, func() bool {
		st = c.agentOf(t, wid)
		return st.Status != round.AgentRunning
	}, 60*time.Second, 50*time.Millisecond)
	requireCancelledInCmd2(t, st, m.modelServer)
}

// TestHTTPAgentExampleAgentMode runs examples/http-agent/agent.py --agent
// with an agent token: the run goes in the workers against the scripted
// model, a person approves its calls through the API, and the script
// prints the final answer.
func TestHTTPAgentExampleAgentMode(t *testing.T) {
	m := newScriptedModel(t)
	e := newAgentEnv(t, m.modelServer)
	c := e.startConsole()
	out, errb, done := startHTTPAgent(t, e, c, "--agent", "append", "two", "lines")
	exit := approveUntil(t, c, e.session, done, 2*time.Minute, 100*time.Millisecond)
	require.NoError(t, exit, "agent.py --agent:\n%s%s", out.String(), errb.String())
	require.Equal(t, agentFinal+"\n", out.String(), errb.String())
	require.Contains(t, errb.String(), "agent run: "+names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, c.agentOf(t, names.AgentWorkflowID(e.session, "run-1")).Status)
}
