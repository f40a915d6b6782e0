package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// scriptedModel is the agent most agent tests play, on any API: step 1
// fetches run_command's schema, steps 2 and 3 append a line to log.txt
// through run_tool, step 4 answers. Step 1's turn opens with a thinking
// block (a reasoning item on the Responses API) signed "sig-step1";
// sentBack counts the requests that carried it back. Arguments stream in
// two pieces.
type scriptedModel struct {
	*modelServer
	// commands[step] is the command step 2 or 3 runs.
	commands map[int]string
	sentBack atomic.Int64
}

const agentFinal = "Done: log.txt has the lines two and three."

func newScriptedModel(t *testing.T) *scriptedModel {
	t.Helper()
	m := &scriptedModel{commands: map[int]string{2: "echo two >> log.txt", 3: "echo three >> log.txt"}}
	m.modelServer = newModelServer(t, m.turn, scripted.Options{Split: true})
	return m
}

func (m *scriptedModel) turn(r scripted.Request) (scripted.Turn, error) {
	if r.API != llm.APIChat && strings.Contains(string(r.Body), "sig-step1") {
		m.sentBack.Add(1)
	}
	switch s := step(r); s {
	case 1:
		return scripted.Turn{Thinking: "I need run_command.", Signature: "sig-step1", Text: "First I load run_command.",
			Calls: []scripted.Call{modelFindTools("call_find", "run_command")}}, nil
	case 2, 3:
		return scripted.Turn{Calls: []scripted.Call{modelRunTool(fmt.Sprintf("call_cmd%d", s), "run_command", map[string]any{"command": m.commands[s]})}}, nil
	default:
		return scripted.Turn{Text: agentFinal}, nil
	}
}

// startAgent runs `starter agent` in the background.
func (e *env) startAgent(args ...string) <-chan result {
	return e.startStarter("", append([]string{"agent"}, args...)...)
}

// waitAgent waits for the agent run startAgent started to end: its command
// has 3 minutes, after which it is killed and reports so.
func waitAgent(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(3*time.Minute + 30*time.Second):
		t.Fatal("the agent run did not end")
	}
	return result{}
}

func (e *env) agentStatus(wid string) round.AgentStatus {
	e.t.Helper()
	r := e.starter(context.Background(), "", "agent-status", wid)
	require.Equal(e.t, 0, r.code, r.stderr)
	var st round.AgentStatus
	require.NoError(e.t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	return st
}

// requireAgentDone checks a finished run of the script: the final answer,
// three rounds, each command's line once.
func requireAgentDone(t *testing.T, e *env, m *scriptedModel, r result) round.AgentStatus {
	t.Helper()
	require.Equal(t, 0, r.code, "starter agent failed: %s", r.stderr)
	require.Equal(t, agentFinal+"\n", r.stdout)
	log := filepath.Join(e.workdir, "log.txt")
	require.Equal(t, 1, countLines(t, log, "two"), "the command of round 2 ran once")
	require.Equal(t, 1, countLines(t, log, "three"), "the command of round 3 ran once")
	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, 3, st.Round)
	require.Equal(t, agentFinal, st.Final)
	return st
}

func TestAgentRunThreeRounds(t *testing.T) {
	m := newScriptedModel(t)
	e := newAgentEnv(t, m.modelServer)
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "--events", "append two lines to log.txt")
	st := requireAgentDone(t, e, m, r)
	for step := 1; step <= 4; step++ {
		require.Equal(t, 1, m.count(step), "model call %d was made once", step)
		require.Equal(t, 1, m.streamed(step), "model call %d streamed", step)
	}
	roles := make([]string, len(st.Conversation))
	for i, msg := range st.Conversation {
		roles[i] = msg.Role
	}
	require.Equal(t, "user,assistant,tool,assistant,tool,assistant,tool,assistant", strings.Join(roles, ","))
	require.Contains(t, st.Conversation[2].Content, "run_command", "find_tools loaded the schema")
	require.Contains(t, st.Conversation[4].Content, "[run_command]")

	// --events: the run's events on stderr, the model's tokens among them,
	// and never a tool call's arguments.
	var tokens strings.Builder
	types := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		var ev round.Event
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		types[ev.Type]++
		if ev.Type == round.EventModelToken {
			tokens.WriteString(ev.Detail)
		}
	}
	require.Contains(t, tokens.String(), agentFinal)
	require.NotContains(t, r.stderr, "echo two", "tool-call arguments are not streamed")
	require.Equal(t, 1, types[round.EventAgentFinished])
	require.Equal(t, 3, types[round.EventRoundFinished])
	require.Equal(t, 4, types[round.EventModelReply])

	// starter watch shows the model's tokens from the session's stream.
	wctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	watch := e.starter(wctx, "", "watch", e.session, "--all")
	require.Contains(t, watch.stdout, "model_token")
	require.Contains(t, watch.stdout, "Done:")

	// The same run again attaches: no model call, no command runs again.
	again := e.starter(context.Background(), "", "agent", "--session", e.session, "--run", "run-1", "append two lines to log.txt")
	require.Equal(t, 0, again.code, again.stderr)
	require.Equal(t, agentFinal+"\n", again.stdout)
	require.Equal(t, 1, m.count(4))
}

func TestAgentRunRoundLimit(t *testing.T) {
	m := newScriptedModel(t)
	e := newAgentEnv(t, m.modelServer)
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "--max-rounds", "2", "go")
	require.Equal(t, 1, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)
	require.Contains(t, r.stderr, "round_limit")
	require.Zero(t, countLines(t, filepath.Join(e.workdir, "log.txt"), "three"), "round 3 never ran")
}

// TestAgentRunSurvivesWorkerKills kills the worker with SIGKILL during a
// model call, during a round and between a model call and its round; a new
// worker finishes the run. Every model call that completed was made once,
// and every command ran once.
func TestAgentRunSurvivesWorkerKills(t *testing.T) {
	t.Run("during a model call", func(t *testing.T) {
		m := newScriptedModel(t)
		m.holdStep(2)
		e := newEnv(t, m.env()...)
		w := e.startWorker()
		done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
		require.Eventually(t, func() bool { return m.count(2) == 1 }, 60*time.Second, 10*time.Millisecond, "model call 2 never started")
		w.kill(t)
		killed := time.Now()
		m.releaseHold()
		e.startWorker()
		requireAgentDone(t, e, m, <-done)
		t.Logf("recovery: the run finished %v after the worker was killed in a model call", time.Since(killed).Round(time.Millisecond))
		require.Equal(t, 2, m.count(2), "the interrupted call ran again, once")
		for _, step := range []int{1, 3, 4} {
			require.Equal(t, 1, m.count(step), "model call %d completed and was made once", step)
		}
	})

	t.Run("during a round", func(t *testing.T) {
		m := newScriptedModel(t)
		m.commands[2] = "echo two >> log.txt; while [ ! -f go ]; do sleep 0.1; done"
		e := newEnv(t, m.env()...)
		w := e.startWorker()
		done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
		log := filepath.Join(e.workdir, "log.txt")
		require.Eventually(t, func() bool { return countLines(t, log, "two") == 1 }, 60*time.Second, 10*time.Millisecond, "round 2's command never started")
		w.kill(t)
		killed := time.Now()
		require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))
		e.startWorker()
		st := requireAgentDone(t, e, m, <-done)
		t.Logf("recovery: the run finished %v after the worker was killed in a round", time.Since(killed).Round(time.Millisecond))
		for step := 1; step <= 4; step++ {
			require.Equal(t, 1, m.count(step), "model call %d completed and was made once", step)
		}
		require.Contains(t, st.Conversation[4].Content, "outcome is unknown", "the interrupted command is reported, never run again")
	})

	t.Run("between a model call and its round", func(t *testing.T) {
		m := newScriptedModel(t)
		e := newEnv(t, m.env()...)
		w := e.startWorker()
		done := e.startAgent("--session", e.session, "--run", "run-1", "go")
		pending := func(n int) []round.Pending {
			r := e.starter(context.Background(), "", "pending", names.WorkflowID(e.session, "run-1", n))
			var p []round.Pending
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil {
				return nil
			}
			return p
		}
		// The model call has completed (its round exists) and the round's
		// call waits for a person: no tool has run.
		require.Eventually(t, func() bool { return len(pending(2)) == 1 }, 60*time.Second, 50*time.Millisecond)
		w.kill(t)
		killed := time.Now()
		wid := names.WorkflowID(e.session, "run-1", 2)
		// Only a worker can check the approval_id (T1): an approval sent while
		// none runs waits for the next one and is applied then.
		approved := make(chan result, 1)
		go func() { approved <- e.starter(context.Background(), "", "approve", wid, "call_cmd2") }()
		e.startWorker()
		ap := <-approved
		require.Equal(t, 0, ap.code, "an approval sent while no worker runs is applied once one does: %s", ap.stderr)
		require.Eventually(t, func() bool { return len(pending(3)) == 1 }, 60*time.Second, 50*time.Millisecond)
		ap = e.starter(context.Background(), "", "approve", names.WorkflowID(e.session, "run-1", 3), "call_cmd3")
		require.Equal(t, 0, ap.code, ap.stderr)
		r := <-done
		requireAgentDone(t, e, m, r)
		t.Logf("recovery: the run finished %v after the worker was killed between a model call and its round", time.Since(killed).Round(time.Millisecond))
		for step := 1; step <= 4; step++ {
			require.Equal(t, 1, m.count(step), "model call %d completed and was made once", step)
		}
		// The starter names the approval of a waiting call; round 2's call
		// may have been approved before it asked (the worker was killed
		// and the approval sent at once), round 3's then waits for it.
		run := strings.TrimSuffix(wid, "2") // toolround/<session>/run-1/
		require.Regexp(t, `starter approve `+regexp.QuoteMeta(run)+`(2 call_cmd2|3 call_cmd3)`, r.stderr, "the starter tells how to approve")
	})
}

// TestAgentRunUserMessage: a user message sent with `starter agent-message`
// while a model call runs joins the conversation before the next one.
func TestAgentRunUserMessage(t *testing.T) {
	m := newScriptedModel(t)
	m.holdStep(2)
	e := newAgentEnv(t, m.modelServer)
	done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
	require.Eventually(t, func() bool { return m.count(2) == 1 }, 60*time.Second, 10*time.Millisecond)
	wid := names.AgentWorkflowID(e.session, "run-1")
	r := e.starter(context.Background(), "", "agent-message", wid, "also", "say", "hi")
	require.Equal(t, 0, r.code, r.stderr)
	m.releaseHold()
	requireAgentDone(t, e, m, <-done)
	require.Equal(t, []string{"go"}, m.users(2), "the message arrived during call 2")
	require.Equal(t, []string{"go", "also say hi"}, m.users(3), "and joined before call 3")
}

// TestAgentRunCancel: cancelling the run with `starter cancel` cancels its
// running round, whose call still gets a result that joins the
// conversation; no model call follows, and `starter agent` exits 1.
func TestAgentRunCancel(t *testing.T) {
	m := newScriptedModel(t)
	m.commands[2] = "echo two >> log.txt; while [ ! -f go ]; do sleep 0.1; done"
	e := newAgentEnv(t, m.modelServer)
	done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
	log := filepath.Join(e.workdir, "log.txt")
	require.Eventually(t, func() bool { return countLines(t, log, "two") == 1 }, 60*time.Second, 10*time.Millisecond)
	wid := names.AgentWorkflowID(e.session, "run-1")
	r := e.starter(context.Background(), "", "cancel", wid)
	require.Equal(t, 0, r.code, r.stderr)
	res := <-done
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "cancelled")
	st := e.agentStatus(wid)
	requireCancelledInCmd2(t, st, m.modelServer)
}

// requireCancelledInCmd2 checks a run that was cancelled while its call
// call_cmd2 ran: the run is cancelled, the last message is that call's
// result, which says so, and the model m was not called after.
func requireCancelledInCmd2(t *testing.T, st round.AgentStatus, m *modelServer) {
	t.Helper()
	require.Equal(t, round.AgentCancelled, st.Status)
	last := st.Conversation[len(st.Conversation)-1]
	require.Equal(t, "tool", last.Role)
	require.Equal(t, "call_cmd2", last.ToolCallID)
	require.Contains(t, last.Content, "cancel")
	require.Zero(t, m.count(3), "no model call after the cancel")
}

// TestAgentRunNeverReusesARoundID: a round started outside the run under
// the id the run's round would take is not run again; the run fails with
// one line that says why.
func TestAgentRunNeverReusesARoundID(t *testing.T) {
	m := newScriptedModel(t)
	e := newAgentEnv(t, m.modelServer)
	e.round(e.input(1, "openai", nil, call("x", "find_tools", map[string]any{"query": "select:calculate"})))
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "round ids are never reused")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
}

// TestAgentRunSealsSecretsFromTheModel (T9): the model asks to store a
// secret; neither the run's history nor its round's, nor the session's
// event stream, holds the value in any encoding.
func TestAgentRunSealsSecretsFromTheModel(t *testing.T) {
	const secret = "sk-agent-7f3a9c1e55d0b2"
	m := newModelServer(t, turns(
		scripted.Turn{Calls: []scripted.Call{modelRunTool("call_s", "store_secret", map[string]any{"name": "api", "value": secret})}},
		scripted.Turn{Text: "stored"}), scripted.Options{})
	e := newAgentEnv(t, m)
	r := e.runAgent("--run", "run-1", "--auto-approve", "--events", "store my key")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "stored\n", r.stdout)

	forms := secretstest.Encodings(secret)
	check := func(where, text string) {
		t.Helper()
		for name, enc := range forms {
			require.NotContains(t, text, enc, "%s holds the secret (%s)", where, name)
		}
	}
	check("starter's output", r.stdout+r.stderr)
	status := e.starter(context.Background(), "", "agent-status", names.AgentWorkflowID(e.session, "run-1"))
	check("agent-status", status.stdout)

	requireNotInHistory(t, secret, names.AgentWorkflowID(e.session, "run-1"), names.WorkflowID(e.session, "run-1", 1))
	rdb := testenv.Redis(t)
	msgs, err := rdb.XRange(context.Background(), cache.EventsKey(e.session), "-", "+").Result()
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	for _, m := range msgs {
		raw, _ := m.Values["event"].(string)
		check("the event stream", raw)
	}
}

// newRefusingModel is a model server that refuses every request for good:
// 401, invalid api key.
func newRefusingModel(t *testing.T) *modelServer {
	return newModelServer(t, func(scripted.Request) (scripted.Turn, error) {
		return scripted.Turn{}, answer(http.StatusUnauthorized, `{"error":{"message":"invalid api key"}}`)
	}, scripted.Options{})
}

// TestAgentRunModelRefuses: a model server that refuses the request for
// good (401) fails the run at once, with one line that says why.
func TestAgentRunModelRefuses(t *testing.T) {
	m := newRefusingModel(t)
	e := newAgentEnv(t, m)
	r := e.runAgent("--run", "run-1", "go")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "invalid api key")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
	require.Len(t, m.requests(), 1, "a refusal is not retried")
}
