package tests

import (
	"encoding/json"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolround/toolround/internal/llm/scripted"
)

// modelServer is the one scripted model of these tests: the model that `starter
// agent --model scripted:` plays (internal/llm/scripted), which speaks
// chat completions, the Messages API and the Responses API, streamed or
// not, served on loopback. It keeps every request it answered, and can
// hold one step until released or until the caller goes away (a killed
// worker). A step here is the request's tool results plus one, so a
// repeated model call counts against the step it repeats.
type modelServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []scripted.Request
	hold    int
	release chan struct{}
	once    sync.Once
}

// script is a test's model: its turn for each request.
type script func(r scripted.Request) (scripted.Turn, error)

// newModelServer serves s; o splits streamed arguments or types slowly.
func newModelServer(t *testing.T, s script, o scripted.Options) *modelServer {
	t.Helper()
	m := &modelServer{release: make(chan struct{})}
	h := scripted.Handler(scripted.Func(func(r scripted.Request) (scripted.Turn, error) {
		m.mu.Lock()
		m.reqs = append(m.reqs, r)
		held := m.hold != 0 && m.hold == step(r)
		m.mu.Unlock()
		if held {
			select {
			case <-m.release:
			case <-r.Context.Done():
				return scripted.Turn{}, r.Context.Err()
			}
		}
		return s(r)
	}), o)
	m.srv = httptest.NewServer(h)
	t.Cleanup(func() { m.releaseHold(); m.srv.Close() })
	return m
}

// step is a request's tool results plus one.
func step(r scripted.Request) int { return len(r.Results()) + 1 }

// baseURL is the model's LLM_BASE_URL.
func (m *modelServer) baseURL() string { return m.srv.URL + "/v1" }

// env is the worker's settings for this model.
func (m *modelServer) env() []string {
	return []string{"LLM_BASE_URL=" + m.baseURL(), "LLM_MODEL=scripted"}
}

// holdStep makes the requests of step s wait for releaseHold.
func (m *modelServer) holdStep(s int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = s
}

func (m *modelServer) releaseHold() { m.once.Do(func() { close(m.release) }) }

// requests is the requests answered so far.
func (m *modelServer) requests() []scripted.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]scripted.Request(nil), m.reqs...)
}

// countWhere is the number of requests answered so far that match.
func (m *modelServer) countWhere(match func(scripted.Request) bool) int {
	n := 0
	for _, r := range m.requests() {
		if match(r) {
			n++
		}
	}
	return n
}

// count is the number of requests of step s.
func (m *modelServer) count(s int) int {
	return m.countWhere(func(r scripted.Request) bool { return step(r) == s })
}

// streamed is the number of requests of step s that asked for a stream.
func (m *modelServer) streamed(s int) int {
	return m.countWhere(func(r scripted.Request) bool { return step(r) == s && r.Stream })
}

// users is the user messages of the last request of step s.
func (m *modelServer) users(s int) []string {
	var users []string
	for _, r := range m.requests() {
		if step(r) != s {
			continue
		}
		users = nil
		for _, msg := range r.Messages {
			if msg.Role == "user" {
				users = append(users, msg.Content)
			}
		}
	}
	return users
}

// turns is a script that answers the n-th request with turns[n-1], and the
// last turn past the end.
func turns(ts ...scripted.Turn) script {
	var n atomic.Int64
	return func(scripted.Request) (scripted.Turn, error) {
		i := min(int(n.Add(1)), len(ts)) - 1
		return ts[i], nil
	}
}

// answer is a model's answer with an HTTP status of its own.
func answer(code int, body string) error { return &scripted.StatusError{Code: code, Body: body} }

// modelCall is a tool call of a model turn.
func modelCall(id, name string, args any) scripted.Call {
	b, _ := json.Marshal(args)
	return scripted.Call{ID: id, Name: name, Args: string(b)}
}

// modelRunTool is a call of the run_tool tool for the tool name.
func modelRunTool(id, name string, args any) scripted.Call {
	return modelCall(id, "run_tool", map[string]any{"name": name, "args": args})
}

// modelFindTools is the first turn of most scripts: find_tools loads names.
func modelFindTools(id, names string) scripted.Call {
	return modelCall(id, "find_tools", map[string]any{"query": "select:" + names})
}

// newAgentEnv is newEnv for agent runs whose model is m, with a worker
// running.
func newAgentEnv(t *testing.T, m *modelServer, extra ...string) *env {
	t.Helper()
	e := newEnv(t, append(m.env(), extra...)...)
	e.startWorker()
	return e
}

// runAgent runs `starter agent --session SESSION args...` to its end.
func (e *env) runAgent(args ...string) result {
	e.t.Helper()
	return waitAgent(e.t, e.startAgent(append([]string{"--session", e.session}, args...)...))
}
