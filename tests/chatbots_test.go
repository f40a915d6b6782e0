package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

const chatbotsConfig = `{"agents": [
	{"name": "helper", "description": "Appends lines and counts messages.", "system_prompt": "You are the helper chatbot.", "tools": ["run_command"]},
	{"name": "loop", "description": "Talks to itself.", "system_prompt": "You are the loop chatbot.", "tools": ["send_to_chatbot"]}
]}`

// chatbotsModel is the scripted model of a parent agent and its two
// chatbots, told apart by their system prompts. The parent lists the
// chatbots, sends the helper two messages (the first makes it run a
// command, the second only asks; its answers count the messages it has
// had) and the loop one, which tries to message itself; any call whose
// schema came back is made again in the next turn.
type chatbotsModel struct {
	*modelServer
	// held closes when the helper's first answer is asked for, which then
	// waits for release; nil: no wait.
	held, release chan struct{}
	once          sync.Once
}

// newChatbotsModel serves the chatbots' script; with hold, the helper's
// first answer waits for release.
func newChatbotsModel(t *testing.T, hold bool) *chatbotsModel {
	t.Helper()
	cm := &chatbotsModel{}
	if hold {
		cm.held, cm.release = make(chan struct{}), make(chan struct{})
	}
	cm.modelServer = newModelServer(t, cm.turn, scripted.Options{})
	if hold {
		t.Cleanup(func() {
			select {
			case <-cm.release:
			default:
				close(cm.release)
			}
		})
	}
	return cm
}

func (cm *chatbotsModel) turn(r scripted.Request) (scripted.Turn, error) {
	system, users, n := "", 0, len(r.Messages)
	var results []string
	for _, m := range r.Messages {
		switch m.Role {
		case "system":
			system = m.Content
		case "user":
			users++
		case "tool":
			if !strings.Contains(m.Content, "was not loaded yet") {
				results = append(results, m.Content)
			}
		}
	}
	last := r.Messages[n-1]
	unloaded := last.Role == "tool" && strings.Contains(last.Content, "was not loaded yet")
	var t scripted.Turn
	switch {
	case strings.Contains(system, "helper chatbot"):
		if (last.Role == "user" && last.Content == "append one line") || unloaded {
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("h%d", n), "run_command", map[string]any{"command": "echo helper >> chat.txt"}))
		} else {
			t.Text = fmt.Sprintf("helper: %d messages", users)
			if cm.release != nil && users == 1 {
				cm.once.Do(func() { close(cm.held) })
				select {
				case <-cm.release:
				case <-r.Context.Done():
					return scripted.Turn{}, r.Context.Err()
				}
			}
		}
	case strings.Contains(system, "loop chatbot"):
		if last.Role == "user" || unloaded {
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("l%d", n), "send_to_chatbot", map[string]any{"name": "loop", "message": "hello me"}))
		} else {
			t.Text = "loop got: " + last.Content
		}
	default:
		has := func(s string) bool {
			for _, r := range results {
				if strings.Contains(r, s) {
					return true
				}
			}
			return false
		}
		if !has("chatbots; talk to one") {
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("p%d", n), "list_chatbot", map[string]any{}))
		}
		switch {
		case !has("helper: 1 messages"):
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("q%d", n), "send_to_chatbot", map[string]any{"name": "helper", "message": "append one line"}))
		case !has("helper: 2 messages"):
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("q%d", n), "send_to_chatbot", map[string]any{"name": "helper", "message": "how many so far?"}))
		}
		if !has("loop got:") {
			t.Calls = append(t.Calls, modelCall(fmt.Sprintf("r%d", n), "send_to_chatbot", map[string]any{"name": "loop", "message": "go"}))
		}
		if len(t.Calls) == 0 {
			t.Text = strings.Join(results, "\n---\n")
		}
	}
	return t, nil
}

// TestChatbotsThroughTheWorker (G3): through the real worker, an agent run
// lists AGENTS_CONFIG's chatbots and talks to them: the helper, a
// persistent run chat-helper of the session, runs its command once and
// remembers the first message when the second comes; the loop's message to
// itself is refused as a cycle. The helper's run waits for more.
func TestChatbotsThroughTheWorker(t *testing.T) {
	m := newChatbotsModel(t, false)
	cfg := filepath.Join(t.TempDir(), "agents.json")
	require.NoError(t, os.WriteFile(cfg, []byte(chatbotsConfig), 0o600))
	e := newAgentEnv(t, m.modelServer, "AGENTS_CONFIG="+cfg, "SUBAGENT_DEPTH=2")
	tc := e.dial(t)
	t.Cleanup(func() {
		for _, name := range []string{"helper", "loop"} {
			_ = tc.TerminateWorkflow(context.Background(), names.AgentWorkflowID(e.session, names.ChatbotRunID(name)), "", "test over")
		}
	})
	r := e.runAgent("--run", "run-1", "--provider", "claude-code", "--auto-approve", "talk to the chatbots")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "- helper: Appends lines and counts messages. (tools: run_command)")
	require.Contains(t, r.stdout, "[send_to_chatbot] helper: 1 messages")
	require.Contains(t, r.stdout, "[send_to_chatbot] helper: 2 messages", "the chatbot remembers the first message")
	require.Contains(t, r.stdout, "loop got: [send_to_chatbot] tool=send_to_chatbot failed: "+round.Cycle+": chatbot loop is already in this conversation (loop -> loop)")
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "chat.txt"), "helper"), "the helper's command ran once")

	helper := e.agentStatus(names.AgentWorkflowID(e.session, names.ChatbotRunID("helper")))
	require.Equal(t, round.AgentRunning, helper.Status, "a chatbot waits for the next message")
	var users []string
	for _, m := range helper.Conversation {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	require.Equal(t, []string{"append one line", "how many so far?"}, users)
}

// TestBadAgentsConfigStopsTheWorker (G3): a wrong AGENTS_CONFIG stops the
// worker at start with one line that names the entry and what is wrong.
func TestBadAgentsConfigStopsTheWorker(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ config, want string }{
		{`{"agents": [{"name": "Bad Name", "description": "d", "tools": []}]}`, `agents[0] (Bad Name): name "Bad Name"`},
		{`{"agents": [{"name": "a", "description": "d", "tools": ["no_such_tool"]}]}`, `agent a: tool "no_such_tool" is not a tool of this worker`},
		{`{"agents": [{"name": "a", "description": "", "tools": []}]}`, `agents[0] (a): description is empty`},
		{`{"agents": [{"name": "a", "description": "d", "tools": [], "extra": 1}]}`, `unknown field "extra"`},
	} {
		path := filepath.Join(dir, "agents.json")
		require.NoError(t, os.WriteFile(path, []byte(c.config), 0o600))
		e := newEnv(t, "AGENTS_CONFIG="+path)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, workerBin)
		cmd.Env = e.environ()
		out, err := cmd.CombinedOutput()
		cancel()
		require.Error(t, err, "the worker started with %s:\n%s", c.config, out)
		// The one line of the error is the worker's last (the sandbox's
		// line comes first when the check needs the registered tools).
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Contains(t, lines[len(lines)-1], c.want, "%s", out)
		require.Contains(t, lines[len(lines)-1], "AGENTS_CONFIG")
		for _, l := range lines[:len(lines)-1] {
			require.Contains(t, l, "level=INFO", "nothing else goes wrong:\n%s", out)
		}
	}
}

// TestChatbotSendSurvivesAWorkerKill (G3): the worker dies while the
// helper answers; the send runs again on the next worker with the same
// update id and gets the one reply: the helper saw the message once and
// ran its command once.
func TestChatbotSendSurvivesAWorkerKill(t *testing.T) {
	cm := newChatbotsModel(t, true)
	cfg := filepath.Join(t.TempDir(), "agents.json")
	require.NoError(t, os.WriteFile(cfg, []byte(chatbotsConfig), 0o600))
	e := newEnv(t, append(cm.env(), "AGENTS_CONFIG="+cfg, "SUBAGENT_DEPTH=2")...)
	w := e.startWorker()
	tc := e.dial(t)
	t.Cleanup(func() {
		for _, name := range []string{"helper", "loop"} {
			_ = tc.TerminateWorkflow(context.Background(), names.AgentWorkflowID(e.session, names.ChatbotRunID(name)), "", "test over")
		}
	})
	done := e.startAgent("--session", e.session, "--run", "run-1", "--provider", "claude-code", "--auto-approve", "talk to the chatbots")
	select {
	case <-cm.held:
	case <-time.After(90 * time.Second):
		t.Fatal("the helper's answer was never asked for")
	}
	w.kill(t)
	close(cm.release)
	e.startWorker()
	r := waitAgent(t, done)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "[send_to_chatbot] helper: 1 messages")
	require.Contains(t, r.stdout, "[send_to_chatbot] helper: 2 messages")
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "chat.txt"), "helper"), "the helper's command ran once")
	helper := e.agentStatus(names.AgentWorkflowID(e.session, names.ChatbotRunID("helper")))
	var users []string
	for _, m := range helper.Conversation {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	require.Equal(t, []string{"append one line", "how many so far?"}, users, "the send that ran again was answered once")
}
