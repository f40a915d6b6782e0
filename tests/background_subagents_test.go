package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// backgroundModel is a loopback chat-completions server: the parent starts
// a background subagent, looks at it by id until it ended, tries an id that
// is not its own, and answers with the child's answer; the child runs one
// command and answers. The parent's first look waits until the child's
// answer has been served, so that the looks stay few.
type backgroundModel struct {
	srv       *httptest.Server
	mu        sync.Mutex
	looks     int
	childDone chan struct{}
	once      sync.Once
}

var subagentID = regexp.MustCompile(`agentrun/[^ "]+/sub-[0-9a-f]{24}`)

func (m *backgroundModel) serve(w http.ResponseWriter, r *http.Request) {
	req, ok := readChatRequest(w, r)
	if !ok {
		return
	}
	child, id, last, n, foreign := false, "", "", 0, false
	for i, msg := range req.Messages {
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
	var content string
	var call map[string]any
	switch {
	case child && last == "":
		call = toolCall(fmt.Sprintf("call_c%d", n), "run_command", map[string]any{"command": "echo child >> log.txt"})
	case child:
		content = "child done"
		defer m.once.Do(func() { close(m.childDone) })
	case id == "":
		call = toolCall(fmt.Sprintf("call_p%d", n), "background_subagents", map[string]any{"task": childTask, "name": "logger"})
	case !foreign:
		call = toolCall(fmt.Sprintf("call_p%d", n), "subagents", map[string]any{"id": "agentrun/other/sub-0123456789abcdef01234567"})
	case strings.Contains(last, "started subagent") || strings.Contains(last, "is running") || strings.Contains(last, round.NotThisRun):
		select {
		case <-m.childDone:
		case <-r.Context().Done():
			return
		}
		m.mu.Lock()
		m.looks++
		m.mu.Unlock()
		call = toolCall(fmt.Sprintf("call_p%d", n), "subagents", map[string]any{"id": id})
	default:
		content = "parent done; the subagent said: " + last
	}
	var calls []map[string]any
	if call != nil {
		calls = []map[string]any{call}
	}
	writeChatAnswer(w, req.Stream, content, calls)
}

// TestBackgroundSubagentThroughTheWorker (G2): through the real worker, an
// agent run starts a background subagent, whose id comes back at once;
// an id that is not the run's is not_this_run; looking by id gives the
// child's final answer once it ended, and the child's command ran once.
func TestBackgroundSubagentThroughTheWorker(t *testing.T) {
	m := &backgroundModel{childDone: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(func() { m.once.Do(func() { close(m.childDone) }); m.srv.Close() })
	e := newEnv(t, "LLM_BASE_URL="+m.srv.URL+"/v1", "LLM_MODEL=scripted")
	e.startWorker()
	done := e.startAgent("--session", e.session, "--run", "run-1", "--provider", "claude-code", "--auto-approve", parentTask)
	r := waitAgent(t, done)
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
