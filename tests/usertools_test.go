package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/toolworker"
)

// orderTools are a program's own tools: a read-only lookup and a
// side-effecting refund that remembers each operation id it was given.
type orderTools struct {
	mu      sync.Mutex
	lookups int
	ops     []string
}

func (o *orderTools) tools() []toolworker.Tool {
	lookup := toolworker.New("lookup_order", func(_ context.Context, _ toolworker.Call, a struct {
		ID string `json:"id"`
	}) (any, error) {
		o.mu.Lock()
		o.lookups++
		o.mu.Unlock()
		return map[string]any{"id": a.ID, "status": "shipped"}, nil
	}, toolworker.ReadOnly(), toolworker.Description("Look an order up by its id."))
	refund := toolworker.New("refund_order", func(_ context.Context, call toolworker.Call, a struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}) (any, error) {
		if a.Amount <= 0 {
			return nil, &toolworker.ToolError{Message: "a refund needs a positive amount"}
		}
		o.mu.Lock()
		o.ops = append(o.ops, call.OperationID)
		o.mu.Unlock()
		return "refunded " + a.ID, nil
	}, toolworker.Timeouts(30*time.Second, 3*time.Second, 6*time.Second), toolworker.Subject("id"))
	return []toolworker.Tool{lookup, refund}
}

// serveTools serves tools on queue from this process until the test ends.
func (e *env) serveTools(queue string, tl []toolworker.Tool) context.CancelFunc {
	t := e.t
	t.Helper()
	c, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- toolworker.Serve(ctx, c, queue, tl, toolworker.Options{ToolroundTaskQueue: e.taskQueue})
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(func() { stop(); c.Close() })
	return stop
}

// waitForTools waits until the worker lists every named tool of queue as
// served by a live tool worker (`starter tools --worker`, Y2).
func (e *env) waitForTools(queue string, names ...string) tools.QueueState {
	e.t.Helper()
	var st tools.QueueState
	require.Eventually(e.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := e.starter(ctx, "", "tools", "--provider", "openai", "--worker")
		var ts tools.Toolset
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ts) != nil {
			return false
		}
		for _, q := range ts.Queues {
			if q.Queue == queue {
				st = q
				got := strings.Join(q.Tools, ",")
				for _, n := range names {
					if !strings.Contains(got, n) {
						return false
					}
				}
				return q.Available
			}
		}
		return false
	}, 60*time.Second, 300*time.Millisecond, "the worker never listed the tools of queue %s", queue)
	return st
}

func TestUserToolsRunInARoundY3(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e := newEnv(t, "METRICS_ADDR="+addr)
	queue := e.startWorkerForTools("orders-", true)
	var o orderTools
	e.serveTools(queue, o.tools())
	st := e.waitForTools(queue, "lookup_order", "refund_order")
	require.True(t, st.Trusted)

	got := e.ordersRound("lookup_order", "refund_order")
	require.Equal(t, round.StatusOK, got["c1"].Status, got["c1"].Content)
	require.JSONEq(t, `{"id":"A-1","status":"shipped"}`, got["c1"].Content)
	require.Equal(t, round.StatusOK, got["c2"].Status, got["c2"].Content)
	require.Equal(t, "refunded A-1", got["c2"].Content)
	require.Equal(t, round.StatusError, got["c3"].Status)
	require.Equal(t, "tool_error", got["c3"].ErrorCode)
	require.Contains(t, got["c3"].Content, "positive amount")
	require.Equal(t, round.StatusInvalid, got["c4"].Status, "pass 1 validates against the announced schema")

	// Calls counted by tool and queue; the queue's gauges (Y2, M).
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = metricFamilies(t, addr)
		return counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "lookup_order", "status": "ok", "queue": queue}) == 1
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, 1.0, counter(fams, "toolround_tool_calls_total", map[string]string{"tool": "refund_order", "status": "error", "queue": queue}))
	q := sample(fams, "toolround_tool_queue_available", map[string]string{"queue": queue})
	require.NotNil(t, q)
	require.Equal(t, 1.0, q.GetGauge().GetValue())
	require.Equal(t, 2.0, sample(fams, "toolround_tool_queue_tools", map[string]string{"queue": queue}).GetGauge().GetValue())

	o.mu.Lock()
	defer o.mu.Unlock()
	require.Equal(t, 1, o.lookups)
	require.Len(t, o.ops, 1, "only the refund with an amount got past the function's own check")
	require.NotEmpty(t, o.ops[0])
	require.Equal(t, got["c2"].OperationID, o.ops[0], "the function got the call's operation id")
}

// servedOrders is an env whose worker runs the queue orders-<its task
// queue>, not trusted, whose tools o serves in the test's process until
// stop.
func servedOrders(t *testing.T) (e *env, queue string, o *orderTools, stop context.CancelFunc) {
	t.Helper()
	e = newEnv(t)
	queue = e.startWorkerForTools("orders-", false)
	o = &orderTools{}
	stop = e.serveTools(queue, o.tools())
	e.waitForTools(queue, "refund_order")
	return e, queue, o, stop
}

// A side-effecting call on a queue whose tool worker is gone ends
// tool_unavailable after the tool's schedule-to-start timeout, naming the
// queue, and never runs (Y4).
func TestUserToolUnavailableY4(t *testing.T) {
	e, queue, o, stop := servedOrders(t)
	stop()

	in := e.input(1, "claude-code", fetched(), call("c1", "refund_order", map[string]any{"id": "B-2", "amount": 3}))
	in.AutoApprove = true
	res := e.round(in)
	c := byID(res)["c1"]
	require.Equal(t, round.StatusError, c.Status, c.Content)
	require.Equal(t, round.ErrorCodeToolUnavailable, c.ErrorCode)
	require.Contains(t, c.Content, queue)
	o.mu.Lock()
	require.Empty(t, o.ops)
	o.mu.Unlock()
}

// A tool worker whose queue the worker does not run is refused at its
// start, with one line naming the queue and TOOL_QUEUES (Y2).
func TestUserToolsOfAnotherQueueAreRefusedY2(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	c, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer c.Close()
	var o orderTools
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = toolworker.Announce(ctx, c, "elsewhere-"+e.taskQueue, o.tools(), toolworker.Options{ToolroundTaskQueue: e.taskQueue})
	require.ErrorIs(t, err, toolworker.ErrRefused)
	require.Contains(t, err.Error(), "add it to TOOL_QUEUES")
}

// ordersRound runs one round of an order lookup and refund tool pair,
// approved ahead: c1 looks A-1 up, c2 refunds 5, c3 refunds 0 (which the
// tool refuses), c4 calls the lookup with arguments its schema refuses.
func (e *env) ordersRound(lookup, refund string) map[string]round.CallResult {
	e.t.Helper()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{lookup, refund}},
		call("c1", lookup, map[string]any{"id": "A-1"}),
		call("c2", refund, map[string]any{"id": "A-1", "amount": 5}),
		call("c3", refund, map[string]any{"id": "A-1", "amount": 0}),
		call("c4", lookup, map[string]any{"nope": 1}),
	)
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(e.t, in, res)
	return byID(res)
}

// fetched is a run state whose model has the order tools' schemas (P1.4).
func fetched() *round.RunState {
	return &round.RunState{Fetched: []string{"lookup_order", "refund_order"}}
}

// startToolWorker starts tests/testtoolworker on queue, its marks in dir.
func (e *env) startToolWorker(queue, dir string) *worker {
	e.t.Helper()
	cmd := exec.Command(testToolWorkerBin)
	cmd.Env = append(e.environ(), "TOOL_QUEUE="+queue, "TOOLROUND_TASK_QUEUE="+e.taskQueue, "MARKS="+dir)
	return e.startProcess(cmd, "tool worker")
}

// startWorkerForTools starts the worker with TOOL_QUEUES naming one tool
// queue of the test's own, prefix and the task queue, trusted or not, and
// returns that queue (Y2).
func (e *env) startWorkerForTools(prefix string, trusted bool) string {
	e.t.Helper()
	queue := prefix + e.taskQueue
	mark := ""
	if trusted {
		mark = ":trusted"
	}
	e.extra = append(e.extra, "TOOL_QUEUES="+queue+mark)
	e.startWorker()
	return queue
}

// markLines is the words of the file at path: what a test server or tool
// noted there, one word a line; none when there is no file.
func markLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// A tool worker killed with SIGKILL mid-call: a side-effecting call ends
// unknown_outcome and never runs again; a read-only call runs again on the
// restarted tool worker once its heartbeat times out (Y4).
func TestUserToolWorkerKilledY4(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("holds-", true)
	marks := t.TempDir()
	tw := e.startToolWorker(queue, marks)
	e.waitForTools(queue, "hold_refund", "hold_lookup")
	state := &round.RunState{Fetched: []string{"hold_refund", "hold_lookup"}}

	in := e.input(1, "claude-code", state, call("r1", "hold_refund", map[string]any{"id": "C-3"}))
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return len(markLines(t, filepath.Join(marks, "refund"))) == 1 }, time.Minute, 50*time.Millisecond)
	tw.kill(t)
	res := decodeResult(t, <-done)
	r := byID(res)["r1"]
	require.Equal(t, round.StatusUnknownOutcome, r.Status, r.Content)
	require.Equal(t, []string{r.OperationID}, markLines(t, filepath.Join(marks, "refund")), "the function ran once, with the call's operation id")

	tw = e.startToolWorker(queue, marks)
	e.waitForTools(queue, "hold_lookup")
	in = e.input(2, "claude-code", state, call("l1", "hold_lookup", map[string]any{"id": "D-4"}))
	done = e.startRound(in)
	require.Eventually(t, func() bool { return len(markLines(t, filepath.Join(marks, "lookup"))) == 1 }, time.Minute, 50*time.Millisecond)
	tw.kill(t)
	e.startToolWorker(queue, marks)
	res = decodeResult(t, <-done)
	l := byID(res)["l1"]
	require.Equal(t, round.StatusOK, l.Status, l.Content)
	require.Equal(t, "found D-4", l.Content)
	require.Equal(t, 2, l.Attempts)
	require.Len(t, markLines(t, filepath.Join(marks, "lookup")), 2)
}

// A cancelled round reaches a user tool's function through its context
// within one heartbeat interval, and the call ends cancelled (Y1, Y4).
func TestUserToolCancelReachesTheFunctionY4(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("holds-", false)
	marks := t.TempDir()
	e.startToolWorker(queue, marks)
	e.waitForTools(queue, "hold_refund")
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"hold_refund"}}, call("r1", "hold_refund", map[string]any{"id": "E-5"}))
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return len(markLines(t, filepath.Join(marks, "refund"))) == 1 }, time.Minute, 50*time.Millisecond)
	cancelled := time.Now()
	r := e.starter(context.Background(), "", "cancel", names.WorkflowID(e.session, "run-1", 1))
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool { return len(markLines(t, filepath.Join(marks, "refund-cancelled"))) == 1 }, 20*time.Second, 50*time.Millisecond)
	// hold_refund heartbeats every second (a 3 s heartbeat timeout): the
	// cancel arrives with the next heartbeat's answer.
	require.Less(t, time.Since(cancelled), 5*time.Second)
	res := <-done
	t.Log(res.stdout, res.stderr)
}

// startPythonToolWorker serves tests/testdata/usertools/orders.py with
// `python -m toolround.tools serve` on queue, its marks in dir.
func (e *env) startPythonToolWorker(queue, dir string) *worker {
	e.t.Helper()
	return e.servePythonFile("testdata/usertools/orders.py", queue, dir)
}

// servePythonFile serves a file's tools with `python -m toolround.tools
// serve` on queue.
func (e *env) servePythonFile(path, queue, dir string) *worker {
	e.t.Helper()
	py := python(e.t, "temporalio", "pydantic", "toolround.tools")
	file, err := filepath.Abs(path)
	require.NoError(e.t, err)
	src, err := filepath.Abs(filepath.Join("..", "clients", "python", "src"))
	require.NoError(e.t, err)
	cmd := exec.Command(py, "-m", "toolround.tools", "serve", file, "--task-queue", queue)
	cmd.Env = append(e.environ(), "TOOLROUND_TASK_QUEUE="+e.taskQueue, "MARKS="+dir,
		"PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1") // this tree's package
	return e.startProcess(cmd, "python tool worker")
}

// Python tools in a round (Y3): a read-only tool runs without asking on a
// trusted queue, a side-effecting one asks, and runs once approved with its
// operation id; its ToolError is an error result; arguments are validated
// against the schema pydantic made.
func TestPythonToolWorkerInARoundY3(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("py-", true)
	marks := t.TempDir()
	e.startPythonToolWorker(queue, marks)
	e.waitForTools(queue, "py_lookup", "py_refund")

	// The console lists them with their queue and its state (Y2).
	con := e.startConsole()
	var listed tools.FormattedToolset
	reply := con.call(t, "GET", "/api/v1/tools?provider=claude-code&format=anthropic&worker=true", con.agent, nil)
	require.Equal(t, 200, reply.code, string(reply.body))
	reply.json(t, &listed)
	require.Contains(t, string(reply.body), `"name":"py_refund"`, "the anthropic tools array has the user tool")
	var q *tools.QueueState
	for i := range listed.Queues {
		if listed.Queues[i].Queue == queue {
			q = &listed.Queues[i]
		}
	}
	require.NotNil(t, q, string(reply.body))
	require.True(t, q.Available)
	require.True(t, q.Trusted)
	require.ElementsMatch(t, []string{"py_lookup", "py_refund"}, q.Tools)
	for _, bad := range []string{"yes", "", "TRUE"} {
		require.Equal(t, 400, con.call(t, "GET", "/api/v1/tools?provider=claude-code&worker="+bad, con.agent, nil).code, "worker=%q", bad)
	}

	state := &round.RunState{Fetched: []string{"py_lookup", "py_refund"}}
	in := e.input(1, "claude-code", state,
		call("a", "py_lookup", map[string]any{"order_id": "F-6"}),
		call("b", "py_refund", map[string]any{"order_id": "F-6", "amount": 7}),
		call("c", "py_refund", map[string]any{"order_id": "F-6", "amount": 0}),
		call("d", "py_lookup", map[string]any{"order_id": 6}),
	)
	done := e.startRound(in)
	wid := names.WorkflowID(e.session, "run-1", 1)
	for _, p := range e.waitPending(wid, "b", "c") {
		require.Equal(t, queue, p.Queue, "a waiting call names its tool's queue")
	}
	require.Contains(t, con.page(t, con.approver, "/calls/"+wid+"?call=b"), "served by the tool workers of queue <code>"+queue+"</code>: 1 tool worker polls it.",
		"the card names the queue, and the tool workers that poll it (Y2)")
	require.Contains(t, con.page(t, con.approver, "/"), "served by the tool workers of queue <code>"+queue+"</code>: 1 tool worker polls it.", "so does the inbox's")
	for _, id := range []string{"b", "c"} {
		r := e.starter(context.Background(), "", "approve", wid, id)
		require.Equal(t, 0, r.code, r.stderr)
	}
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	got := byID(res)
	require.Equal(t, round.StatusOK, got["a"].Status, got["a"].Content)
	require.JSONEq(t, `{"order_id":"F-6","status":"shipped"}`, got["a"].Content)
	require.Equal(t, round.DecisionNotNeeded, got["a"].Approval.Decision, "a read-only tool of a trusted queue does not ask")
	require.Equal(t, round.DecisionApproved, got["b"].Approval.Decision)
	require.Equal(t, round.StatusOK, got["b"].Status, got["b"].Content)
	require.Equal(t, "refunded 7 on F-6", got["b"].Content)
	require.Equal(t, round.StatusError, got["c"].Status)
	require.Equal(t, "tool_error", got["c"].ErrorCode)
	require.Equal(t, round.StatusInvalid, got["d"].Status, got["d"].Content)
	require.Equal(t, []string{got["b"].OperationID}, markLines(t, filepath.Join(marks, "refund")))
	require.Equal(t, []string{"F-6"}, markLines(t, filepath.Join(marks, "lookup")))

	// py_lookup declares cache_seconds: the same call in another run of
	// the session is answered from the cache, and never reaches Python.
	in = e.input(1, "claude-code", state, call("e", "py_lookup", map[string]any{"order_id": "F-6"}))
	in.RunID = "run-2"
	res = e.round(in)
	cached := byID(res)["e"]
	require.Equal(t, round.StatusOK, cached.Status, cached.Content)
	require.True(t, strings.HasPrefix(cached.Content, "[from cache"), cached.Content)
	require.Contains(t, cached.Content, `"shipped"`)
	require.Equal(t, []string{"F-6"}, markLines(t, filepath.Join(marks, "lookup")))
}

// A rule remembered for a user tool keeps to the schema its round saw
// (Y3): it approves the tool's next calls while the tool worker keeps that
// schema, and a call asks again once the tool changed.
func TestUserToolRuleBoundToItsSchemaY3(t *testing.T) {
	e, queue, _, stop := servedOrders(t)
	args := map[string]any{"id": "G-7", "amount": 2}
	wid := func(n int) string { return names.WorkflowID(e.session, "run-1", n) }

	done := e.startRound(e.input(1, "claude-code", fetched(), call("a", "refund_order", args)))
	e.waitPending(wid(1), "a")
	r := e.starter(context.Background(), "", "approve", wid(1), "a", "--remember", "--pattern", "G-*")
	require.Equal(t, 0, r.code, r.stderr)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, byID(res)["a"].Status, byID(res)["a"].Content)
	require.NotEmpty(t, res.State.Allow[0].Schema, "the rule names the tool's schema")

	args["amount"] = 3 // another call: P1.3 would answer the same one from the run
	done = e.startRound(e.input(2, "claude-code", res.State, call("b", "refund_order", args),
		call("b2", "refund_order", map[string]any{"id": "H-1", "amount": 3})))
	e.waitPending(wid(2), "b2") // the glob is over the tool's subject, id: H-1 is not G-*
	r = e.starter(context.Background(), "", "deny", wid(2), "b2")
	require.Equal(t, 0, r.code, r.stderr)
	res = decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, byID(res)["b"].Status, byID(res)["b"].Content)
	require.Equal(t, round.DecisionRule, byID(res)["b"].Approval.Decision, "the same schema: the rule approves")
	require.Equal(t, round.StatusSkipped, byID(res)["b2"].Status)

	// The tool worker comes back with refund_order taking a reason too.
	stop()
	changed := toolworker.New("refund_order", func(_ context.Context, call toolworker.Call, a struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
		Reason string `json:"reason,omitempty"`
	}) (any, error) {
		return "refunded " + a.ID, nil
	})
	e.serveTools(queue, []toolworker.Tool{changed})
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out := e.starter(ctx, "", "tools", "--provider", "claude-code", "--worker").stdout
		return strings.Contains(out, `"reason"`)
	}, time.Minute, 300*time.Millisecond, "the worker never read the changed schema")

	args["amount"] = 4
	done = e.startRound(e.input(3, "claude-code", res.State, call("c", "refund_order", args)))
	e.waitPending(wid(3), "c")
	r = e.starter(context.Background(), "", "deny", wid(3), "c")
	require.Equal(t, 0, r.code, r.stderr)
	res = decodeResult(t, <-done)
	require.Equal(t, round.StatusSkipped, byID(res)["c"].Status, "the person was asked again, and said no")
}

// The README's first example of another language is examples/python/orders.py,
// and it serves as it says: a read-only lookup without asking on a trusted
// queue, a refund that gets the call's operation id (Y1, Y3).
func TestReadmeOrdersExampleServesY1(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	file, err := os.ReadFile("../examples/python/orders.py")
	require.NoError(t, err)
	require.Contains(t, string(readme), "```python\n"+string(file)+"```", "the README shows examples/python/orders.py as it is")

	e := newEnv(t)
	queue := e.startWorkerForTools("orders-", true)
	e.servePythonFile("../examples/python/orders.py", queue, t.TempDir())
	e.waitForTools(queue, "lookup_order", "refund")
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"lookup_order", "refund"}},
		call("a", "lookup_order", map[string]any{"order_id": "H-8"}),
		call("b", "refund", map[string]any{"order_id": "H-8", "amount": 5}))
	in.AutoApprove = true
	res := e.round(in)
	got := byID(res)
	require.Equal(t, round.StatusOK, got["a"].Status, got["a"].Content)
	require.JSONEq(t, `{"order_id":"H-8","status":"shipped"}`, got["a"].Content)
	require.Equal(t, round.StatusOK, got["b"].Status, got["b"].Content)
	require.Equal(t, "refunded 5 on H-8, key "+got["b"].OperationID, got["b"].Content)
}

// A side-effecting user tool that reconciles: its tool worker killed after
// the effect, the round asks the restarted tool worker, which finds the
// effect, and the call is ok (reconciled) without a second run (Y4, R).
func TestUserToolReconcilesALostAttemptY4(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("holds-", false)
	marks := t.TempDir()
	tw := e.startToolWorker(queue, marks)
	e.waitForTools(queue, "hold_transfer")
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"hold_transfer"}}, call("t1", "hold_transfer", map[string]any{"id": "J-9"}))
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return len(markLines(t, filepath.Join(marks, "transfer"))) == 1 }, time.Minute, 50*time.Millisecond)
	tw.kill(t)
	e.startToolWorker(queue, marks)
	res := decodeResult(t, <-done)
	r := byID(res)["t1"]
	require.Equal(t, round.StatusOK, r.Status, r.Content)
	require.True(t, r.Reconciled)
	require.Contains(t, r.Content, "took effect")
	require.Equal(t, []string{r.OperationID}, markLines(t, filepath.Join(marks, "transfer")), "it ran once")
}

// A TypeScript tool worker, clients/typescript's toolround/tools in a node
// process of its own, announces a read-only and a side-effecting tool; a
// round through the real worker calls both, the side effect with its
// operation id; SIGTERM stops the tool worker, whose serve then resolves
// (Y1, Y1a).
func TestTypeScriptToolWorkerY1(t *testing.T) {
	node, dir := typescriptClient(t, "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "zod")
	requireNode20(t, node)
	e := newEnv(t)
	queue := e.startWorkerForTools("ts-orders-", true)

	cmd := exec.Command(node, filepath.Join("dist", "test", "tool-worker.js"))
	cmd.Dir = dir
	cmd.Env = append(e.environ(), "TOOL_QUEUE="+queue, "TOOLROUND_TASK_QUEUE="+e.taskQueue)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("TypeScript tool worker log:\n%s", logs.String())
		}
	})

	st := e.waitForTools(queue, "ts_lookup_order", "ts_refund_order")
	require.True(t, st.Trusted)
	got := e.ordersRound("ts_lookup_order", "ts_refund_order")
	require.Equal(t, round.StatusOK, got["c1"].Status, got["c1"].Content)
	require.JSONEq(t, `{"id":"A-1","status":"shipped","attempt":1}`, got["c1"].Content)
	require.Equal(t, 1, got["c1"].Attempts, "the result's attempt")
	require.Equal(t, round.StatusOK, got["c2"].Status, got["c2"].Content)
	require.NotEmpty(t, got["c2"].OperationID)
	require.Equal(t, "refunded A-1 as operation "+got["c2"].OperationID, got["c2"].Content, "the function got the call's operation id")
	require.Equal(t, round.StatusError, got["c3"].Status, got["c3"].Content)
	require.Equal(t, "tool_error", got["c3"].ErrorCode)
	require.Contains(t, got["c3"].Content, "positive amount")
	require.Equal(t, round.StatusInvalid, got["c4"].Status, "pass 1 validates against the schema the TypeScript tool worker announced")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-exited:
		require.NoError(t, waitErr, "the tool worker's exit after SIGTERM")
		require.Contains(t, logs.String(), "tool worker stopped", "serve resolved once the worker stopped")
	case <-time.After(30 * time.Second):
		t.Fatal("the TypeScript tool worker did not stop within 30s of SIGTERM")
	}
}

// startTypeScriptToolWorker runs clients/typescript's tests/tool-worker.ts
// (compiled) as a tool worker of queue until the test ends.
func (e *env) startTypeScriptToolWorker(queue string) {
	e.t.Helper()
	node, dir := typescriptClient(e.t, "@temporalio/worker", "@temporalio/client", "@temporalio/activity", "zod")
	requireNode20(e.t, node)
	cmd := exec.Command(node, filepath.Join("dist", "test", "tool-worker.js"))
	cmd.Dir = dir
	cmd.Env = append(e.environ(), "TOOL_QUEUE="+queue, "TOOLROUND_TASK_QUEUE="+e.taskQueue)
	e.startProcess(cmd, "TypeScript tool worker")
}

// The same tool, same_echo, served in Go, Python and TypeScript, each on
// its own queue of its own worker: the same round's calls give the same
// results through all three, the operation id included; a ToolError with a
// code is the same error result; arguments that do not fit the schema are
// refused in pass 1 alike (Y1, Y1a).
func TestTheSameCallInEveryLanguageY1a(t *testing.T) {
	type lang struct {
		name  string
		serve func(e *env, queue string)
	}
	langs := []lang{
		{"go", func(e *env, queue string) {
			same := toolworker.New("same_echo", func(_ context.Context, call toolworker.Call, a struct {
				Text  string `json:"text"`
				Times int    `json:"times"`
			}) (any, error) {
				if a.Text == "" {
					return nil, &toolworker.ToolError{Message: "there is no text to repeat", Code: "empty_text"}
				}
				return map[string]any{"echo": strings.Repeat(strings.ToUpper(a.Text), a.Times), "operation_id": call.OperationID}, nil
			}, toolworker.Description("Repeat a text in capitals."))
			e.serveTools(queue, []toolworker.Tool{same})
		}},
		{"python", func(e *env, queue string) { e.servePythonFile("testdata/usertools/same.py", queue, e.t.TempDir()) }},
		{"typescript", func(e *env, queue string) { e.startTypeScriptToolWorker(queue) }},
	}
	type answer struct {
		status    round.Status
		content   string
		errorCode string
	}
	results := map[string][]answer{}
	for _, l := range langs {
		e := newEnv(t)
		queue := e.startWorkerForTools("same-"+l.name+"-", false)
		l.serve(e, queue)
		e.waitForTools(queue, "same_echo")
		in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"same_echo"}},
			call("a", "same_echo", map[string]any{"text": "ab", "times": 2}),
			call("b", "same_echo", map[string]any{"text": "", "times": 1}),
			call("c", "same_echo", map[string]any{"text": "ab", "times": "2"}))
		in.AutoApprove = true
		res := e.round(in)
		requireEveryCallOnce(t, in, res)
		for _, r := range res.Results {
			content := r.Content
			if r.CallID == "a" {
				require.Equal(t, round.StatusOK, r.Status, "%s: %s", l.name, r.Content)
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(r.Content), &got), "%s: %s", l.name, r.Content)
				require.Equal(t, r.OperationID, got["operation_id"], "%s: the function got the call's operation id", l.name)
				delete(got, "operation_id")
				b, _ := json.Marshal(got)
				content = string(b)
			}
			if r.CallID == "c" {
				content = "" // pass 1's message names the round's own schema
			}
			results[l.name] = append(results[l.name], answer{r.Status, content, r.ErrorCode})
		}
	}
	want := []answer{
		{round.StatusOK, `{"echo":"ABAB"}`, ""},
		{round.StatusError, "tool=same_echo failed: there is no text to repeat\nnext: succeed another way, then record what worked with " +
			`write_error(tool="same_echo", error=<the error>, outcome="resolved", resolution=<what worked>).`, "empty_text"},
		{round.StatusInvalid, "", ""},
	}
	for _, l := range langs {
		require.Equal(t, want, results[l.name], l.name)
	}
}
