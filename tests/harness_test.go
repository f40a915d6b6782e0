// Package tests runs toolround as users do: the real worker and starter
// binaries against a real Temporal server and real Redis, with processes
// killed and restarted mid-round.
package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

var (
	binDir        string
	workerBin     string
	starterBin    string
	testWorkerBin string
	// testToolWorkerBin is tests/testtoolworker, a tool worker (Y1).
	testToolWorkerBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolround-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	workerBin, starterBin = filepath.Join(dir, "worker"), filepath.Join(dir, "starter")
	testWorkerBin = filepath.Join(dir, "testworker")
	testToolWorkerBin = filepath.Join(dir, "testtoolworker")
	build := exec.Command("go", "build", "-o", dir+"/", "../cmd/worker", "../cmd/starter", "./testworker", "./testtoolworker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build worker and starter:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func temporalAddress() string {
	if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" {
		return a
	}
	return "127.0.0.1:7233"
}

// requireServices fails (CI) or skips (elsewhere) when Temporal or Redis is
// not there.
func requireServices(t *testing.T) {
	t.Helper()
	requireTemporal(t)
	testenv.Redis(t)
}

// requireTemporal fails (CI) or skips (elsewhere) when Temporal is not
// there.
func requireTemporal(t *testing.T) {
	t.Helper()
	c, err := net.DialTimeout("tcp", temporalAddress(), 2*time.Second)
	if err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", temporalAddress(), err)
	}
	_ = c.Close()
}

// env is one test's isolated setting: its own task queue, workdir and session.
type env struct {
	t         *testing.T
	taskQueue string
	workdir   string
	session   string
	extra     []string
}

func newEnv(t *testing.T, extra ...string) *env {
	t.Helper()
	requireServices(t)
	id := fmt.Sprintf("%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), time.Now().UnixNano())
	return &env{t: t, taskQueue: "test-" + id, workdir: t.TempDir(), session: "sess-" + id, extra: extra}
}

func (e *env) environ() []string {
	vars := append(os.Environ(),
		"TEMPORAL_ADDRESS="+temporalAddress(),
		"REDIS_URL="+testenv.RedisURL(),
		"TASK_QUEUE="+e.taskQueue,
		"TOOLS_WORKDIR="+e.workdir,
		"HEARTBEAT_TIMEOUT=2s",
	)
	return append(vars, e.extra...)
}

// worker is a running worker process.
type worker struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker starts bin/worker and waits until it polls.
func (e *env) startWorker() *worker {
	e.t.Helper()
	return e.startWorkerBin(workerBin)
}

// startWorkerBin starts a worker binary with the test's environment and
// extra variables, and waits until it polls.
func (e *env) startWorkerBin(bin string, extra ...string) *worker {
	e.t.Helper()
	return e.startWorkerCmd(bin, nil, extra...)
}

// startWorkerCmd is startWorkerBin, with files the worker inherits as
// descriptors 3 and up, as from a careless parent.
func (e *env) startWorkerCmd(bin string, files []*os.File, extra ...string) *worker {
	e.t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(e.environ(), extra...)
	cmd.ExtraFiles = files
	w := e.startProcess(cmd, "worker")
	require.Eventually(e.t, func() bool { return strings.Contains(w.logs.String(), "worker started") }, 30*time.Second, 20*time.Millisecond,
		"worker did not start:\n%s", w.logs.String())
	return w
}

// startProcess starts a command whose output is its log, and kills it when
// the test ends (its log in the test's, when the test failed).
func (e *env) startProcess(cmd *exec.Cmd, what string) *worker {
	e.t.Helper()
	w := &worker{cmd: cmd, logs: &syncBuffer{}}
	w.cmd.Stdout, w.cmd.Stderr = w.logs, w.logs
	w.done = startUntilCleanup(e.t, cmd, what+" log", w.logs.String)
	return w
}

// startUntilCleanup starts cmd and kills it when the test ends, writing
// logs() to the test's log under what when the test failed; the channel
// it returns is closed once cmd has exited.
func startUntilCleanup(t *testing.T, cmd *exec.Cmd, what string, logs func() string) chan struct{} {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s:\n%s", what, logs())
		}
	})
	return done
}

// alive reports whether the process still runs.
func (w *worker) alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (w *worker) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	<-w.done
}

type result struct {
	stdout, stderr string
	code           int
}

// starter runs bin/starter with args and optional stdin.
func (e *env) starter(ctx context.Context, stdin string, args ...string) result {
	e.t.Helper()
	r, err := e.runStarter(ctx, stdin, args...)
	if err != nil {
		e.t.Fatalf("starter %v: %v", args, err)
	}
	return r
}

// runStarter runs the starter; err is set only when it could not run to
// its own exit (it did not start, or ctx ended first).
func (e *env) runStarter(ctx context.Context, stdin string, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, starterBin, args...)
	cmd.Env = e.environ()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return result{}, err
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}, nil
}

// round runs `starter round -` and decodes the result.
func (e *env) round(in round.Input) round.Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := e.starter(ctx, mustJSON(e.t, in), "round", "-")
	require.Equal(e.t, 0, r.code, "starter round failed: %s", r.stderr)
	var res round.Result
	require.NoError(e.t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	return res
}

// startRound runs `starter round -` in the background.
func (e *env) startRound(in round.Input) <-chan result {
	return e.startStarter(mustJSON(e.t, in), "round", "-")
}

// startStarter runs the starter in the background; it is killed after 3
// minutes.
func (e *env) startStarter(stdin string, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		r, err := e.runStarter(ctx, stdin, args...)
		if err != nil {
			r = result{stderr: err.Error(), code: -1}
		}
		ch <- r
	}()
	return ch
}

func decodeResult(t *testing.T, r result) round.Result {
	t.Helper()
	require.Equal(t, 0, r.code, "starter round failed: %s", r.stderr)
	var res round.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	return res
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func (e *env) input(roundNo int, provider string, state *round.RunState, calls ...round.ToolCall) round.Input {
	return round.Input{SessionID: e.session, RunID: "run-1", Round: roundNo, Provider: provider, State: state,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
}

func call(id, name string, args any) round.ToolCall {
	var a string
	switch v := args.(type) {
	case string:
		a = v
	default:
		b, _ := json.Marshal(v)
		a = string(b)
	}
	return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(a)}}
}

func runTool(id, name string, args any) round.ToolCall {
	return call(id, "run_tool", map[string]any{"name": name, "args": args})
}

func byID(res round.Result) map[string]round.CallResult {
	m := map[string]round.CallResult{}
	for _, r := range res.Results {
		m[r.CallID] = r
	}
	return m
}

// requireEveryCallOnce checks P3.1 on a real result.
func requireEveryCallOnce(t *testing.T, in round.Input, res round.Result) {
	t.Helper()
	require.Len(t, res.Results, len(in.Assistant.ToolCalls))
	require.Len(t, res.Messages, len(in.Assistant.ToolCalls))
	for i, c := range in.Assistant.ToolCalls {
		require.Equal(t, c.ID, res.Results[i].CallID)
		require.Equal(t, c.ID, res.Messages[i].ToolCallID)
	}
}

// countLines counts the lines of a workdir file equal to want.
func countLines(t *testing.T, path, want string) int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if s.Text() == want {
			n++
		}
	}
	return n
}
