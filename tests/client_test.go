package tests

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// goClient is a client.FromEnv built from the test's environment, as an
// application would build it.
func (e *env) goClient() *client.Client {
	e.t.Helper()
	for _, kv := range e.environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "TEMPORAL_ADDRESS", "REDIS_URL", "TASK_QUEUE", "TOOLROUND_SECRET_KEY", "TOOLROUND_SECRET_KEY_FILE":
			e.t.Setenv(name, value)
		}
	}
	c, err := client.FromEnv(context.Background())
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestQuickstartRunsAsTheREADMEShows builds examples/quickstart, runs it
// against a worker, and checks that the README's Go example is its code.
func TestQuickstartRunsAsTheREADMEShows(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(binDir, "quickstart")
	out, err := exec.Command("go", "build", "-o", bin, "../examples/quickstart").CombinedOutput()
	require.NoError(t, err, string(out))
	e.startWorker()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = e.environ()
	started := time.Now()
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	t.Logf("quickstart took %v:\n%s", time.Since(started).Round(time.Millisecond), out)
	require.Contains(t, string(out), "round 1  call_1 find_tools ok")
	require.Contains(t, string(out), "approving edit_file")
	require.Contains(t, string(out), `round 2  call_2 calculate  ok     "42"`)
	require.Contains(t, string(out), "round 2  call_3 edit_file  ok")
	b, err := os.ReadFile(filepath.Join(e.workdir, "hello.txt"))
	require.NoError(t, err, "the approved edit_file ran")
	require.Equal(t, "hello from toolround\n", string(b))

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("../examples/quickstart/main.go")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "examples/quickstart/main.go")
	require.True(t, ok, "the README names the quickstart")
	_, block, ok := strings.Cut(after, "```go\n")
	require.True(t, ok)
	block, _, _ = strings.Cut(block, "```")
	rest := string(src)
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.Index(rest, line)
		require.GreaterOrEqual(t, i, 0, "README line %q is not in examples/quickstart/main.go (in this order)", line)
		rest = rest[i+len(line):]
	}
}

// TestClientFromEnvResolvesAndSeals: a client built from the environment
// alone returns a large result whole (from Redis) and keeps a store_secret
// value out of workflow history (U2).
func TestClientFromEnvResolvesAndSeals(t *testing.T) {
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+testKey)
	big := strings.Repeat("a line of a big file that the round reads whole\n", 4000) + "THE END\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "big.txt"), []byte(big), 0o644))
	e.startWorker()
	c := e.goClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"read_files", "store_secret"}},
		call("r1", "read_files", map[string]any{"paths": []string{"big.txt"}}),
		call("s1", "store_secret", map[string]any{"name": "api_token", "value": "pl41n-t3xt-value"}))
	res, err := c.Run(ctx, &in)
	require.NoError(t, err)
	r := byID(*res)
	require.Equal(t, round.StatusOK, r["r1"].Status)
	require.Greater(t, len(r["r1"].Content), len(big), "the whole file, not a preview of %d characters", len(r["r1"].Content))
	require.Contains(t, r["r1"].Content, "THE END")
	require.NotEmpty(t, r["r1"].ContentRef, "it was too large for history, and resolved")
	require.Equal(t, round.StatusOK, r["s1"].Status, r["s1"].Content)
	history := rawHistory(t, c, in.WorkflowID())
	require.True(t, strings.Contains(history, `big.txt`), "the search sees payloads as they are stored")
	require.False(t, strings.Contains(history, "pl41n-t3xt-value"), "the store_secret value is in workflow history: it was not sealed before it was submitted")
}

// rawHistory is a workflow's history as the server stores it, payloads
// undecoded (the CLI's JSON shows them in base64, where no plaintext shows).
func rawHistory(t *testing.T, c *client.Client, workflowID string) string {
	t.Helper()
	it := c.Temporal().GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var b strings.Builder
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		raw, err := proto.Marshal(ev)
		require.NoError(t, err)
		b.Write(raw)
	}
	return b.String()
}

// TestRunWithApprovalHandler: Run tells the handler of each call that waits,
// delivers its decisions, and returns the result (U1).
func TestRunWithApprovalHandler(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	c := e.goClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"edit_file", "run_command"}},
		call("e1", "edit_file", map[string]any{"path": "approved.txt", "new_text": "yes\n"}),
		call("c1", "run_command", map[string]any{"command": "touch denied.txt"}))
	var mu sync.Mutex
	seen := map[string]client.PendingCall{}
	res, err := c.Run(ctx, &in, client.WithApprovalHandler(func(_ context.Context, p client.PendingCall) client.Decision {
		mu.Lock()
		seen[p.CallID] = p
		mu.Unlock()
		if p.Tool == "run_command" {
			return client.Decision{Approve: false, Reason: "not now"}
		}
		return client.Decision{Approve: true}
	}))
	require.NoError(t, err)
	r := byID(*res)
	require.Equal(t, round.StatusOK, r["e1"].Status, r["e1"].Content)
	require.Equal(t, round.StatusSkipped, r["c1"].Status)
	require.Contains(t, r["c1"].Content, "Skipped by user. Reason: not now")
	require.FileExists(t, filepath.Join(e.workdir, "approved.txt"))
	require.NoFileExists(t, filepath.Join(e.workdir, "denied.txt"))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2, "each waiting call once")
	p := seen["c1"]
	require.Equal(t, in.WorkflowID(), p.WorkflowID)
	require.Equal(t, client.KindConfirm, p.Kind)
	require.JSONEq(t, `{"command":"touch denied.txt"}`, p.Arguments)
}

// TestWaitingChannel: Start, answer the calls from Waiting, then Wait (U1).
func TestWaitingChannel(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	c := e.goClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"edit_file"}},
		call("e1", "edit_file", map[string]any{"path": "a.txt", "new_text": "a\n"}),
		call("e2", "edit_file", map[string]any{"path": "b.txt", "new_text": "b\n"}))
	run, err := c.Start(ctx, &in)
	require.NoError(t, err)
	var told []string
	for p := range c.Waiting(ctx, run.GetID()) { // closed when the round ends
		told = append(told, p.CallID)
		require.NoError(t, c.Approve(ctx, p.WorkflowID, p.CallID, client.ConfirmOptions{ApprovalID: p.ApprovalID}))
	}
	require.ElementsMatch(t, []string{"e1", "e2"}, told)
	res, err := c.Wait(ctx, run)
	require.NoError(t, err)
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, r.Content)
	}
}

// TestRunFailsFastWithoutWorker: no worker polls the task queue, so Run says
// so at once and submits nothing (U2).
func TestRunFailsFastWithoutWorker(t *testing.T) {
	e := newEnv(t)
	c := e.goClient()
	in := e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}}))
	started := time.Now()
	_, err := c.Run(context.Background(), &in)
	require.ErrorIs(t, err, client.ErrNoWorker)
	require.Less(t, time.Since(started), 3*time.Second)
	require.Contains(t, err.Error(), `no worker polls task queue "`+e.taskQueue+`"`)
	require.NotContains(t, err.Error(), "\n")
	_, err = c.Temporal().DescribeWorkflow(context.Background(), in.WorkflowID(), "")
	var nf *serviceerror.NotFound
	require.True(t, errors.As(err, &nf), "nothing was submitted: %v", err)

	_, err = c.Pending(context.Background(), in.WorkflowID())
	require.ErrorIs(t, err, client.ErrRoundNotFound)
}

// TestStarterToolsNeedsNoServices: the tools array comes from client.Tools,
// which needs no worker, Temporal or Redis (U2).
func TestStarterToolsNeedsNoServices(t *testing.T) {
	e := newEnv(t, "TEMPORAL_ADDRESS=127.0.0.1:1", "REDIS_URL=redis://127.0.0.1:1/0", "TOOLS_WORKDIR=/nonexistent/workdir")
	for _, provider := range []string{"openai", "claude-code"} {
		listed := e.starter(context.Background(), "", "tools", "--provider", provider)
		require.Equal(t, 0, listed.code, listed.stderr)
		ts, err := client.Tools(provider)
		require.NoError(t, err)
		want, err := json.Marshal(ts)
		require.NoError(t, err)
		require.JSONEq(t, string(want), listed.stdout)
		require.Contains(t, listed.stdout, `"find_tools"`)
	}
}

// TestRunHandleKeepsStateAndResumes: the Go run handle (U9) submits each
// round with the state the one before returned, and a handle reopened after
// the caller lost it finds the run's last round and goes on from its state;
// a run whose last round failed is refused.
func TestRunHandleKeepsStateAndResumes(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	c := e.goClient()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	defaults := round.Input{Provider: "openai"}
	h := c.NewRun(e.session, "run-h", defaults)
	require.Equal(t, names.WorkflowID(e.session, "run-h", 1), h.NextWorkflowID())
	res, err := h.Calls(ctx, []round.ToolCall{call("f1", "find_tools", map[string]any{"query": "select:calculate"})})
	require.NoError(t, err)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	// calculate runs only because the handle sent round 1's state (its
	// schema was fetched there).
	calc := map[string]any{"name": "calculate", "args": map[string]any{"expression": "6*7"}}
	res, err = h.Calls(ctx, []round.ToolCall{call("c1", "run_tool", calc)})
	require.NoError(t, err)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Equal(t, 2, h.Number())

	// The caller crashes; a new handle takes the run from its last round.
	again, err := c.ResumeRun(ctx, e.session, "run-h", defaults)
	require.NoError(t, err)
	require.Equal(t, 2, again.Number())
	require.Equal(t, h.State(), again.State())
	res, err = again.Calls(ctx, []round.ToolCall{call("c2", "run_tool", calc)})
	require.NoError(t, err)
	require.Equal(t, round.StatusDeduped, res.Results[0].Status, "round 3 has the run's dedupe map: %s", res.Results[0].Content)
	require.Equal(t, names.WorkflowID(e.session, "run-h", 3), res.WorkflowID)

	fresh, err := c.ResumeRun(ctx, e.session, "run-none", defaults)
	require.NoError(t, err)
	require.Zero(t, fresh.Number())
	require.Nil(t, fresh.State())

	// A run whose last round failed (terminated while it waited) cannot go
	// on from a state it does not have.
	failed := c.NewRun(e.session, "run-f", round.Input{Provider: "claude-code"})
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"edit_file"}},
		call("e1", "edit_file", map[string]any{"path": "x.txt", "new_text": "x\n"}))
	in.RunID = "run-f"
	_, err = c.Start(ctx, &in)
	require.NoError(t, err)
	e.waitPending(in.WorkflowID(), "e1")
	require.NoError(t, c.Temporal().TerminateWorkflow(ctx, in.WorkflowID(), "", "test"))
	_, err = c.ResumeRun(ctx, e.session, "run-f", round.Input{Provider: "claude-code"})
	require.ErrorIs(t, err, client.ErrRoundFailed)
	require.Zero(t, failed.Number())
}
