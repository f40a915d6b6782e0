package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// subagentModel is the scripted model of a parent and its subagent, told
// apart by the task (the first user message). The parent's step 1 calls
// subagents; its step 2 answers with what the subagent returned. The
// subagent's step 1 runs a command, its step 2 answers. A call that got a
// schema result (P1.4) is made again. Calls are counted by who makes them
// and how many tool messages they carry ("child/2").
type subagentModel struct {
	*modelServer
}

const (
	parentTask = "parent: delegate the log line"
	childTask  = "child: append one line to log.txt"
)

func newSubagentModel(t *testing.T) *subagentModel {
	m := &subagentModel{}
	m.modelServer = newModelServer(t, m.turn, scripted.Options{})
	return m
}

// subagentWho is who makes a model call, told by its first user message:
// parent or child.
func subagentWho(r scripted.Request) string {
	for _, msg := range r.Messages {
		if msg.Role == "user" {
			return map[bool]string{true: "parent", false: "child"}[msg.Content == parentTask]
		}
	}
	return ""
}

// subagentKey is who makes a model call, and how many tool messages it
// carries: "child/2".
func subagentKey(r scripted.Request) string {
	return fmt.Sprintf("%s/%d", subagentWho(r), len(r.Results()))
}

// made is the number of model calls of key.
func (m *subagentModel) made(key string) int {
	return m.countWhere(func(r scripted.Request) bool { return subagentKey(r) == key })
}

// tools is the tools arrays the calls of key got, one after the other;
// system is the first message of the last of them.
func (m *subagentModel) tools(key string) (tools []string, system string) {
	for _, r := range m.requests() {
		if subagentKey(r) == key {
			tools = append(tools, r.Tools...)
			if len(r.Messages) > 0 {
				system = r.Messages[0].Content
			}
		}
	}
	return tools, system
}

func (m *subagentModel) turn(r scripted.Request) (scripted.Turn, error) {
	// A schema result (P1.4) is not a step: the call goes again.
	who, step, last, tools := subagentWho(r), 1, "", 0
	for _, msg := range r.Results() {
		tools++
		if !strings.Contains(msg.Content, "was not loaded yet") {
			step++
			last = msg.Content
		}
	}
	switch who + "/" + fmt.Sprint(step) {
	case "parent/1":
		return scripted.Turn{Calls: []scripted.Call{modelCall(fmt.Sprintf("call_sub%d", tools), "subagents", map[string]any{"task": childTask, "name": "logger", "system_prompt": "You write logs."})}}, nil
	case "parent/2":
		return scripted.Turn{Text: "parent done; the subagent said: " + last}, nil
	case "child/1":
		return scripted.Turn{Calls: []scripted.Call{modelCall(fmt.Sprintf("call_log%d", tools), "run_command", map[string]any{"command": "echo child >> log.txt"})}}, nil
	default:
		return scripted.Turn{Text: "child done"}, nil
	}
}

// TestSubagentSurvivesAWorkerKill: an agent run's subagents call runs a
// child agent run through the real worker; the worker is killed while the
// child's second model call runs, and a new worker finishes both runs.
// Every model call that completed was made once, the child's command ran
// once, and the parent's answer holds the child's (G1).
func TestSubagentSurvivesAWorkerKill(t *testing.T) {
	m := newSubagentModel(t)
	// Step 3 is the call of "child/2": the parent's step 3 ("parent/2")
	// comes only after the child's answer, once the hold is released.
	m.holdStep(3)
	e := newEnv(t, m.env()...)
	w := e.startWorker()
	done := e.startAgent("--session", e.session, "--run", "run-1", "--provider", "claude-code", "--auto-approve", parentTask)
	require.Eventually(t, func() bool { return m.made("child/2") == 1 }, 90*time.Second, 10*time.Millisecond, "the subagent's second model call never started")
	w.kill(t)
	m.releaseHold()
	e.startWorker()
	r := <-done
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "parent done; the subagent said: [subagents] child done\n", r.stdout)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "child"), "the subagent's command ran once")
	// Each run: its call, the same call after the schema result, the
	// answer.
	for _, key := range []string{"parent/0", "parent/1", "parent/2", "child/0", "child/1"} {
		require.Equal(t, 1, m.made(key), "model call %s completed and was made once", key)
	}
	require.Equal(t, 2, m.made("child/2"), "the interrupted call ran again, once")

	childTools, system := m.tools("child/0")
	parentTools, _ := m.tools("parent/0")
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
