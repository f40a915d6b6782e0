package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// subagentModel is a loopback chat-completions server that plays a parent
// and its subagent, told apart by the task (the first user message). The
// parent's step 1 calls subagents; its step 2 answers with what the
// subagent returned. The subagent's step 1 runs a command, its step 2
// answers. A call that got a schema result (P1.4) is made again. Calls
// are counted by who makes them and how many tool messages they carry
// ("child/2"); a held one blocks until released or until the caller goes
// away (a killed worker).
type subagentModel struct {
	srv     *httptest.Server
	mu      sync.Mutex
	counts  map[string]int
	tools   map[string][]string // the tools array each (who, step) got
	system  map[string]string
	hold    string
	release chan struct{}
	once    sync.Once
}

const (
	parentTask = "parent: delegate the log line"
	childTask  = "child: append one line to log.txt"
)

func newSubagentModel(t *testing.T) *subagentModel {
	m := &subagentModel{counts: map[string]int{}, tools: map[string][]string{}, system: map[string]string{}, release: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(func() { m.once.Do(func() { close(m.release) }); m.srv.Close() })
	return m
}

func (m *subagentModel) count(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[key]
}

func (m *subagentModel) serve(w http.ResponseWriter, r *http.Request) {
	req, ok := readChatRequest(w, r)
	if !ok {
		return
	}
	// A schema result (P1.4) is not a step: the call goes again.
	who, step, last, tools := "", 1, "", 0
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			if who == "" {
				who = map[bool]string{true: "parent", false: "child"}[msg.Content == parentTask]
			}
		case "tool":
			tools++
			if !strings.Contains(msg.Content, "was not loaded yet") {
				step++
				last = msg.Content
			}
		}
	}
	// One model call of a run per number of tool messages so far.
	key := fmt.Sprintf("%s/%d", who, tools)
	m.mu.Lock()
	m.counts[key]++
	for _, t := range req.Tools {
		m.tools[key] = append(m.tools[key], t.Function.Name)
	}
	if len(req.Messages) > 0 {
		m.system[key] = req.Messages[0].Content
	}
	held := m.hold == key
	m.mu.Unlock()
	if held {
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
	}
	var content string
	var calls []map[string]any
	switch who + "/" + fmt.Sprint(step) {
	case "parent/1":
		calls = []map[string]any{toolCall(fmt.Sprintf("call_sub%d", tools), "subagents", map[string]any{"task": childTask, "name": "logger", "system_prompt": "You write logs."})}
	case "parent/2":
		content = "parent done; the subagent said: " + last
	case "child/1":
		calls = []map[string]any{toolCall(fmt.Sprintf("call_log%d", tools), "run_command", map[string]any{"command": "echo child >> log.txt"})}
	default:
		content = "child done"
	}
	writeChatAnswer(w, req.Stream, content, calls)
}

// TestSubagentSurvivesAWorkerKill: an agent run's subagents call runs a
// child agent run through the real worker; the worker is killed while the
// child's second model call runs, and a new worker finishes both runs.
// Every model call that completed was made once, the child's command ran
// once, and the parent's answer holds the child's (G1).
func TestSubagentSurvivesAWorkerKill(t *testing.T) {
	m := newSubagentModel(t)
	m.hold = "child/2"
	e := newEnv(t, "LLM_BASE_URL="+m.srv.URL+"/v1", "LLM_MODEL=scripted")
	w := e.startWorker()
	done := e.startAgent("--session", e.session, "--run", "run-1", "--provider", "claude-code", "--auto-approve", parentTask)
	require.Eventually(t, func() bool { return m.count("child/2") == 1 }, 90*time.Second, 10*time.Millisecond, "the subagent's second model call never started")
	w.kill(t)
	m.once.Do(func() { close(m.release) })
	e.startWorker()
	r := <-done
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "parent done; the subagent said: [subagents] child done\n", r.stdout)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "child"), "the subagent's command ran once")
	// Each run: its call, the same call after the schema result, the
	// answer.
	for _, key := range []string{"parent/0", "parent/1", "parent/2", "child/0", "child/1"} {
		require.Equal(t, 1, m.count(key), "model call %s completed and was made once", key)
	}
	require.Equal(t, 2, m.count("child/2"), "the interrupted call ran again, once")

	m.mu.Lock()
	childTools, parentTools, system := m.tools["child/0"], m.tools["parent/0"], m.system["child/0"]
	m.mu.Unlock()
	require.Contains(t, parentTools, "subagents")
	require.Contains(t, childTools, "run_command")
	for _, name := range round.RecursiveTools {
		require.NotContains(t, childTools, name, "a subagent at SUBAGENT_DEPTH=1 starts no runs")
	}
	require.True(t, strings.HasSuffix(system, "You write logs."), "the subagent's system prompt: %q", system)

	// The child is an agent run of the same session, whose id derives
	// from the parent call's operation id, and whose parent is the round.
	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
	for _, msg := range st.Conversation {
		if msg.Role == "tool" && !strings.Contains(msg.Content, "was not loaded yet") {
			require.Equal(t, "[subagents] child done", msg.Content)
		}
	}
	// Round 1 got the schema; round 2 ran the subagent.
	out := e.starter(context.Background(), "", "result", names.WorkflowID(e.session, "run-1", 2))
	require.Equal(t, 0, out.code, out.stderr)
	var res round.Result
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &res), out.stdout)
	require.Len(t, res.Results, 1)
	child := e.agentStatus(names.AgentWorkflowID(e.session, names.SubagentRunID(res.Results[0].OperationID)))
	require.Equal(t, round.AgentCompleted, child.Status)
	require.Equal(t, "child done", child.Final)
	require.Equal(t, 2, child.Round, "the schema round and the command's")
}

// TestClientsCannotStartSubagentRunIDs: the run ids of subagents and
// chatbots are the worker's (T6).
func TestClientsCannotStartSubagentRunIDs(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"sub-0123456789abcdef01234567", "chat-helper"} {
		r := e.starter(context.Background(), "", "agent", "--session", e.session, "--run", id, "task")
		require.Equal(t, 2, r.code, r.stderr)
		require.Contains(t, r.stderr, "reserved")
	}
}
