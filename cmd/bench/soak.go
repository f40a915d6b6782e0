package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// The soak (SPEC L2, `BENCH_SOAK=1 make bench`): one agent run of many tool
// calls against a scripted model on loopback, with the worker process
// killed (SIGKILL) and started again every KillEvery calls. The calls are
// of two tools of the bench worker (worker.go, registered when
// BENCH_RECORDER_URL is set): a read-only one and an at-most-once one;
// both report each execution to a recorder in this process, outside the
// worker, by the call's key and operation id.

// The soak's tools.
const (
	ToolSoakRead  = "soak_read"
	ToolSoakWrite = "soak_write"
)

var soakSchema = tools.Schema(`{"type":"object","properties":{
	"k":{"type":"string","description":"the call's key, unique in the run"}},
	"required":["k"],"additionalProperties":false}`)

// soakTools report each execution to url: the read-only tool its key, the
// at-most-once tool its key and operation id.
func soakTools(url string) []tools.Definition {
	post := func(kind string) tools.Handler {
		return func(ctx context.Context, req tools.Request) (tools.Result, error) {
			var a struct {
				K string `json:"k"`
			}
			if err := req.Decode(&a); err != nil {
				return tools.Result{}, err
			}
			body, _ := json.Marshal(soakRecord{Kind: kind, Key: a.K, OperationID: req.OperationID})
			hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
			if err != nil {
				return tools.Result{}, err
			}
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				return tools.Result{}, fmt.Errorf("recorder: %w", err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				return tools.Result{}, fmt.Errorf("recorder: %s", resp.Status)
			}
			return tools.Text("ok"), nil
		}
	}
	return []tools.Definition{
		{
			Name: ToolSoakRead, Description: "Reads nothing and answers ok; the soak counts its executions.",
			Parameters: soakSchema, Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 10 * time.Second,
			Source: tools.SourceApp, Handler: post("read"),
		},
		{
			Name: ToolSoakWrite, Description: "Records its operation id once per execution and answers ok; the soak counts them.",
			Parameters: soakSchema, Concurrent: true, SideEffect: tools.AtMostOnce, Timeout: 10 * time.Second,
			Source: tools.SourceApp, Handler: post("write"),
		},
	}
}

// soakRecord is what a soak tool reports of an execution.
type soakRecord struct {
	Kind        string `json:"kind"`
	Key         string `json:"key"`
	OperationID string `json:"operation_id"`
}

// recorder counts executions by key and, for the at-most-once tool, by
// operation id. When the distinct keys reach a multiple of every, it sends
// the count on kills.
type recorder struct {
	mu     sync.Mutex
	keys   map[string]int // executions by key
	writes map[string]int // executions of the at-most-once tool by operation id
	opOf   map[string]map[string]bool
	every  int
	kills  chan int
}

func newRecorder(every int) *recorder {
	return &recorder{keys: map[string]int{}, writes: map[string]int{}, opOf: map[string]map[string]bool{}, every: every, kills: make(chan int, 64)}
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var rec soakRecord
	if req.Method != http.MethodPost || json.NewDecoder(req.Body).Decode(&rec) != nil || rec.Key == "" {
		http.Error(w, "want POST {kind, key, operation_id}", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.keys[rec.Key]++
	if rec.Kind == "write" {
		r.writes[rec.OperationID]++
		if r.opOf[rec.Key] == nil {
			r.opOf[rec.Key] = map[string]bool{}
		}
		r.opOf[rec.Key][rec.OperationID] = true
	}
	n := len(r.keys)
	first := r.keys[rec.Key] == 1
	r.mu.Unlock()
	if first && r.every > 0 && n%r.every == 0 {
		select {
		case r.kills <- n:
		default:
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// duplicates are the operation ids of the at-most-once tool that ran more
// than once, and its keys that ran under more than one operation id.
func (r *recorder) duplicates() (ops, keys int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.writes {
		if n > 1 {
			ops++
		}
	}
	for _, set := range r.opOf {
		if len(set) > 1 {
			keys++
		}
	}
	return ops, keys
}

// SoakOptions are the settings of `go run ./cmd/bench soak`.
type SoakOptions struct {
	Address   string
	Namespace string
	TaskQueue string
	// Calls in the run, PerRound in each round, every WriteEvery-th call of
	// a round the at-most-once tool; the worker is killed every KillEvery
	// calls.
	Calls      int
	PerRound   int
	WriteEvery int
	MaxRounds  int
	KillEvery  int
	// ContextTokens is the worker's LLM_CONTEXT_TOKENS: the conversation
	// of 10,000 calls is about 400,000 tokens by the budget's estimate (4
	// bytes a token), above the default budget (B3), which would end the
	// run context_exceeded.
	ContextTokens int
	// Keep leaves the run's workflows on the server; by default they are
	// deleted once read (the run leaves hundreds of MB of history, which an
	// in-memory dev server holds in memory).
	Keep     bool
	RedisURL string
	Timeout  time.Duration
	Out      string
}

func parseSoakOptions(args []string) (SoakOptions, error) {
	var o SoakOptions
	fs := flag.NewFlagSet("bench soak", flag.ContinueOnError)
	fs.StringVar(&o.Address, "address", envStr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (TEMPORAL_ADDRESS)")
	fs.StringVar(&o.Namespace, "namespace", envStr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (TEMPORAL_NAMESPACE)")
	fs.StringVar(&o.TaskQueue, "task-queue", envStr("BENCH_TASK_QUEUE", fmt.Sprintf("bench-soak-%d", time.Now().UnixNano())), "task queue, unique per run (BENCH_TASK_QUEUE)")
	fs.IntVar(&o.Calls, "calls", envInt("BENCH_SOAK_CALLS", 10000), "tool calls in the run (BENCH_SOAK_CALLS)")
	fs.IntVar(&o.PerRound, "per-round", envInt("BENCH_SOAK_PER_ROUND", 20), "calls in each round (BENCH_SOAK_PER_ROUND)")
	fs.IntVar(&o.WriteEvery, "write-every", envInt("BENCH_SOAK_WRITE_EVERY", 4), "every n-th call of a round is at-most-once, the others read-only (BENCH_SOAK_WRITE_EVERY)")
	fs.IntVar(&o.MaxRounds, "max-rounds", envInt("BENCH_SOAK_MAX_ROUNDS", 600), "the run's max_rounds (BENCH_SOAK_MAX_ROUNDS)")
	fs.IntVar(&o.KillEvery, "kill-every", envInt("BENCH_SOAK_KILL_EVERY", 1000), "kill the worker every n calls; 0 never (BENCH_SOAK_KILL_EVERY)")
	fs.IntVar(&o.ContextTokens, "context-tokens", envInt("BENCH_SOAK_CONTEXT_TOKENS", 4_000_000), "the worker's LLM_CONTEXT_TOKENS (BENCH_SOAK_CONTEXT_TOKENS)")
	fs.BoolVar(&o.Keep, "keep", envStr("BENCH_SOAK_KEEP", "") == "1", "keep the run's workflows on the server (BENCH_SOAK_KEEP=1)")
	o.RedisURL = envStr("REDIS_URL", "redis://127.0.0.1:6379/0")
	fs.DurationVar(&o.Timeout, "timeout", envDuration("BENCH_SOAK_TIMEOUT", 3*time.Hour), "give up after (BENCH_SOAK_TIMEOUT)")
	fs.StringVar(&o.Out, "out", envStr("BENCH_OUT", filepath.Join("bench", "results", "soak")), "directory for soak.json and soak.txt (BENCH_OUT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.PerRound < 1 || o.PerRound > round.MaxCallsPerRound:
		return o, fmt.Errorf("per-round %d: want 1 to %d", o.PerRound, round.MaxCallsPerRound)
	case o.Calls < o.PerRound || o.Calls%o.PerRound != 0:
		return o, fmt.Errorf("calls %d: want a multiple of per-round %d", o.Calls, o.PerRound)
	case o.Calls/o.PerRound+1 > o.MaxRounds:
		return o, fmt.Errorf("%d rounds of calls and the first find_tools round pass max-rounds %d", o.Calls/o.PerRound, o.MaxRounds)
	case o.WriteEvery < 1 || o.KillEvery < 0 || o.Timeout <= 0:
		return o, errors.New("write-every must be at least 1, kill-every not negative, timeout positive")
	}
	return o, nil
}

// soakScript is the run's model: step 1 loads the two tools' schemas
// (find_tools), steps 2 to rounds+1 make PerRound calls each, then it
// answers. Each call's key is <step>_<i>.
func soakScript(o SoakOptions, requests *stepCounter) scripted.Script {
	rounds := o.Calls / o.PerRound
	return scripted.Func(func(r scripted.Request) (scripted.Turn, error) {
		requests.add(r.Step)
		switch {
		case r.Step == 1:
			return scripted.Turn{Calls: []scripted.Call{{ID: "c0", Name: tools.FindTools,
				Args: fmt.Sprintf(`{"query":"select:%s,%s"}`, ToolSoakRead, ToolSoakWrite)}}}, nil
		case r.Step <= rounds+1:
			t := scripted.Turn{}
			for i := range o.PerRound {
				name := ToolSoakRead
				if (i+1)%o.WriteEvery == 0 {
					name = ToolSoakWrite
				}
				t.Calls = append(t.Calls, scripted.Call{ID: fmt.Sprintf("c%d_%d", r.Step, i), Name: name, Args: fmt.Sprintf(`{"k":"%d_%d"}`, r.Step, i)})
			}
			return t, nil
		default:
			return scripted.Turn{Text: "done"}, nil
		}
	})
}

// stepCounter counts the model requests by step.
type stepCounter struct {
	mu sync.Mutex
	n  map[int]int
}

func (c *stepCounter) add(step int) {
	c.mu.Lock()
	c.n[step]++
	c.mu.Unlock()
}

// repeated is the number of requests beyond the first of each step.
func (c *stepCounter) repeated() (total, extra int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.n {
		total += n
		extra += n - 1
	}
	return total, extra
}

// SoakReport is what the soak measured; soak.json holds it.
type SoakReport struct {
	Time          time.Time `json:"time"`
	Command       string    `json:"command"`
	Address       string    `json:"address"`
	ServerVersion string    `json:"server_version"`
	CPUs          int       `json:"cpus"`
	LoadAvgStart  string    `json:"loadavg_start"`
	LoadAvgEnd    string    `json:"loadavg_end"`
	Seconds       float64   `json:"seconds"`
	WorkflowID    string    `json:"workflow_id"`
	Status        string    `json:"status"`

	Calls         int `json:"calls"`
	PerRound      int `json:"per_round"`
	WriteEvery    int `json:"write_every"`
	Rounds        int `json:"rounds"`
	ContinueAsNew int `json:"continues_as_new"`
	Kills         int `json:"kills"`
	// KillAt is the distinct calls executed at each kill; KillSeconds how
	// long after the start each kill came, and RestartSeconds how long the
	// new worker took to poll.
	KillAt         []int     `json:"kill_at_calls"`
	KillSeconds    []float64 `json:"kill_seconds"`
	RestartSeconds []float64 `json:"restart_seconds"`
	ModelRequests  int       `json:"model_requests"`
	ModelRepeated  int       `json:"model_requests_repeated"`

	// The run's executions (the agent workflow, continued as new) and its
	// rounds (child workflows), as visibility records them.
	Executions         []SoakExecution `json:"executions"`
	AgentEvents        int64           `json:"agent_events"`
	AgentBytes         int64           `json:"agent_bytes"`
	RoundEvents        int64           `json:"round_events"`
	RoundBytes         int64           `json:"round_bytes"`
	EventsPerCall      float64         `json:"events_per_call"`
	BytesPerCall       float64         `json:"bytes_per_call"`
	AgentEventsPerCall float64         `json:"agent_events_per_call"`
	AgentBytesPerCall  float64         `json:"agent_bytes_per_call"`
	// Per call: over the calls that have a result.
	CallsPerExecution float64 `json:"calls_per_execution"`
	MaxExecEvents     int64   `json:"max_execution_events"`
	MaxExecBytes      int64   `json:"max_execution_bytes"`
	MaxRoundEvents    int64   `json:"max_round_events"`
	MaxRoundBytes     int64   `json:"max_round_bytes"`

	// Results by status over every call of the rounds; Lost are calls of
	// the script without a result; Duplicates the at-most-once operation
	// ids (and keys) the recorder saw run more than once.
	ByStatus           map[string]int `json:"results_by_status"`
	Lost               int            `json:"lost"`
	DuplicateOps       int            `json:"duplicate_operation_ids"`
	DuplicateKeys      int            `json:"duplicate_keys"`
	Unknown            int            `json:"unknown_outcome"`
	UnknownJustified   int            `json:"unknown_outcome_justified"`
	UnknownRan         int            `json:"unknown_outcome_that_ran"`
	ReadExecutions     int            `json:"read_executions"`
	ReadCalls          int            `json:"read_calls"`
	WriteCalls         int            `json:"write_calls"`
	WorkerFirstMiB     float64        `json:"worker_vmrss_after_first_kill_every_mib"`
	WorkerEndMiB       float64        `json:"worker_vmrss_end_mib"`
	WorkerBeforeKills  []float64      `json:"worker_vmrss_before_each_kill_mib"`
	WorkerRSSRatio     float64        `json:"worker_vmrss_end_over_first"`
	HistoryEventsLimit int64          `json:"history_events_limit"`
	HistoryBytesLimit  int64          `json:"history_bytes_limit"`
	Failures           []string       `json:"failures"`

	roundIDs []string
}

// SoakExecution is one execution of the agent workflow.
type SoakExecution struct {
	RunID  string    `json:"run_id"`
	Start  time.Time `json:"start"`
	Events int64     `json:"events"`
	Bytes  int64     `json:"bytes"`
	Status string    `json:"status"`
}

// The history bounds the soak holds every execution to (L2): Temporal
// warns at 10 MiB and 10,240 events.
const (
	soakMaxEvents = 10000
	soakMaxBytes  = 10 << 20
	soakRSSFactor = 1.5
)

func runSoak(args []string) error {
	o, err := parseSoakOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	rep, err := RunSoak(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	rep.Command = "BENCH_SOAK=1 make bench " + strings.Join(args, " ")
	if err := writeReport(o.Out, "soak", rep); err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("soak failed: %s", strings.Join(rep.Failures, "; "))
	}
	return nil
}

// RunSoak runs the soak and checks it.
func RunSoak(ctx context.Context, o SoakOptions, progress io.Writer) (*SoakReport, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	logf := func(format string, args ...any) { fmt.Fprintf(progress, "==> "+format+"\n", args...) }
	tc, err := dialTemporal(o.Address, o.Namespace, progress)
	if err != nil {
		return nil, err
	}
	defer tc.Close()

	rec := newRecorder(o.KillEvery)
	steps := &stepCounter{n: map[int]int{}}
	mux := http.NewServeMux()
	mux.Handle("/v1/", scripted.Handler(soakScript(o, steps), scripted.Options{}))
	mux.Handle("/record", rec)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()
	base := "http://" + l.Addr().String()

	env := []string{"TEMPORAL_ADDRESS=" + o.Address, "TEMPORAL_NAMESPACE=" + o.Namespace,
		"LLM_BASE_URL=" + base + "/v1", "LLM_MODEL=scripted", "LLM_API_KEY=none", "BENCH_RECORDER_URL=" + base + "/record",
		fmt.Sprintf("LLM_CONTEXT_TOKENS=%d", o.ContextTokens)}
	logf("soak: starting the worker on task queue %s (TEMPORAL_ADDRESS=%s)", o.TaskQueue, o.Address)
	w, _, err := startWorker(ctx, o.TaskQueue, env)
	if err != nil {
		return nil, err
	}
	defer func() { w.stop() }()

	session := "soak-" + strings.TrimPrefix(o.TaskQueue, "bench-soak-")
	rep := &SoakReport{
		Time: time.Now().UTC(), Address: o.Address, ServerVersion: serverVersion(ctx, tc), CPUs: runtime.NumCPU(),
		LoadAvgStart: loadAvg(), Calls: o.Calls, PerRound: o.PerRound, WriteEvery: o.WriteEvery,
		HistoryEventsLimit: soakMaxEvents, HistoryBytesLimit: soakMaxBytes, ByStatus: map[string]int{},
	}
	cl := client.New(tc, client.Options{TaskQueue: o.TaskQueue})
	in := round.AgentInput{SessionID: session, RunID: "soak", Task: fmt.Sprintf("make %d tool calls", o.Calls),
		Provider: tools.ProviderClaudeCode, AutoApprove: true, MaxRounds: o.MaxRounds}
	start := time.Now()
	run, err := cl.StartAgent(ctx, in)
	if err != nil {
		return nil, err
	}
	rep.WorkflowID = names.AgentWorkflowID(session, "soak")
	logf("soak: agent run %s: %d calls, %d a round, the worker killed every %d calls", rep.WorkflowID, o.Calls, o.PerRound, o.KillEvery)

	type ended struct {
		st  round.AgentStatus
		err error
	}
	done := make(chan ended, 1)
	go func() {
		var st round.AgentStatus
		err := run.Get(ctx, &st)
		done <- ended{st, err}
	}()
	var kills []time.Time
	var result ended
wait:
	for {
		select {
		case n := <-rec.kills:
			if n >= o.Calls {
				continue
			}
			m := readMemory(w.cmd.Process.Pid)
			rep.WorkerBeforeKills = append(rep.WorkerBeforeKills, m.ResidMiB)
			if len(kills) == 0 {
				rep.WorkerFirstMiB = m.ResidMiB
			}
			logf("soak: %d calls executed after %.0f s: SIGKILL to the worker (VmRSS %.1f MiB)", n, time.Since(start).Seconds(), m.ResidMiB)
			w.kill()
			kills = append(kills, time.Now())
			rep.KillAt = append(rep.KillAt, n)
			rep.KillSeconds = append(rep.KillSeconds, round2(time.Since(start).Seconds()))
			t0 := time.Now()
			if w, _, err = startWorker(ctx, o.TaskQueue, env); err != nil {
				return nil, fmt.Errorf("restart the worker: %w", err)
			}
			rep.RestartSeconds = append(rep.RestartSeconds, round2(time.Since(t0).Seconds()))
		case result = <-done:
			break wait
		}
	}
	rep.Seconds = round2(time.Since(start).Seconds())
	rep.Kills = len(kills)
	end := readMemory(w.cmd.Process.Pid)
	rep.WorkerEndMiB = end.ResidMiB
	rep.WorkerRSSRatio = Ratio(rep.WorkerEndMiB, rep.WorkerFirstMiB)
	rep.ModelRequests, rep.ModelRepeated = steps.repeated()
	if result.err != nil {
		rep.Failures = append(rep.Failures, fmt.Sprintf("the run failed: %v", result.err))
	} else {
		rep.Status = result.st.Status
		if rep.Status != round.AgentCompleted {
			rep.Failures = append(rep.Failures, fmt.Sprintf("the run ended %s (%s)", rep.Status, result.st.Reason))
		}
	}
	logf("soak: the run ended %s after %.0f s; reading its histories and results", rep.Status, rep.Seconds)
	if err := rep.check(ctx, tc, rec, o, session, kills); err != nil {
		return nil, err
	}
	rep.LoadAvgEnd = loadAvg()
	cleanSession(ctx, o.RedisURL, session)
	if !o.Keep {
		logf("soak: deleting the run's %d executions and %d rounds from the server (-keep leaves them)", len(rep.Executions), rep.Rounds)
		if err := rep.deleteWorkflows(ctx, tc, o.Namespace); err != nil {
			logf("soak: the run's workflows stay on the server: %v", err)
		}
	}
	return rep, nil
}

// deleteWorkflows deletes the run's executions and rounds; a failure only
// leaves them to the namespace's retention, and the first is returned.
func (rep *SoakReport) deleteWorkflows(ctx context.Context, tc tclient.Client, namespace string) error {
	var first error
	del := func(id, runID string) {
		_, err := tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID}})
		if err != nil && first == nil {
			first = fmt.Errorf("delete %s: %w", id, err)
		}
	}
	for _, x := range rep.Executions {
		del(rep.WorkflowID, x.RunID)
	}
	for _, id := range rep.roundIDs {
		del(id, "")
	}
	return first
}

// soakRound is a round workflow as visibility lists it.
type soakRound struct {
	id           string
	start, close time.Time
	events       int64
	bytes        int64
}

// check reads the run's executions and rounds and sets the figures and
// the failures.
func (rep *SoakReport) check(ctx context.Context, tc tclient.Client, rec *recorder, o SoakOptions, session string, kills []time.Time) error {
	wantRounds := o.Calls/o.PerRound + 1
	var rounds []soakRound
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rep.Executions, rounds = nil, nil
		var token []byte
		for {
			resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Query:         fmt.Sprintf("WorkflowId = '%s' OR WorkflowId STARTS_WITH '%s/'", rep.WorkflowID, strings.TrimSuffix(names.WorkflowID(session, "soak", 1), "/1")),
				NextPageToken: token,
			})
			if err != nil {
				return fmt.Errorf("list the run's workflows: %w", err)
			}
			for _, x := range resp.GetExecutions() {
				if x.GetType().GetName() == names.AgentWorkflowName {
					rep.Executions = append(rep.Executions, SoakExecution{RunID: x.GetExecution().GetRunId(), Start: x.GetStartTime().AsTime(),
						Events: x.GetHistoryLength(), Bytes: x.GetHistorySizeBytes(), Status: x.GetStatus().String()})
					continue
				}
				rounds = append(rounds, soakRound{id: x.GetExecution().GetWorkflowId(), start: x.GetStartTime().AsTime(),
					close: x.GetCloseTime().AsTime(), events: x.GetHistoryLength(), bytes: x.GetHistorySizeBytes()})
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		closed := 0
		for _, r := range rounds {
			if !r.close.IsZero() && r.close.Unix() > 0 {
				closed++
			}
		}
		if closed >= wantRounds || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	sort.Slice(rep.Executions, func(i, j int) bool { return rep.Executions[i].Start.Before(rep.Executions[j].Start) })
	rep.Rounds = len(rounds)
	for _, r := range rounds {
		rep.roundIDs = append(rep.roundIDs, r.id)
	}
	rep.ContinueAsNew = max(0, len(rep.Executions)-1)
	if rep.Rounds != wantRounds {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d rounds, want %d", rep.Rounds, wantRounds))
	}
	for _, x := range rep.Executions {
		rep.AgentEvents += x.Events
		rep.AgentBytes += x.Bytes
		rep.MaxExecEvents, rep.MaxExecBytes = max(rep.MaxExecEvents, x.Events), max(rep.MaxExecBytes, x.Bytes)
	}
	for _, r := range rounds {
		rep.RoundEvents += r.events
		rep.RoundBytes += r.bytes
		rep.MaxRoundEvents, rep.MaxRoundBytes = max(rep.MaxRoundEvents, r.events), max(rep.MaxRoundBytes, r.bytes)
	}
	var over []string
	for i, x := range rep.Executions {
		if x.Events > soakMaxEvents || x.Bytes > soakMaxBytes {
			over = append(over, fmt.Sprint(i+1))
		}
	}
	if len(over) > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d of %d executions of the agent run passed %d events or %d bytes of history (executions %s; the most bytes %d, the most events %d)",
			len(over), len(rep.Executions), soakMaxEvents, soakMaxBytes, strings.Join(over, ", "), rep.MaxExecBytes, rep.MaxExecEvents))
	}
	if rep.MaxRoundEvents > soakMaxEvents || rep.MaxRoundBytes > soakMaxBytes {
		rep.Failures = append(rep.Failures, fmt.Sprintf("a round's history passed %d events or %d bytes: the most events %d, the most bytes %d",
			soakMaxEvents, soakMaxBytes, rep.MaxRoundEvents, rep.MaxRoundBytes))
	}
	// Every call's result, from its round's result.
	seen := map[string]bool{}
	for _, r := range rounds {
		var res round.Result
		if err := tc.GetWorkflow(ctx, r.id, "").Get(ctx, &res); err != nil {
			rep.Failures = append(rep.Failures, fmt.Sprintf("round %s: %v", r.id, err))
			continue
		}
		for _, c := range res.Results {
			if c.Tool != ToolSoakRead && c.Tool != ToolSoakWrite {
				continue
			}
			if seen[c.CallID] {
				rep.Failures = append(rep.Failures, fmt.Sprintf("call %s has two results", c.CallID))
			}
			seen[c.CallID] = true
			rep.ByStatus[string(c.Status)]++
			if c.Tool == ToolSoakRead {
				rep.ReadCalls++
			} else {
				rep.WriteCalls++
			}
			switch {
			case c.Status == round.StatusOK:
			case c.Status == round.StatusUnknownOutcome:
				rep.Unknown++
				// Justified (L1): an at-most-once call without a reconciler
				// whose round was open when the worker was killed, so the
				// kill may lie between its attempt's start and its
				// completion being recorded.
				if c.Tool == ToolSoakWrite && killedDuring(kills, r.start, r.close) {
					rep.UnknownJustified++
				}
				rec.mu.Lock()
				if len(rec.opOf[strings.TrimPrefix(c.CallID, "c")]) > 0 {
					rep.UnknownRan++
				}
				rec.mu.Unlock()
			default:
				rep.Failures = append(rep.Failures, fmt.Sprintf("call %s (%s) ended %s: %s", c.CallID, c.Tool, c.Status, c.Content))
			}
		}
	}
	calls := float64(max(1, len(seen)))
	rep.EventsPerCall = round2(float64(rep.AgentEvents+rep.RoundEvents) / calls)
	rep.BytesPerCall = round2(float64(rep.AgentBytes+rep.RoundBytes) / calls)
	rep.AgentEventsPerCall = round2(float64(rep.AgentEvents) / calls)
	rep.AgentBytesPerCall = round2(float64(rep.AgentBytes) / calls)
	rep.CallsPerExecution = round2(calls / float64(max(1, len(rep.Executions))))

	rep.Lost = o.Calls - len(seen)
	if rep.Lost != 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("lost %d calls", rep.Lost))
	}
	if rep.Unknown != rep.UnknownJustified {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d unknown_outcome, %d of them justified", rep.Unknown, rep.UnknownJustified))
	}
	rep.DuplicateOps, rep.DuplicateKeys = rec.duplicates()
	if rep.DuplicateOps+rep.DuplicateKeys != 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("duplicates: %d operation ids and %d keys of the at-most-once tool ran more than once", rep.DuplicateOps, rep.DuplicateKeys))
	}
	rec.mu.Lock()
	for k, n := range rec.keys {
		if len(rec.opOf[k]) == 0 {
			rep.ReadExecutions += n
		}
	}
	rec.mu.Unlock()
	if rep.WorkerFirstMiB > 0 && rep.WorkerEndMiB > soakRSSFactor*rep.WorkerFirstMiB {
		rep.Failures = append(rep.Failures, fmt.Sprintf("the worker's VmRSS at the end, %.1f MiB, is above %.1fx its %.1f MiB after the first %d calls", rep.WorkerEndMiB, soakRSSFactor, rep.WorkerFirstMiB, o.KillEvery))
	}
	if o.KillEvery > 0 && o.Calls > o.KillEvery && rep.WorkerFirstMiB == 0 {
		rep.Failures = append(rep.Failures, "the worker was never killed")
	}
	return nil
}

// killedDuring says whether a kill came between start and end.
func killedDuring(kills []time.Time, start, end time.Time) bool {
	for _, k := range kills {
		if !k.Before(start) && !k.After(end) {
			return true
		}
	}
	return false
}

// Print writes the soak's figures and verdict.
func (rep *SoakReport) Print(w io.Writer) {
	fmt.Fprintf(w, "\ntoolround soak %s: server %s at %s, %d CPUs, load %s -> %s, %.0f s\n",
		rep.Time.Format(time.RFC3339), rep.ServerVersion, rep.Address, rep.CPUs, rep.LoadAvgStart, rep.LoadAvgEnd, rep.Seconds)
	fmt.Fprintf(w, "agent run %s: %s\n", rep.WorkflowID, rep.Status)
	fmt.Fprintf(w, "calls %d (%d read-only, %d at-most-once; %d a round), rounds %d (the first loads the tools' schemas), continues-as-new %d, worker kills %d at calls %v\n",
		rep.ReadCalls+rep.WriteCalls, rep.ReadCalls, rep.WriteCalls, rep.PerRound, rep.Rounds, rep.ContinueAsNew, rep.Kills, rep.KillAt)
	fmt.Fprintf(w, "model requests %d (%d repeated after a kill); read-only executions %d for %d calls\n",
		rep.ModelRequests, rep.ModelRepeated, rep.ReadExecutions, rep.ReadCalls)
	fmt.Fprintf(w, "history per call: %.1f events, %.0f bytes (the agent run's executions and its rounds); the agent run's alone: %.2f events, %.0f bytes\n",
		rep.EventsPerCall, rep.BytesPerCall, rep.AgentEventsPerCall, rep.AgentBytesPerCall)
	fmt.Fprintf(w, "executions of the agent run: %d, %.0f calls each on average; largest %d events, %d bytes (limit %d events, %d bytes); largest round %d events, %d bytes\n",
		len(rep.Executions), rep.CallsPerExecution, rep.MaxExecEvents, rep.MaxExecBytes, soakMaxEvents, soakMaxBytes, rep.MaxRoundEvents, rep.MaxRoundBytes)
	for i, x := range rep.Executions {
		fmt.Fprintf(w, "  execution %d: %d events, %d bytes, %s\n", i+1, x.Events, x.Bytes, strings.TrimPrefix(x.Status, "WORKFLOW_EXECUTION_STATUS_"))
	}
	fmt.Fprintf(w, "worker VmRSS: %.1f MiB after the first %d calls, %.1f MiB at the end (x%.2f; limit x%.1f); before each kill %v MiB\n",
		rep.WorkerFirstMiB, firstKill(rep.KillAt), rep.WorkerEndMiB, rep.WorkerRSSRatio, soakRSSFactor, rep.WorkerBeforeKills)
	fmt.Fprintf(w, "results by status %v\n", rep.ByStatus)
	fmt.Fprintf(w, "soak: duplicates %d, lost %d, unknown_outcome %d (%d justified, %d of them had run)\n",
		rep.DuplicateOps+rep.DuplicateKeys, rep.Lost, rep.Unknown, rep.UnknownJustified, rep.UnknownRan)
	if len(rep.Failures) == 0 {
		fmt.Fprintln(w, "soak passed")
		return
	}
	for _, f := range rep.Failures {
		fmt.Fprintln(w, "soak failed: "+f)
	}
}

func firstKill(at []int) int {
	if len(at) == 0 {
		return 0
	}
	return at[0]
}
