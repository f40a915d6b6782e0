package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// taskServer builds internal/taskserver once per test binary.
var taskServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "taskserver")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "taskserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/taskserver").CombinedOutput(); err != nil {
		return "", &exec.Error{Name: string(out), Err: err}
	}
	return bin, nil
})

// connectTasks connects to a stdio taskserver as "jobs", with args; log
// is the file where it notes each research task it creates.
func connectTasks(t *testing.T, args ...string) (*Manager, *tools.Registry, string) {
	t.Helper()
	return connectTasksEnv(t, nil, args...)
}

// connectTasksEnv is connectTasks with more environment for the server.
func connectTasksEnv(t *testing.T, env map[string]string, args ...string) (*Manager, *tools.Registry, string) {
	t.Helper()
	bin, err := taskServer()
	require.NoError(t, err)
	log := filepath.Join(t.TempDir(), "tasks")
	vars := map[string]string{"TASK_LOG": log, "TASK_MS": "200"}
	for k, v := range env {
		vars[k] = v
	}
	m, reg := connect(t, Config{CallTimeout: 20 * time.Second, Servers: []ServerConfig{
		{Name: "jobs", Command: bin, Args: args, Env: vars},
	}})
	return m, reg, log
}

// A task id goes into the round's history: one of 512 bytes is kept, a
// longer one is refused with a line that names its size (E2).
func TestTaskIDsAreBounded(t *testing.T) {
	_, reg, _ := connectTasksEnv(t, map[string]string{"TASK_ID_LEN": "512"})
	res, err := run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"tides"}`)}, true, nil)
	require.NoError(t, err)
	require.Len(t, res.Task.ID, 512)

	_, reg, _ = connectTasksEnv(t, map[string]string{"TASK_ID_LEN": "513"})
	res, err = run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"tides"}`)}, true, nil)
	require.ErrorContains(t, err, "the server made a task whose id is 513 bytes, more than 512")
	require.Nil(t, res.Task)
}

// One poll of a task lasts as long as its server keeps it, and at most a
// day, whatever time to live the server gives (E2).
func TestTaskPollIsCappedAtADay(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want time.Duration
	}{
		{0, 24 * time.Hour},
		{10 * time.Minute, 10 * time.Minute},
		{24 * time.Hour, 24 * time.Hour},
		{30 * 24 * time.Hour, 24 * time.Hour},
		{-time.Second, 24 * time.Hour},
	} {
		require.Equal(t, c.want, taskBudget(&round.MCPTask{TTLMS: c.ttl.Milliseconds()}), "ttl %v", c.ttl)
	}
	require.Equal(t, 24*time.Hour, wire.MaxTaskPoll)
}

// httpTaskServer starts the taskserver over streamable HTTP in a process
// of its own and returns its URL.
func httpTaskServer(t *testing.T, log string) string {
	t.Helper()
	bin, err := taskServer()
	require.NoError(t, err)
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TASK_LOG="+log, "TASK_MS=200")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// run calls a tool's handler; rounds marks the context as a round's, where
// a task and its input requests go back to the caller.
func run(t *testing.T, reg *tools.Registry, name string, req tools.Request, rounds bool, ask tools.Elicitor) (tools.Result, error) {
	t.Helper()
	def, ok := reg.Lookup(name)
	require.True(t, ok, "tool %s is not registered; have %v", name, reg.Names())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rounds {
		ctx = tools.WithInputRounds(ctx)
	}
	if ask != nil {
		ctx = tools.WithElicitor(ctx, ask)
	}
	if req.CallID == "" {
		req.CallID = "c1"
	}
	return def.Handler(ctx, req)
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// TestTaskOutsideARoundIsPolledToItsResult: a call the server runs as a
// task (2026-07-28's extension) ends with the task's result when no round
// keeps the task; the server made one task.
func TestTaskOutsideARoundIsPolledToItsResult(t *testing.T) {
	_, reg, log := connectTasks(t)
	res, err := run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"tides"}`)}, false, nil)
	require.NoError(t, err)
	require.Nil(t, res.Task)
	require.Equal(t, "report on tides", res.Content)
	require.Equal(t, []string{"tides"}, lines(t, log))
}

// TestTaskGoesToTheRoundAndIsPolledOnce: in a round the creating call
// returns the task's handle, with the connection that made it; polling with
// that handle gives the result and creates nothing on the server.
func TestTaskGoesToTheRoundAndIsPolledOnce(t *testing.T) {
	_, reg, log := connectTasks(t)
	res, err := run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"moons"}`)}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	h := res.Task
	require.Equal(t, "jobs", h.Server)
	require.Equal(t, "2026-07-28", h.Protocol)
	require.NotEmpty(t, h.ID)
	require.NotEmpty(t, h.Conn, "a stdio server's task names its connection")
	require.Equal(t, int64(50), h.PollMS)
	require.Equal(t, int64(600000), h.TTLMS)
	for range 2 { // a retried poll is as good as the first
		res, err = run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"moons"}`), Task: h}, true, nil)
		require.NoError(t, err)
		require.Equal(t, "report on moons", res.Content)
	}
	require.Equal(t, []string{"moons"}, lines(t, log))
}

// TestTaskInputGoesToTheRoundAndBackByTasksUpdate: a 2026-07-28 task in
// input_required hands its request to the round; the next poll sends the
// answer with tasks/update and ends with the result.
func TestTaskInputGoesToTheRoundAndBackByTasksUpdate(t *testing.T) {
	_, reg, _ := connectTasks(t)
	args := json.RawMessage(`{"what":"the launch"}`)
	res, err := run(t, reg, "mcp_jobs_confirm", tools.Request{Args: args}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	h := res.Task
	res, err = run(t, reg, "mcp_jobs_confirm", tools.Request{Args: args, Task: h}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Input, "the task asks for input")
	require.Len(t, res.Input.Asks, 1)
	ask := res.Input.Asks[0]
	require.Equal(t, "confirm-"+h.ID, ask.Key)
	require.Equal(t, "jobs", ask.Server)
	require.Equal(t, "Confirm the launch?", ask.Message)
	require.Contains(t, string(ask.RequestedSchema), `"ok"`)

	answers := map[string]json.RawMessage{ask.Key: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}
	res, err = run(t, reg, "mcp_jobs_confirm", tools.Request{Args: args, Task: h, InputResponses: answers, InputTrips: 1}, true, nil)
	require.NoError(t, err)
	require.Nil(t, res.Input)
	require.Equal(t, "confirmed the launch", res.Content)
}

// TestTaskInputOutsideARoundIsAskedInPlace: without a round the task's
// request goes to the call's Elicitor.
func TestTaskInputOutsideARoundIsAskedInPlace(t *testing.T) {
	_, reg, _ := connectTasks(t)
	var asked []tools.Elicitation
	res, err := run(t, reg, "mcp_jobs_confirm", tools.Request{Args: json.RawMessage(`{"what":"tea"}`)}, false,
		func(_ context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
			asked = append(asked, e)
			return tools.ElicitResult{Action: "decline"}, nil
		})
	require.NoError(t, err)
	require.Equal(t, "not confirmed: decline", res.Content)
	require.Len(t, asked, 1)
	require.Equal(t, "Confirm tea?", asked[0].Message)
}

// TestStdioTaskIsLostWithItsServer: a stdio server's task polled after the
// server's process is gone (here: the manager that ran it closed, as a
// worker that died) is lost: the poll says so, and does not create it
// again.
func TestStdioTaskIsLostWithItsServer(t *testing.T) {
	bin, err := taskServer()
	require.NoError(t, err)
	log := filepath.Join(t.TempDir(), "tasks")
	cfg := Config{CallTimeout: 20 * time.Second, Servers: []ServerConfig{
		{Name: "jobs", Command: bin, Env: map[string]string{"TASK_LOG": log, "TASK_MS": "5000"}},
	}}
	m1, reg1 := connect(t, cfg)
	args := json.RawMessage(`{"topic":"eels"}`)
	res, err := run(t, reg1, "mcp_jobs_research", tools.Request{Args: args}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	require.NoError(t, m1.Close())

	_, reg2 := connect(t, cfg)
	_, err = run(t, reg2, "mcp_jobs_research", tools.Request{Args: args, Task: res.Task}, true, nil)
	require.ErrorIs(t, err, tools.ErrOutcomeLost)
	require.ErrorContains(t, err, `mcp server "jobs", tool "research", task `+res.Task.ID)
	require.Equal(t, []string{"eels"}, lines(t, log), "the lost task was not made again")
}

// TestHTTPTaskOutlivesTheWorker: a streamable HTTP server's task has no
// connection of its own: a new manager (a worker started after the first
// died) polls it to its result, and the server made it once.
func TestHTTPTaskOutlivesTheWorker(t *testing.T) {
	log := filepath.Join(t.TempDir(), "tasks")
	url := httpTaskServer(t, log)
	cfg := Config{CallTimeout: 20 * time.Second, Servers: []ServerConfig{{Name: "jobs", URL: url}}}
	m1, reg1 := connect(t, cfg)
	args := json.RawMessage(`{"topic":"comets"}`)
	res, err := run(t, reg1, "mcp_jobs_research", tools.Request{Args: args}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	require.Empty(t, res.Task.Conn)
	require.NoError(t, m1.Close())

	_, reg2 := connect(t, cfg)
	res, err = run(t, reg2, "mcp_jobs_research", tools.Request{Args: args, Task: res.Task}, true, nil)
	require.NoError(t, err)
	require.Equal(t, "report on comets", res.Content)
	require.Equal(t, []string{"comets"}, lines(t, log))

	// Its input requests go to the round, and back by tasks/update, over
	// HTTP too.
	args = json.RawMessage(`{"what":"orbit"}`)
	res, err = run(t, reg2, "mcp_jobs_confirm", tools.Request{Args: args}, true, nil)
	require.NoError(t, err)
	h := res.Task
	require.NotNil(t, h)
	res, err = run(t, reg2, "mcp_jobs_confirm", tools.Request{Args: args, Task: h}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Input)
	key := res.Input.Asks[0].Key
	res, err = run(t, reg2, "mcp_jobs_confirm", tools.Request{Args: args, Task: h, InputTrips: 1,
		InputResponses: map[string]json.RawMessage{key: json.RawMessage(`{"action":"cancel"}`)}}, true, nil)
	require.NoError(t, err)
	require.Equal(t, "not confirmed: cancel", res.Content)
}

// TestCoreTasksOf20251125: a 2025-11-25 server gets params.task only for a
// tool whose execution.taskSupport allows it; its task is read with
// tasks/result, and what it asks arrives during that request, asked in
// place as an older server's request is.
func TestCoreTasksOf20251125(t *testing.T) {
	_, reg, log := connectTasks(t, "-protocol", "2025-11-25")
	res, err := run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"reefs"}`)}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	require.Equal(t, "2025-11-25", res.Task.Protocol)
	res, err = run(t, reg, "mcp_jobs_research", tools.Request{Args: json.RawMessage(`{"topic":"reefs"}`), Task: res.Task}, true, nil)
	require.NoError(t, err)
	require.Equal(t, "report on reefs", res.Content)
	require.Equal(t, []string{"reefs"}, lines(t, log))

	args := json.RawMessage(`{"what":"the dive"}`)
	res, err = run(t, reg, "mcp_jobs_confirm", tools.Request{Args: args}, true, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Task)
	var asked tools.Elicitation
	res, err = run(t, reg, "mcp_jobs_confirm", tools.Request{Args: args, Task: res.Task}, true,
		func(_ context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
			asked = e
			return tools.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		})
	require.NoError(t, err)
	require.Equal(t, "confirmed the dive", res.Content)
	require.Equal(t, "Confirm the dive?", asked.Message)
}

// TestTaskHandleSurvivesJSON: the handle goes through history as JSON.
func TestTaskHandleSurvivesJSON(t *testing.T) {
	h := round.MCPTask{Server: "jobs", ID: "t1", Protocol: "2026-07-28", Conn: "c", PollMS: 5, TTLMS: 9}
	b, err := json.Marshal(wire.ExecuteOutput{Task: &h})
	require.NoError(t, err)
	var out wire.ExecuteOutput
	require.NoError(t, json.Unmarshal(b, &out))
	require.Equal(t, &h, out.Task)
}
