package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// The crash matrix (L1): each scenario runs once with a worker built with
// the tag crashpoints that lists the points it passes (CRASH_TRACE); then,
// for each point in turn, a fresh run stops the worker there (SIGKILL),
// starts a plain worker of the same build, makes the scenario's scripted
// decisions, and checks the round: every call has exactly one result, no
// side effect reached the outside recorder twice (by path for a plain
// POST, by Idempotency-Key for a host that honours it), unknown_outcome
// only where the point lies between an attempt's start and the record of
// its end (never for a tool with a reconciler), and nothing stuck 60 s
// after the restart. Besides the worker, each point kills the Temporal
// server, then Redis, while the worker waits there. A scenario with a
// tool worker runs one of the same build beside the worker: at each point,
// its own or the worker's, each of the processes is killed in turn. A
// gateway scenario sends its call through a console's MCP gateway
// (crashmatrix_gateway_test.go); an agent scenario starts an agent run in
// place of a round and checks each of its runs (crashmatrix_agent_test.go);
// an MCP task scenario's server runs outside the worker and notes each task
// it makes, counted as the recorder counts POSTs.
//
// CRASH_POINTS=n (default 16 here, 0 for every point) runs n points chosen
// by CRASH_SEED (default 1, printed); `make crashtest` runs them all.
// CRASH_SCENARIOS=a,b runs only the scenarios named.
// The points of a scenario are those its traced run passed, so their
// number may differ by a few between runs (workflow tasks merge or split
// with timing); the sample is drawn from them sorted by name.

// recorder is the outside world of the matrix: it counts each side effect
// (a POST) by path, a request that carries an Idempotency-Key once per key.
type recorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths map[string]int
	// keys are the Idempotency-Keys each POST path carried: a server that
	// honours the header applies each key once, however often it comes.
	keys map[string]map[string]bool
	// unkeyed counts the POSTs that carried no Idempotency-Key, by path.
	unkeyed map[string]int
	prefix  string
	// logs are files where servers outside the worker (an MCP task
	// server) note each side effect, one operation's id a line.
	logs []string
	t    *testing.T
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{paths: map[string]int{}, keys: map[string]map[string]bool{}, unkeyed: map[string]int{}, prefix: fmt.Sprintf("/m%d", time.Now().UnixNano()), t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths[req.Method+" "+req.URL.Path]++
		if req.Method == http.MethodPost {
			if k := req.Header.Get(round.IdempotencyHeader); k != "" {
				if r.keys[req.URL.Path] == nil {
					r.keys[req.URL.Path] = map[string]bool{}
				}
				r.keys[req.URL.Path][k] = true
			} else {
				r.unkeyed[req.URL.Path]++
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body><p>recorded %s</p></body></html>", strings.TrimPrefix(req.URL.Path, r.prefix))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) url(path string) string { return r.srv.URL + r.prefix + path }

// posted reports whether the POST of call id reached the recorder, or an
// outside server noted its operation.
func (r *recorder) posted(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, n := range r.paths {
		if n > 0 && strings.HasPrefix(p, "POST ") && strings.HasSuffix(p, "/"+id) {
			return true
		}
	}
	for _, l := range r.logs {
		if slices.Contains(readLines(r.t, l), id) {
			return true
		}
	}
	return false
}

// duplicates are the side effects (POSTs without a key, and keys) that
// reached the recorder more than once.
func (r *recorder) duplicates() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	paths := map[string]bool{}
	for p := range r.unkeyed {
		paths[p] = true
	}
	for p := range r.keys {
		paths[p] = true
	}
	for p := range paths {
		// A webhook path takes every notification, each under its own key;
		// a call's POST path is one effect, under one key.
		if strings.HasSuffix(p, "/hook") {
			continue
		}
		if n := r.unkeyed[p] + len(r.keys[p]); n > 1 {
			out = append(out, fmt.Sprintf("POST %s took effect %d times (%d without a key, %d distinct keys)", p, n, r.unkeyed[p], len(r.keys[p])))
		}
	}
	for _, l := range r.logs {
		seen := map[string]int{}
		for _, op := range readLines(r.t, l) {
			if seen[op]++; seen[op] == 2 {
				out = append(out, fmt.Sprintf("%s: operation %s took effect more than once", filepath.Base(l), op))
			}
		}
	}
	sort.Strings(out)
	return out
}

// crashScenario is one round of the matrix with its scripted decisions.
type crashScenario struct {
	name string
	// extra are the worker's variables (the recorder's host may be one
	// that honours Idempotency-Key).
	extra func(r *recorder) []string
	input func(e *env, r *recorder) round.Input
	// approve makes the scenario's decisions: every waiting call
	// approved (denied when deny is set too), every elicitation
	// answered {"ok": true}.
	approve, deny bool
	// gateway sends the input's one call through the console's MCP
	// gateway (startGatewayCall) instead of starting the round: the input
	// names the round the gateway starts for it.
	gateway bool
	// toolWorker serves the round's user tool from a tool worker of its
	// own (tests/testtoolworker, built with the crash points too), on a
	// queue the worker's TOOL_QUEUES names; the points it passes are
	// stopped at by killing it (target toolworker).
	toolWorker bool
	// agent, when set, is an agent run the scenario starts instead of a
	// round (crashmatrix_agent_test.go).
	agent *agentScenario
	// stored says some of the round's (or run's) results are kept in
	// Redis, a reference in history: its trace checks that.
	stored bool
	// effects, when set, checks the side effects the round's calls made
	// outside the recorder (the workdir's files) against their results.
	effects func(t *testing.T, e *env, res map[string]round.CallResult) (duplicates, lost []string)
}

// decision is what the scenario decides for a call that waits for
// approval: "approve", "deny", or "" (it makes no decisions).
func (sc crashScenario) decision() string {
	switch {
	case sc.approve && sc.deny:
		return "deny"
	case sc.approve:
		return "approve"
	}
	return ""
}

func crashScenarios() []crashScenario {
	fetched := &round.RunState{Fetched: []string{"fetch_page", "http_request", "calculate", "read_files"}}
	post := func(r *recorder, id, kind string) round.ToolCall {
		return call(id, "http_request", map[string]any{"url": r.url("/" + kind + "/" + id), "method": "POST", "body": id})
	}
	page := func(r *recorder, id string) round.ToolCall {
		return call(id, "fetch_page", map[string]any{"url": r.url("/page/" + id)})
	}
	return []crashScenario{
		{name: "read-only", input: func(e *env, r *recorder) round.Input {
			return e.input(1, "claude-code", fetched, page(r, "f1"), page(r, "f2"), call("c1", "calculate", map[string]any{"expression": "6*7"}))
		}},
		{name: "at-most-once", input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", fetched, post(r, "p1", "plain"), post(r, "p2", "plain"), page(r, "f1"))
			in.AutoApprove, in.MaxConcurrent = true, 2
			return in
		}},
		{name: "idempotency-key", extra: func(r *recorder) []string {
			u, _ := url.Parse(r.srv.URL)
			return []string{"HTTP_IDEMPOTENT_HOSTS=" + u.Host}
		}, input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", fetched, post(r, "k1", "keyed"), post(r, "k2", "keyed"))
			in.AutoApprove = true
			return in
		}},
		{name: "approval", approve: true, input: func(e *env, r *recorder) round.Input {
			return e.input(1, "claude-code", fetched, post(r, "a1", "plain"), page(r, "f1"))
		}},
		// The approver says no: the POST never runs, the page is read.
		{name: "deny", approve: true, deny: true, input: func(e *env, r *recorder) round.Input {
			return e.input(1, "claude-code", fetched, post(r, "d1", "plain"), page(r, "f1"))
		}},
		{name: "webhook", approve: true, extra: func(r *recorder) []string {
			return []string{"NOTIFY_URL=" + r.url("/hook"), "NOTIFY_SECRET=crash-matrix"}
		}, input: func(e *env, r *recorder) round.Input {
			return e.input(1, "claude-code", fetched, post(r, "w1", "plain"))
		}},
		{name: "fan-out", input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", fetched,
				page(r, "f1"), post(r, "p1", "plain"), call("c1", "calculate", map[string]any{"expression": "2+3"}),
				page(r, "f2"), post(r, "p2", "plain"), page(r, "f3"), post(r, "p3", "plain"), call("c2", "calculate", map[string]any{"expression": "7*6"}))
			in.AutoApprove, in.MaxConcurrent = true, 3
			return in
		}},
		// Results above LARGE_RESULT_BYTES are kept in Redis, history
		// holding a reference (O1): Redis dies with blob writes around.
		{name: "large-results", stored: true, extra: func(r *recorder) []string {
			return []string{"LARGE_RESULT_BYTES=" + strconv.Itoa(matrixLargeResult)}
		}, input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", fetched, page(r, "f1"), post(r, "p1", "plain"), page(r, "f2"))
			in.AutoApprove = true
			return in
		}},
		// A user tool's side effect (Y4): record_order POSTs under its
		// operation id from the tool worker's process.
		{name: "tool-worker", toolWorker: true, input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"record_order"}},
				call("t1", "record_order", map[string]any{"id": "t1", "url": r.url("/plain/t1")}))
			in.AutoApprove = true
			return in
		}},
		// A call through the MCP gateway (Z3): the gateway workflow
		// starts round 1 of run mcp-r1 for it; the POST waits for an
		// approver. At a point where the worker dies the client's request
		// is dropped too, and the client sends the same call again.
		{name: "mcp-gateway", approve: true, gateway: true, input: func(e *env, r *recorder) round.Input {
			id := names.GatewayCallID(1, 0)
			in := e.input(1, round.GatewayProvider, nil, post(r, id, "plain"))
			in.RunID = names.GatewayRunID("r1")
			return in
		}},
		// MCP tasks (E2): each call makes a task on a server over
		// streamable HTTP, in a process of its own, and polls it to its
		// result; the server notes each research task it makes by its
		// topic, the call's id. The confirm task asks for input, which
		// waits in the round until the scenario answers it.
		{name: "mcp-task", approve: true, extra: func(r *recorder) []string {
			return []string{r.taskServer()}
		}, input: func(e *env, r *recorder) round.Input {
			in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_jobs_research", "mcp_jobs_confirm"}},
				call("r1", "mcp_jobs_research", map[string]any{"topic": "r1"}), call("c1", "mcp_jobs_confirm", map[string]any{"what": "c1"}))
			in.AutoApprove = true
			return in
		}},
		// Tools with a reconciler (R3): a lost attempt is reconciled, so
		// never unknown_outcome; each file changed once.
		{name: "reconciled", effects: reconciledEffects, input: func(e *env, r *recorder) round.Input {
			for name, content := range map[string]string{"a.txt": "n=1\n", "b.txt": "gone soon\n"} {
				require.NoError(e.t, os.WriteFile(filepath.Join(e.workdir, name), []byte(content), 0o644))
			}
			in := e.input(1, "claude-code", &round.RunState{Fetched: reconcileTools},
				call("x1", "edit_file", map[string]any{"path": "a.txt", "old_text": "n=1", "new_text": "n=1+"}),
				call("x2", "remove_file", map[string]any{"path": "b.txt"}))
			in.AutoApprove = true
			return in
		}},
		// An agent run with subagents (G1): the run's model starts two,
		// one of which POSTs once (crashmatrix_agent_test.go).
		{name: "subagent", agent: subagentRun, extra: func(r *recorder) []string {
			return newMatrixModel(r).environ()
		}},
		// An agent run of a scripted model (docs/scripted-model.md) whose
		// POSTs wait for approval, with its page results kept in Redis.
		{name: "agent-approval", agent: approvalRun, stored: true, extra: func(r *recorder) []string {
			return []string{"LLM_BASE_URL=", "LLM_MODEL=", "LARGE_RESULT_BYTES=" + strconv.Itoa(matrixLargeResult)}
		}},
		// An agent run of a scripted model in the Messages API's format
		// (F1, F4), its turns and results kept in Redis.
		{name: "agent-anthropic", agent: anthropicRun, stored: true, extra: func(r *recorder) []string {
			return []string{"LLM_BASE_URL=", "LLM_MODEL=", "LARGE_RESULT_BYTES=" + strconv.Itoa(matrixLargeResult)}
		}},
	}
}

// startScenario starts sc's round with in: as a client of the worker, or
// through the MCP gateway, whose client it also returns.
func startScenario(e *env, sc crashScenario, in round.Input) (<-chan result, *gatewayCaller) {
	if sc.gateway {
		return e.startGatewayCall(in)
	}
	return e.startRound(in), nil
}

// crashPoint is the n-th pass of a scenario's run through a named point,
// and the process killed there: the worker itself, or the Temporal server
// (a dev server of the point's own, with its database file) or Redis (a
// redis-server of its own, appendonly yes, appendfsync always) while the
// worker waits at the point.
type crashPoint struct {
	scenario crashScenario
	name     string
	n        int
	target   string
}

const (
	killWorker     = "worker"
	killServer     = "server"
	killRedis      = "redis"
	killToolWorker = "toolworker"
)

// toolWorkerMark starts the name of a point a tool worker passed.
const toolWorkerMark = "toolworker|"

func (p crashPoint) String() string {
	return fmt.Sprintf("%s/%s/%s#%d", p.target, p.scenario.name, p.name, p.n)
}

// crashWorkerBin builds the worker with its crash points, once.
var crashWorkerBin = sync.OnceValues(func() (string, error) {
	// In TestMain's directory, which it removes.
	dir, err := os.MkdirTemp(binDir, "crashworker")
	if err != nil {
		return "", err
	}
	tags := "crashpoints"
	if extra := os.Getenv("CRASH_BUILD_TAGS"); extra != "" {
		tags += "," + extra // brokenopid, brokenorder: builds the matrix must fail
	}
	out, err := exec.Command("go", "build", "-tags", tags, "-o", dir+"/", "../cmd/worker", "./testtoolworker", "../tools/mcp/internal/taskserver").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the crash worker: %v: %s", err, out)
	}
	return filepath.Join(dir, "worker"), nil
})

// crashToolWorkerBin is the tool worker built beside the crash worker.
func crashToolWorkerBin(bin string) string { return filepath.Join(filepath.Dir(bin), "testtoolworker") }

// taskServer starts an MCP server over streamable HTTP whose research
// tool runs as a task (tools/mcp/internal/taskserver, built beside the
// crash worker), outside the worker as the recorder is: each task it
// makes, it notes by its topic in a log of the recorder's. It returns the
// worker's MCP_CONFIG, which names it "jobs".
func (r *recorder) taskServer() string {
	t := r.t
	bin, err := crashWorkerBin()
	require.NoError(t, err)
	dir := t.TempDir()
	created := filepath.Join(dir, "tasks made")
	u := startHTTPTaskServer(t, filepath.Join(filepath.Dir(bin), "taskserver"), created, "1000")
	path := writeMCPConfig(t, dir, map[string]any{"jobs": map[string]any{"url": u}})
	r.mu.Lock()
	r.logs = append(r.logs, created)
	r.mu.Unlock()
	return "MCP_CONFIG=" + path
}

// toolQueue is the queue of a tool-worker scenario's tools, and the
// worker's variable that names it.
func toolQueue(e *env) (string, string) {
	q := "tools-" + e.taskQueue
	return q, "TOOL_QUEUES=" + q
}

// startCrashToolWorker starts the crash build's tool worker on the
// scenario's queue with the crash variables.
func startCrashToolWorker(e *env, bin string, crash ...string) *worker {
	e.t.Helper()
	q, _ := toolQueue(e)
	cmd := exec.Command(crashToolWorkerBin(bin))
	cmd.Env = append(append(e.environ(), "TOOL_QUEUE="+q, "TOOLROUND_TASK_QUEUE="+e.taskQueue, "MARKS="+e.t.TempDir()), crash...)
	return e.startProcess(cmd, "tool worker")
}

// announceTools starts the tool worker of a tool-worker scenario, its
// announcement taken by a plain worker, which answers the crash worker's
// first reading of the catalog too and then stops (SIGTERM): the crash
// worker's points are the round's alone.
func announceTools(e *env, bin string, extra []string, crash ...string) (tw *worker, thenStop func(crashWorker *worker)) {
	e.t.Helper()
	plain := e.startWorkerBin(workerBin, extra...)
	tw = startCrashToolWorker(e, bin, crash...)
	waitToolQueue(e.t, plain)
	return tw, func(w *worker) {
		waitToolQueue(e.t, w)
		require.NoError(e.t, plain.cmd.Process.Signal(syscall.SIGTERM))
		<-plain.done
	}
}

var toolQueueLine = regexp.MustCompile(`msg="tool queue" .*available=true tools=\S*record_order`)

// waitToolQueue waits until w has read the tool worker's catalog: the
// queue available, with record_order.
func waitToolQueue(t *testing.T, w *worker) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, l := range strings.Split(w.logs.String(), "\n") {
			if toolQueueLine.MatchString(l) {
				return true
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond, "the worker never listed the tool worker's tools:\n%s", w.logs.String())
}

func TestCrashMatrix(t *testing.T) {
	bin, err := crashWorkerBin()
	require.NoError(t, err)
	limit, seed := 16, uint64(1)
	if v := os.Getenv("CRASH_POINTS"); v != "" {
		limit, err = strconv.Atoi(v)
		require.NoError(t, err, "CRASH_POINTS")
	}
	if v := os.Getenv("CRASH_SEED"); v != "" {
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "CRASH_SEED")
	}

	targets := []string{killWorker, killServer, killRedis, killToolWorker}
	if v := os.Getenv("CRASH_TARGETS"); v != "" {
		targets = strings.Split(v, ",")
	}
	scenarios := crashScenarios()
	if v := os.Getenv("CRASH_SCENARIOS"); v != "" {
		names := strings.Split(v, ",")
		scenarios = slices.DeleteFunc(scenarios, func(sc crashScenario) bool { return !slices.Contains(names, sc.name) })
		require.NotEmpty(t, scenarios, "CRASH_SCENARIOS=%s names no scenario", v)
	}
	var points []crashPoint
	for _, sc := range scenarios {
		trace := traceScenario(t, bin, sc)
		seen := map[string]int{}
		// At each point, each process of the scenario is killed in turn:
		// the one that passes it (the worker, or the tool worker) where
		// it stands, any other while that one waits at the point.
		procs := slices.DeleteFunc(slices.Clone(targets), func(s string) bool { return s == killToolWorker && !sc.toolWorker })
		for _, name := range trace {
			seen[name]++
			for _, target := range procs {
				points = append(points, crashPoint{scenario: sc, name: name, n: seen[name], target: target})
			}
		}
		t.Logf("%s: %d points, each with %s killed", sc.name, len(trace), strings.Join(procs, ", then "))
	}
	all := len(points)
	sort.SliceStable(points, func(i, j int) bool { return points[i].String() < points[j].String() })
	if limit > 0 && limit < len(points) {
		rng := rand.New(rand.NewPCG(seed, seed))
		rng.Shuffle(len(points), func(i, j int) { points[i], points[j] = points[j], points[i] })
		points = points[:limit]
	}
	fmt.Printf("crash matrix: running %d of %d points (CRASH_POINTS=%d CRASH_SEED=%d)\n", len(points), all, limit, seed)

	// A point mostly waits for Temporal's timeouts (a workflow task cut by
	// the kill is given to the new worker after its 10 s timeout), so
	// CRASH_PARALLEL points (default 6) run at once, each on its own task
	// queue and session.
	parallel := 6
	if v := os.Getenv("CRASH_PARALLEL"); v != "" {
		parallel, err = strconv.Atoi(v)
		require.NoError(t, err, "CRASH_PARALLEL")
	}
	var st crashStats
	// Each point counts into its own stats, added to its scenario's and
	// to the matrix's once it ran.
	byScenario := map[string]*crashStats{}
	for _, sc := range scenarios {
		byScenario[sc.name] = &crashStats{}
	}
	queue := make(chan crashPoint)
	var wg sync.WaitGroup
	for range max(1, parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range queue {
				var one crashStats
				// Subtest names become session ids: no ':' or '#'.
				ok := t.Run(strings.NewReplacer(":", "-", "#", "-", "|", "-").Replace(p.String()), func(t *testing.T) { runCrashPoint(t, bin, p, &one) })
				if !ok && one.reached+one.notReached == 0 {
					// It stopped before its checks (the scenario neither
					// ended nor reached the point; a process that did not
					// start): its --- FAIL line says why.
					one.failed++
				}
				st.add(&one)
				byScenario[p.scenario.name].add(&one)
			}
		}()
	}
	for _, p := range points {
		queue <- p
	}
	close(queue)
	wg.Wait()
	for _, sc := range scenarios {
		s := byScenario[sc.name]
		fmt.Printf("crash matrix: %s: %d points: duplicates %d, lost %d, stuck %d, unknown %d (%s); %d not reached%s\n",
			sc.name, s.reached, s.duplicates, s.lost, s.stuck, s.unknown, justified(s), s.notReached, failedNote(s))
	}
	line := fmt.Sprintf("crash matrix: %d points over %d scenarios: duplicates %d, lost %d, stuck %d, unknown %d (%s); %d not reached%s",
		st.reached, len(scenarios), st.duplicates, st.lost, st.stuck, st.unknown, justified(&st), st.notReached, failedNote(&st))
	fmt.Println(line)
	t.Log(line)
	require.Zero(t, st.duplicates+st.lost+st.stuck+st.unjustified, line)
	require.Positive(t, st.reached, "no point was reached")
}

type crashStats struct {
	mu                                                                 sync.Mutex
	reached, notReached, duplicates, lost, stuck, unknown, unjustified int
	// failed are the points that stopped before their checks.
	failed int
}

// failedNote names the points that stopped before their checks.
func failedNote(st *crashStats) string {
	if st.failed == 0 {
		return ""
	}
	return fmt.Sprintf("; %d failed before their checks (see their --- FAIL lines)", st.failed)
}

// add adds o's counts to st's.
func (st *crashStats) add(o *crashStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reached += o.reached
	st.notReached += o.notReached
	st.duplicates += o.duplicates
	st.lost += o.lost
	st.stuck += o.stuck
	st.unknown += o.unknown
	st.unjustified += o.unjustified
	st.failed += o.failed
}

func justified(st *crashStats) string {
	if st.unjustified == 0 {
		return "all justified"
	}
	return fmt.Sprintf("%d not justified", st.unjustified)
}

// traceScenario runs sc once to its end and returns the points it passed.
func traceScenario(t *testing.T, bin string, sc crashScenario) []string {
	t.Helper()
	var passed []string
	t.Run("trace/"+sc.name, func(t *testing.T) {
		r := newRecorder(t)
		e := newEnv(t)
		file := filepath.Join(t.TempDir(), "trace")
		var extra []string
		if sc.extra != nil {
			extra = sc.extra(r)
		}
		var toolFile string
		if sc.toolWorker {
			_, v := toolQueue(e)
			extra = append(extra, v)
		}
		var announced func(*worker)
		if sc.toolWorker {
			toolFile = filepath.Join(t.TempDir(), "tooltrace")
			_, announced = announceTools(e, bin, extra, "CRASH_TRACE="+toolFile)
		}
		w := e.startWorkerBin(bin, append(extra, "CRASH_TRACE="+file)...)
		if announced != nil {
			announced(w)
		}
		if a := sc.agent; a != nil {
			out, how := a.await(e, a.start(e, r), 2*time.Minute, nil)
			require.Equal(t, roundEnded, how, "the scenario did not finish")
			require.Equal(t, 0, out.code, out.stderr)
			require.Equal(t, a.final, out.stdout)
			if sc.stored {
				res, err := roundResultOf(e, names.WorkflowID(e.session, "run-1", 2))
				require.NoError(t, err)
				requireStored(t, res)
			}
			w.kill(t)
			passed = readLines(t, file)
			require.NotEmpty(t, passed)
			return
		}
		in := sc.input(e, r)
		done, _ := startScenario(e, sc, in)
		res, how := awaitRound(e, in, done, sc.decision(), time.Minute, nil)
		require.Equal(t, roundEnded, how, "the scenario did not finish")
		requireEveryCallOnce(t, in, res)
		if sc.stored {
			requireStored(t, res)
		}
		if sc.toolWorker {
			require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
		}
		if sc.gateway {
			// The gateway workflow's task that takes its round's end
			// follows the round's last one.
			require.Eventually(t, func() bool { return gatewaySettled(readLines(t, file)) }, 30*time.Second, 20*time.Millisecond,
				"the gateway workflow did not take its round's end")
		}
		w.kill(t)
		passed = readLines(t, file)
		require.NotEmpty(t, passed)
		if toolFile != "" {
			tool := readLines(t, toolFile)
			require.NotEmpty(t, tool, "the tool worker passed no point")
			for _, n := range tool {
				passed = append(passed, toolWorkerMark+n)
			}
		}
	})
	return passed
}

// runCrashPoint runs the scenario of p, stops the worker at p, restarts it
// and checks the invariants, counting into st.
func runCrashPoint(t *testing.T, bin string, p crashPoint, st *crashStats) {
	r := newRecorder(t)
	var srv *devServer
	var cli, addr, db string
	var envExtra []string
	var rds *redisProc
	if p.target == killRedis {
		rds = startRedisProc(t, t.TempDir(), freeAddr(t))
		envExtra = append(envExtra, "REDIS_URL=redis://"+rds.addr+"/0")
	}
	if p.target == killServer {
		cli, db = temporalCLI(t), filepath.Join(t.TempDir(), "temporal.db")
		srv, addr = startOwnDevServer(t, cli, db)
		envExtra = append(envExtra, "TEMPORAL_ADDRESS="+addr)
	}
	e := newEnv(t, envExtra...)
	dir := t.TempDir()
	reached, trace, otherTrace := filepath.Join(dir, "reached"), filepath.Join(dir, "trace"), filepath.Join(dir, "other trace")
	var extra []string
	if p.scenario.extra != nil {
		extra = p.scenario.extra(r)
	}
	// The process that passes the point stops there: the worker, or the
	// tool worker; it dies there when it is the target, else it waits
	// while the target is killed and restarted. The other process lists
	// its points too.
	inTool := strings.HasPrefix(p.name, toolWorkerMark)
	crash := []string{"CRASH_AT=" + strings.TrimPrefix(p.name, toolWorkerMark) + "#" + strconv.Itoa(p.n), "CRASH_REACHED=" + reached, "CRASH_TRACE=" + trace}
	if p.target != map[bool]string{false: killWorker, true: killToolWorker}[inTool] {
		crash = append(crash, "CRASH_ACTION=pause")
	}
	workerCrash, toolCrash := crash, []string{"CRASH_TRACE=" + otherTrace}
	if inTool {
		workerCrash, toolCrash = toolCrash, crash
	}
	if p.scenario.toolWorker {
		_, v := toolQueue(e)
		extra = append(extra, v)
	}
	var tw *worker
	var announced func(*worker)
	if p.scenario.toolWorker {
		tw, announced = announceTools(e, bin, extra, toolCrash...)
	}
	w := e.startWorkerBin(bin, append(append([]string{}, extra...), workerCrash...)...)
	if announced != nil {
		announced(w)
	}
	var in round.Input
	var done <-chan result
	var gw *gatewayCaller
	if a := p.scenario.agent; a != nil {
		done = a.start(e, r)
	} else {
		in = p.scenario.input(e, r)
		done, gw = startScenario(e, p.scenario, in)
	}

	// Either the worker stops at the point, or the round ends without
	// passing it (a run may take another path than the traced one).
	atPoint := make(chan struct{})
	stopPoll := make(chan struct{})
	defer close(stopPoll)
	go func() {
		for {
			if _, err := os.Stat(reached); err == nil {
				close(atPoint)
				return
			}
			select {
			case <-stopPoll:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	var first round.Result
	var how int
	if a := p.scenario.agent; a != nil {
		_, how = a.await(e, done, 90*time.Second, atPoint)
	} else {
		first, how = awaitRound(e, in, done, p.scenario.decision(), 90*time.Second, atPoint)
	}
	if how == roundEnded && gw != nil {
		// The gateway workflow's own task after its round comes after
		// the client has its result.
		select {
		case <-atPoint:
			how = workerStopped
		case <-time.After(20 * time.Second):
		}
	}
	switch how {
	case roundEnded:
		st.mu.Lock()
		st.notReached++
		st.mu.Unlock()
		return
	case roundTimedOut:
		t.Fatalf("the scenario neither ended nor reached %s in 90 s:\n%s", p, w.logs.String())
	}
	lines := readLines(t, trace)
	// An attempt is in flight in either process: the one at the point,
	// or the other (a tool worker's activity while the worker waits).
	flight := inFlight(lines) || inFlight(readLines(t, otherTrace))
	switch p.target {
	case killWorker:
		if inTool {
			w.kill(t)
		} else {
			<-w.done // it killed itself at the point
		}
		if gw != nil && !roundClosed(t, in.WorkflowID()) {
			// The client's request goes with the worker: it sends the
			// call again, which attaches to the open one.
			gw.goAway()
		}
		e.startWorkerBin(bin, extra...)
		if inTool {
			require.NoError(t, os.Remove(reached)) // the tool worker goes on
		}
	case killToolWorker:
		if inTool {
			<-tw.done // it killed itself at the point
		} else {
			tw.kill(t)
		}
		startCrashToolWorker(e, bin)
		if !inTool {
			require.NoError(t, os.Remove(reached)) // the worker goes on
		}
	case killServer:
		srv.kill(t)
		startDevServer(t, cli, addr, db)
		require.NoError(t, os.Remove(reached)) // the worker goes on
	case killRedis:
		rds.kill(t)
		startRedisProc(t, rds.dir, rds.addr)
		require.NoError(t, os.Remove(reached))
	}
	if p.scenario.agent != nil {
		checkAgentPoint(t, e, r, p, done, flight, st)
		return
	}
	res := first
	if first.Results == nil {
		res, how = awaitRound(e, in, done, p.scenario.decision(), 60*time.Second, nil)
	} else {
		how = roundEnded
	}
	if how == roundEnded && gw != nil {
		// Nothing stuck: the gateway's run takes the next call.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		next, err := gw.another(ctx, r.url("/page/next"))
		cancel()
		if err != nil || len(next.Results) != 1 || next.Results[0].Status != round.StatusOK {
			st.mu.Lock()
			st.reached++
			st.stuck++
			st.mu.Unlock()
			t.Errorf("stuck: the gateway's run took no call within 60 s of the restart: %v %+v", err, next)
			return
		}
	}
	if how != roundEnded {
		st.mu.Lock()
		st.reached++
		st.stuck++
		st.mu.Unlock()
		t.Errorf("stuck: the round did not end within 60 s of the restart")
		return
	}

	if gw != nil {
		t.Logf("the client sent the call %d times", gw.sent())
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reached++
	got := byID(res)
	for _, c := range in.Assistant.ToolCalls {
		cr, ok := got[c.ID]
		if !ok {
			st.lost++
			t.Errorf("lost: call %s has no result", c.ID)
			continue
		}
		if cr.Status == round.StatusOK && sideEffect(c) && !r.posted(c.ID) {
			st.lost++
			t.Errorf("lost: call %s is ok, but its POST never reached the recorder: %s", c.ID, cr.Content)
		}
		if cr.Status == round.StatusUnknownOutcome {
			st.unknown++
			switch {
			case !flight:
				st.unjustified++
				t.Errorf("unknown_outcome for %s, but no attempt was in flight at %s", c.ID, p)
			case reconciledTools[c.Function.Name]:
				st.unjustified++
				t.Errorf("unknown_outcome for %s, whose tool %s has a reconciler: %s", c.ID, c.Function.Name, cr.Content)
			}
		}
	}
	if len(res.Results) != len(in.Assistant.ToolCalls) {
		st.lost++
		t.Errorf("lost: %d results for %d calls", len(res.Results), len(in.Assistant.ToolCalls))
	}
	if d := r.duplicates(); len(d) > 0 {
		st.duplicates += len(d)
		t.Errorf("duplicates: %s", strings.Join(d, "; "))
	}
	if p.scenario.effects != nil {
		d, l := p.scenario.effects(t, e, got)
		st.duplicates += len(d)
		st.lost += len(l)
		for _, m := range append(d, l...) {
			t.Error(m)
		}
	}
}

// reconciledTools have a reconciler (R3) for the scenario's calls: a
// lost attempt of theirs is reconciled, never unknown_outcome.
var reconciledTools = map[string]bool{"edit_file": true, "remove_file": true}

// reconciledEffects checks the reconciled scenario's files: a.txt edited
// once (twice reads n=1++), b.txt removed once, each when its call is ok.
func reconciledEffects(t *testing.T, e *env, res map[string]round.CallResult) (duplicates, lost []string) {
	a, _ := os.ReadFile(filepath.Join(e.workdir, "a.txt"))
	if n := writesOf(t, e.workdir, "a.txt", "edit_file"); n > 1 || string(a) == "n=1++\n" {
		duplicates = append(duplicates, fmt.Sprintf("duplicates: a.txt edited %d times: %q", n, a))
	}
	if res["x1"].Status == round.StatusOK && string(a) != "n=1+\n" {
		lost = append(lost, fmt.Sprintf("lost: x1 is ok, but a.txt reads %q", a))
	}
	if n := writesOf(t, e.workdir, "b.txt", "remove_file"); n > 1 {
		duplicates = append(duplicates, fmt.Sprintf("duplicates: b.txt removed %d times", n))
	}
	if _, err := os.Stat(filepath.Join(e.workdir, "b.txt")); res["x2"].Status == round.StatusOK && err == nil {
		lost = append(lost, "lost: x2 is ok, but b.txt is still there")
	}
	return duplicates, lost
}

// requireStored checks that some of res's results are kept in Redis.
func requireStored(t *testing.T, res round.Result) {
	t.Helper()
	for _, cr := range res.Results {
		if cr.ContentRef != "" {
			return
		}
	}
	require.Fail(t, "no result is kept in Redis", "%+v", res.Results)
}

// sideEffect reports whether a scenario's call POSTs to the recorder.
func sideEffect(c round.ToolCall) bool {
	return strings.Contains(string(c.Function.Arguments), `"POST"`) || c.Function.Name == "record_order" || c.Function.Name == "mcp_jobs_research"
}

// inFlight reports whether, at the end of a run's points, an activity's
// attempt had started and its end was not yet recorded: more
// activity.before points than recorded ends (RespondActivityTask*, or a
// local activity's end, recorded with its workflow task). The stop itself
// on an activity point is in flight.
func inFlight(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	if strings.HasPrefix(lines[len(lines)-1], "activity.") {
		return true
	}
	open := 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "activity.before:"):
			open++
		case l == "grpc.after:RespondActivityTaskCompleted" || l == "grpc.after:RespondActivityTaskFailed":
			open--
		}
	}
	// Local activities end with the workflow task that records them, so
	// an open count above zero may be theirs: any is counted in flight.
	return open > 0
}

// How a wait for a round ended.
const (
	roundEnded = iota
	roundTimedOut
	workerStopped
)

// awaitRound waits for the round's result, making decision ("approve" or
// "deny") for every waiting call and answering every elicitation
// {"ok": true} unless decision is "", until it ends, d passes or stopped
// is closed.
func awaitRound(e *env, in round.Input, done <-chan result, decision string, d time.Duration, stopped <-chan struct{}) (round.Result, int) {
	deadline := time.After(d)
	approved := map[string]bool{}
	for {
		select {
		case out := <-done:
			var res round.Result
			if out.code != 0 || json.Unmarshal([]byte(out.stdout), &res) != nil {
				e.t.Errorf("starter round: exit %d: %s", out.code, out.stderr)
			}
			return res, roundEnded
		case <-stopped:
			return round.Result{}, workerStopped
		case <-deadline:
			return round.Result{}, roundTimedOut
		case <-time.After(200 * time.Millisecond):
		}
		if decision == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out := e.starter(ctx, "", "pending", in.WorkflowID())
		var pending []round.Pending
		if out.code == 0 && json.Unmarshal([]byte(out.stdout), &pending) == nil {
			for _, p := range pending {
				// A wait asked again (a task's input after a restart)
				// has a wait id of its own.
				key := p.CallID + "/" + p.WaitID
				if approved[key] {
					continue
				}
				var a result
				switch p.Kind {
				case round.KindConfirm:
					args := []string{decision, in.WorkflowID(), p.CallID}
					if decision == "deny" {
						args = append(args, "--reason", "the crash matrix says no")
					}
					a = e.starter(ctx, "", args...)
				case round.KindElicitation:
					a = e.starter(ctx, "", "answer", in.WorkflowID(), p.CallID, "--json", `{"ok":true}`)
				default:
					continue
				}
				if a.code == 0 {
					approved[key] = true
				}
			}
		}
		cancel()
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

// redisProc is a redis-server of a crash point's own: every write is in
// its append-only file before it answers, so a SIGKILL loses none.
type redisProc struct {
	cmd       *exec.Cmd
	done      chan struct{}
	dir, addr string
}

func (r *redisProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGKILL))
	<-r.done
}

// startRedisProc starts redis-server on addr with its files in dir and
// waits until it answers.
func startRedisProc(t *testing.T, dir, addr string) *redisProc {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Unavailable(t, "redis-server (make test installs it)")
	}
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	r := &redisProc{dir: dir, addr: addr, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--bind", host, "--port", port, "--dir", dir, "--appendonly", "yes", "--appendfsync", "always",
		"--save", "", "--daemonize", "no", "--loglevel", "warning")
	logs := &syncBuffer{}
	r.cmd.Stdout, r.cmd.Stderr = logs, logs
	require.NoError(t, r.cmd.Start())
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return false
		}
		defer func() { _ = c.Close() }()
		_, _ = c.Write([]byte("PING\r\n"))
		buf := make([]byte, 16)
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := c.Read(buf)
		return strings.HasPrefix(string(buf[:n]), "+PONG")
	}, 20*time.Second, 20*time.Millisecond, "redis-server on %s did not come up:\n%s", addr, logs.String())
	return r
}
