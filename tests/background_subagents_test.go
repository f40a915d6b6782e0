package tests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// backgroundModel is the scripted model of a parent that starts a
// background subagent, looks at it by id until it ended, tries an id that
// is not its own, and answers with the child's answer; the child runs one
// command and answers. The parent's first look waits until the child's
// answer has been given, so that the looks stay few.
type backgroundModel struct {
	*modelServer
	mu        sync.Mutex
	looks     int
	childDone chan struct{}
	once      sync.Once
}

var subagentID = regexp.MustCompile(`agentrun/[^ "]+/sub-[0-9a-f]{24}`)

func newBackgroundModel(t *testing.T) *backgroundModel {
	m := &backgroundModel{childDone: make(chan struct{})}
	m.modelServer = newModelServer(t, m.turn, scripted.Options{})
	t.Cleanup(func() { m.once.Do(func() { close(m.childDone) }) })
	return m
}

func (m *backgroundModel) turn(r scripted.Request) (scripted.Turn, error) {
	child, id, last, n, foreign := false, "", "", 0, false
	for i, msg := range r.Messages {
		switch {
		case msg.Role == "user" && i <= 1:
			child = msg.Content == childTask
		case msg.Role == "tool":
			n++
			if strings.Contains(msg.Content, "was not loaded yet") {
				continue
			}
			if id == "" && strings.Contains(msg.Content, "started subagent") {
				id = subagentID.FindString(msg.Content)
			}
			if strings.Contains(msg.Content, round.NotThisRun) {
				foreign = true
			}
			last = msg.Content
		}
	}
	var t scripted.Turn
	switch {
	case child && last == "":
		t.Calls = []scripted.Call{modelCall(fmt.Sprintf("call_c%d", n), "run_command", map[string]any{"command": "echo child >> log.txt"})}
	case child:
		t.Text = "child done"
		m.once.Do(func() { close(m.childDone) })
	case id == "":
		t.Calls = []scripted.Call{modelCall(fmt.Sprintf("call_p%d", n), "background_subagents", map[string]any{"task": childTask, "name": "logger"})}
	case !foreign:
		t.Calls = []scripted.Call{modelCall(fmt.Sprintf("call_p%d", n), "subagents", map[string]any{"id": "agentrun/other/sub-0123456789abcdef01234567"})}
	case strings.Contains(last, "started subagent") || strings.Contains(last, "is running") || strings.Contains(last, round.NotThisRun):
		select {
		case <-m.childDone:
		case <-r.Context.Done():
			return scripted.Turn{}, r.Context.Err()
		}
		m.mu.Lock()
		m.looks++
		m.mu.Unlock()
		t.Calls = []scripted.Call{modelCall(fmt.Sprintf("call_p%d", n), "subagents", map[string]any{"id": id})}
	default:
		t.Text = "parent done; the subagent said: " + last
	}
	return t, nil
}

// TestBackgroundSubagentThroughTheWorker (G2): through the real worker, an
// agent run starts a background subagent, whose id comes back at once;
// an id that is not the run's is not_this_run; looking by id gives the
// child's final answer once it ended, and the child's command ran once.
func TestBackgroundSubagentThroughTheWorker(t *testing.T) {
	m := newBackgroundModel(t)
	e := newAgentEnv(t, m.modelServer)
	r := e.runAgent("--run", "run-1", "--provider", "claude-code", "--auto-approve", parentTask)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "parent done; the subagent said: [subagents] child done\n", r.stdout)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "child"), "the subagent's command ran once")
	m.mu.Lock()
	looks := m.looks
	m.mu.Unlock()
	require.GreaterOrEqual(t, looks, 1)

	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
	var id string
	for _, msg := range st.Conversation {
		if msg.Role == "tool" && strings.Contains(msg.Content, "started subagent") {
			id = subagentID.FindString(msg.Content)
		}
	}
	require.NotEmpty(t, id, "the start's result names the child")
	child := e.agentStatus(id)
	require.Equal(t, round.AgentCompleted, child.Status)
	require.Equal(t, "child done", child.Final)
}
