package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Case is one kind of round the benchmark runs.
type Case struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Tool is the tool every call names; empty for the empty workflow.
	Tool  string `json:"tool,omitempty"`
	Calls int    `json:"calls"`
	// Payload, for a case without a tool, is the size of the workflow's
	// result in bytes.
	Payload int `json:"payload,omitempty"`
	// Peer, for a case without a tool, names the peer pattern it runs
	// (peer.go): Calls calls as activities, all at once (regular), at most
	// the round's bound at once (bounded), or as local activities (local).
	Peer string `json:"peer,omitempty"`
	// User, for a user tool's case, is the kind of tool worker that serves
	// Tool (usertools.go): python or go.
	User string `json:"user_tool_worker,omitempty"`
}

// The latency cases run interleaved, one round at a time, so that whatever
// else the machine does weighs on all of them alike.
var latencyCases = []Case{
	{Name: "empty", Label: "empty workflow"},
	{Name: "noop1", Label: "1 no-op", Tool: ToolNoop, Calls: 1},
	{Name: "noop10", Label: "10 no-op", Tool: ToolNoop, Calls: 10},
	{Name: "noop50", Label: "50 no-op", Tool: ToolNoop, Calls: 50},
	{Name: "atmostonce10", Label: "10 at-most-once", Tool: ToolWrite, Calls: 10},
	{Name: "pytool10", Label: "10 Python user tool", Tool: ToolPyLookup, Calls: 10, User: userPython},
	{Name: "gotool10", Label: "10 Go user tool", Tool: ToolGoLookup, Calls: 10, User: userGo},
	{Name: "peer10", Label: "peer: 10 activities", Peer: peerRegular, Calls: 10},
	{Name: "peerbounded10", Label: "peer: 10 activities, bounded", Peer: peerBounded, Calls: 10},
	{Name: "peerlocal10", Label: "peer: 10 local activities", Peer: peerLocal, Calls: 10},
}

// peerThroughputCase is the peer round whose throughput at floorInFlight
// the throughput case is compared with: ratio_throughput_4_vs_peer.
const peerThroughputCase = "peer10"

func caseNamed(name string) *Case {
	for _, cs := range [][]Case{latencyCases, extraCases} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

func caseNames() []string {
	var out []string
	for _, c := range append(append([]Case(nil), latencyCases...), extraCases...) {
		out = append(out, c.Name)
	}
	return out
}

// casesFor are the latency cases of this run for a setup: those of a user
// tool only when the setup's tool worker of its kind answers.
func (b *bench) casesFor(s *setup) []Case {
	var out []Case
	for _, c := range b.cases() {
		if c.User == "" || s.userTools[c.User] != nil {
			out = append(out, c)
		}
	}
	return out
}

// wantsUserTools says whether a case of this run calls a user tool.
func (b *bench) wantsUserTools() bool {
	for _, c := range b.cases() {
		if c.User != "" {
			return true
		}
	}
	return false
}

// cases are the latency cases of this run, the empty workflow first.
func (b *bench) cases() []Case {
	if len(b.o.Cases) == 0 {
		return latencyCases
	}
	out := []Case{latencyCases[0]}
	for _, name := range b.o.Cases {
		if c := caseNamed(name); c != nil && c.Name != latencyCases[0].Name {
			out = append(out, *c)
		}
	}
	return out
}

// extraCases run only when -cases names them.
var extraCases = []Case{
	// The result of a 50-call round is about 57 KB: this separates the cost
	// of carrying it from the cost of running the calls.
	{Name: "payload57k", Label: "empty, 57 KB result", Payload: 57 << 10},
}

var sleepCase = Case{Name: "sleep10", Label: "10 x sleep", Tool: ToolSleep, Calls: 10}

var inFlightLevels = []int{1, 4}

const roundTimeout = 2 * time.Minute

// setup is one worker configuration under test and the client that drives it.
type setup struct {
	spec      SetupSpec
	address   string
	taskQueue string
	tc        tclient.Client
	cl        *client.Client
	worker    *workerProc
	inProcess *engineWorker
	eager     bool
	// serverPID is the Temporal server's process, when known
	// (BENCH_SERVER_PID in the setup's environment, else the benchmark's
	// for a setup on the benchmark's own server):
	// its CPU time per round goes into the throughput levels.
	serverPID int
	bound     int
	localMax  string
	samples   map[string][]sample
	latencies map[string][]time.Duration
	// userTools are the setup's tool workers that answer, by kind
	// (usertools.go); toolDir holds their files and logs.
	userTools map[string]*sideProc
	toolDir   string
}

// bench is one run.
type bench struct {
	o       Options
	session string
	log     io.Writer
	setups  []*setup
	sink    *otlpSink // telemetry.go
}

// Run starts a worker per setup, measures every case and returns the report.
func Run(ctx context.Context, o Options, progress io.Writer) (*Report, error) {
	b := &bench{o: o, session: "bench-" + strings.TrimPrefix(o.TaskQueue, "bench-"), log: progress}
	defer b.close()
	specs := append([]SetupSpec{{Name: o.Label}}, o.Compare...)
	for _, spec := range specs {
		if err := b.withOTLPSink(&spec); err != nil {
			return nil, err
		}
		s, err := b.startSetup(ctx, spec)
		if err != nil {
			return nil, err
		}
		b.setups = append(b.setups, s)
	}
	rep := newReport(ctx, o, b.setups[0])
	start := time.Now()

	if err := b.latency(ctx); err != nil {
		return nil, err
	}
	if err := b.makespan(ctx); err != nil {
		return nil, err
	}
	for _, s := range b.setups {
		sr := SetupReport{Name: s.spec.Name, Env: s.spec.Env, Address: s.address, TaskQueue: s.taskQueue, Bound: s.bound, LocalActivityMax: s.localMax}
		for _, n := range inFlightLevels {
			tps, err := b.throughput(ctx, s, n)
			if err != nil {
				return nil, err
			}
			sr.Throughput = append(sr.Throughput, tps...)
		}
		rep.Setups = append(rep.Setups, sr)
	}
	for i, s := range b.setups {
		sr := &rep.Setups[i]
		for _, c := range append(b.casesFor(s), sleepCase) {
			cr := CaseReport{Case: c, Latency: Summarize(s.latencies[c.Name])}
			hs, err := b.histories(ctx, s, c)
			if err != nil {
				return nil, err
			}
			cr.History = hs
			sr.Cases = append(sr.Cases, cr)
		}
		sr.Worker = s.memory()
		for kind, p := range s.userTools {
			if sr.ToolWorkers == nil {
				sr.ToolWorkers = map[string]Memory{}
			}
			sr.ToolWorkers[kind] = readMemory(p.cmd.Process.Pid)
		}
		sr.finish(s.bound, o.Sleep)
	}
	rep.Machine.LoadAvgEnd = loadAvg()
	rep.Seconds = round2(time.Since(start).Seconds())
	b.cleanRedis(ctx)
	return rep, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "==> "+format+"\n", args...)
}

func (b *bench) startSetup(ctx context.Context, spec SetupSpec) (*setup, error) {
	s := &setup{
		spec: spec, address: b.o.Address, taskQueue: b.o.TaskQueue + "-" + spec.Name,
		samples: map[string][]sample{}, latencies: map[string][]time.Duration{},
	}
	if v := envValue(spec.Env, "TEMPORAL_ADDRESS"); v != "" {
		s.address = v
	}
	if envValue(spec.Env, "TEMPORAL_ADDRESS") == "" {
		s.serverPID = envInt("BENCH_SERVER_PID", 0)
	}
	if v := envValue(spec.Env, "BENCH_SERVER_PID"); v != "" {
		_, _ = fmt.Sscan(v, &s.serverPID)
	}
	logger := slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tc, err := tclient.Dial(tclient.Options{HostPort: s.address, Namespace: b.o.Namespace, Logger: tlog.NewStructuredLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("temporal: dial %s (namespace %s): %w", s.address, b.o.Namespace, err)
	}
	s.tc = tc
	s.cl = client.New(tc, client.Options{TaskQueue: s.taskQueue})
	if envValue(spec.Env, "BENCH_IN_PROCESS") == "1" {
		return s, b.startInProcess(ctx, s, logger)
	}
	others := slices.DeleteFunc(slices.Clone(spec.Env), func(kv string) bool { return strings.HasPrefix(kv, "TEMPORAL_ADDRESS=") })
	b.logf("starting the %s worker on task queue %s (TEMPORAL_ADDRESS=%s%s)", spec.Name, s.taskQueue, s.address, envSuffix(others))
	env := []string{"TEMPORAL_ADDRESS=" + b.o.Address, "TEMPORAL_NAMESPACE=" + b.o.Namespace}
	if b.wantsUserTools() {
		env = append(env, toolQueuesEnv(s.taskQueue))
	}
	w, ready, err := startWorker(ctx, s.taskQueue, append(env, spec.Env...))
	if err != nil {
		tc.Close()
		return nil, err
	}
	s.worker = w
	s.bound = ready.bound
	s.localMax = ready.localMax
	if b.wantsUserTools() {
		if s.toolDir, err = os.MkdirTemp("", "toolround-bench-tools-"); err != nil {
			b.logf("%s: the user-tool cases are left out: %v", spec.Name, err)
			return s, nil
		}
		b.logf("starting the %s setup's Python and Go tool workers on %s and %s", spec.Name, toolQueue(s.taskQueue, userPython), toolQueue(s.taskQueue, userGo))
		b.startToolWorkers(ctx, s, s.toolDir, []string{"TEMPORAL_ADDRESS=" + s.address, "TEMPORAL_NAMESPACE=" + b.o.Namespace})
	}
	return s, nil
}

// startInProcess runs the setup's worker inside the benchmark, on the
// benchmark's own client, which is what eager workflow start needs: the
// server then hands the first workflow task back in the start call's
// response. The worker's configuration is the benchmark's environment.
func (b *bench) startInProcess(ctx context.Context, s *setup, logger *slog.Logger) error {
	for _, kv := range s.spec.Env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "BENCH_IN_PROCESS", "BENCH_EAGER_START", "TEMPORAL_ADDRESS":
		default:
			s.tc.Close()
			return fmt.Errorf("setup %s: an in-process worker takes BENCH_EAGER_START and TEMPORAL_ADDRESS only, not %s", s.spec.Name, k)
		}
	}
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		s.tc.Close()
		return err
	}
	dir, err := os.MkdirTemp("", "toolround-bench-")
	if err != nil {
		s.tc.Close()
		return fmt.Errorf("in-process worker dir: %w", err)
	}
	cfg.TaskQueue, cfg.Workdir, cfg.TemporalAddress, cfg.Namespace = s.taskQueue, dir, s.address, b.o.Namespace
	s.eager = envValue(s.spec.Env, "BENCH_EAGER_START") == "1"
	b.logf("starting the %s worker in process on task queue %s (eager start %t)", s.spec.Name, s.taskQueue, s.eager)
	ew, err := startEngineWorker(ctx, cfg, s.tc, logger)
	if err != nil {
		s.tc.Close()
		return err
	}
	s.inProcess, s.bound, s.localMax = ew, ew.bound, cfg.LocalActivityMax.String()
	if s.eager {
		s.cl = client.New(eagerStarter{s.tc}, client.Options{TaskQueue: s.taskQueue})
	}
	return nil
}

// eagerStarter asks for eager workflow start on every start call: the one
// option the client package would set to have it.
type eagerStarter struct{ tclient.Client }

func (c eagerStarter) ExecuteWorkflow(ctx context.Context, o tclient.StartWorkflowOptions, wf any, args ...any) (tclient.WorkflowRun, error) {
	o.EnableEagerStart = true
	return c.Client.ExecuteWorkflow(ctx, o, wf, args...)
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v = val
		}
	}
	return v
}

// memory is the worker's memory; an in-process worker shares the
// benchmark's process.
func (s *setup) memory() Memory {
	if s.inProcess != nil {
		m := readMemory(os.Getpid())
		m.InProcess = true
		return m
	}
	return readMemory(s.worker.cmd.Process.Pid)
}

func (b *bench) close() {
	for _, s := range b.setups {
		if s.inProcess != nil {
			s.inProcess.stop()
		}
		for _, p := range s.userTools {
			p.stop()
		}
		s.worker.stop()
		s.tc.Close()
		if s.toolDir != "" {
			_ = os.RemoveAll(s.toolDir)
		}
	}
	b.stopSink()
}

// latency runs the latency cases round-robin across cases and setups.
func (b *bench) latency(ctx context.Context) error {
	total := b.o.Warmup + b.o.Iterations
	b.logf("latency: %d cases x %d setups x (%d warm-up + %d measured) rounds, one at a time",
		len(b.cases()), len(b.setups), b.o.Warmup, b.o.Iterations)
	for i := range total {
		// Rotating the order each iteration keeps any one case or setup from
		// always following the same neighbour.
		for _, s := range rotate(b.setups, i) {
			for _, c := range rotate(b.casesFor(s), i) {
				smp, err := b.runOnce(ctx, s, c, c.Name, i)
				if err != nil {
					return err
				}
				if i >= b.o.Warmup {
					s.record(c.Name, smp)
				}
			}
		}
		if (i+1)%50 == 0 {
			b.logf("latency: %d/%d", i+1, total)
		}
	}
	return nil
}

// makespan runs rounds of sleeping tools, to compare with the ideal packing
// ceil(calls/bound) * sleep.
func (b *bench) makespan(ctx context.Context) error {
	warm := min(b.o.Warmup, 3)
	b.logf("makespan: %d calls of %s each, %d warm-up + %d measured rounds", sleepCase.Calls, b.o.Sleep, warm, b.o.SleepIterations)
	for i := range warm + b.o.SleepIterations {
		for _, s := range rotate(b.setups, i) {
			smp, err := b.runOnce(ctx, s, sleepCase, sleepCase.Name, i)
			if err != nil {
				return err
			}
			if i >= warm {
				s.record(sleepCase.Name, smp)
			}
		}
	}
	return nil
}

func rotate[T any](xs []T, k int) []T {
	if len(xs) == 0 {
		return xs
	}
	k %= len(xs)
	return append(append([]T(nil), xs[k:]...), xs[:k]...)
}

func (s *setup) record(name string, smp sample) {
	s.samples[name] = append(s.samples[name], smp)
	s.latencies[name] = append(s.latencies[name], smp.End.Sub(smp.Start))
}

// throughput keeps n rounds in flight for the configured duration. At
// floorInFlight it also keeps n empty workflows and n peer rounds
// (peerThroughputCase) in flight for as long, in the order round, empty,
// peer, peer, empty, round (half the duration each), so that a load that
// rises or falls during the level weighs on all three alike; the second
// Throughput is then the empty workflow's and the third the peer's.
func (b *bench) throughput(ctx context.Context, s *setup, n int) ([]Throughput, error) {
	tc := *caseNamed(b.o.ThroughputCase)
	if n != floorInFlight {
		tp, err := b.roundThroughput(ctx, s, n)
		return []Throughput{tp}, err
	}
	floor, peer := latencyCases[0], *caseNamed(peerThroughputCase)
	b.logf("throughput %s: %d %s rounds, %d empty workflows and %d %s rounds in flight, %s each, alternating",
		s.spec.Name, n, tc.Name, n, n, peer.Name, b.o.ThroughputDuration)
	var round, empty, peers inFlightRun
	half := b.o.ThroughputDuration / 2
	for i, c := range []Case{tc, floor, peer, peer, floor, tc} {
		acc := &round
		switch c.Name {
		case floor.Name:
			acc = &empty
		case peer.Name:
			acc = &peers
		}
		if _, err := b.keepInFlight(ctx, s, n, c, fmt.Sprintf("tp%d-%s-%d", n, c.Name, i), half, acc); err != nil {
			return nil, err
		}
	}
	return []Throughput{round.result(n, tc.Name), empty.result(n, floor.Name), peers.result(n, peer.Name)}, nil
}

// roundThroughput keeps n rounds of the throughput case in flight for the
// configured duration.
func (b *bench) roundThroughput(ctx context.Context, s *setup, n int) (Throughput, error) {
	tc := *caseNamed(b.o.ThroughputCase)
	b.logf("throughput %s: %d %s rounds in flight for %s", s.spec.Name, n, tc.Name, b.o.ThroughputDuration)
	acc, err := b.keepInFlight(ctx, s, n, tc, fmt.Sprintf("tp%d", n), b.o.ThroughputDuration, nil)
	if err != nil {
		return Throughput{}, err
	}
	return acc.result(n, tc.Name), nil
}

// floorInFlight is the in-flight level at which the empty workflow's
// throughput is measured too: ratio_throughput_4.
const floorInFlight = 4

// inFlightRun accumulates the rounds and time of one or more stretches of
// keepInFlight.
type inFlightRun struct {
	lat     []time.Duration
	elapsed time.Duration
	// CPU seconds used meanwhile by the worker process and the server
	// (negative when unknown).
	workerCPU, serverCPU float64
}

func (r *inFlightRun) result(n int, name string) Throughput {
	t := Throughput{
		InFlight: n, Case: name, Rounds: len(r.lat), Seconds: round2(r.elapsed.Seconds()),
		RoundsPerSecond: round2(float64(len(r.lat)) / r.elapsed.Seconds()), Latency: Summarize(r.lat),
	}
	if len(r.lat) > 0 && r.workerCPU >= 0 {
		t.WorkerCPUMS = round2(r.workerCPU * 1000 / float64(len(r.lat)))
	}
	if len(r.lat) > 0 && r.serverCPU > 0 {
		t.ServerCPUMS = round2(r.serverCPU * 1000 / float64(len(r.lat)))
	}
	return t
}

// cpu is the CPU time so far of the setup's worker process (-1 for an
// in-process worker) and of its server (0 when unknown).
func (s *setup) cpu() (worker, server float64) {
	worker = -1
	if s.worker != nil {
		worker = cpuSeconds(s.worker.cmd.Process.Pid)
	}
	if s.serverPID > 0 {
		server = cpuSeconds(s.serverPID)
	}
	return worker, server
}

// keepInFlight keeps n rounds of c in flight for d and adds them to acc (a
// new one when nil), which it returns.
func (b *bench) keepInFlight(ctx context.Context, s *setup, n int, c Case, run string, d time.Duration, acc *inFlightRun) (*inFlightRun, error) {
	if acc == nil {
		acc = &inFlightRun{}
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	w0, srv0 := s.cpu()
	start := time.Now()
	deadline := start.Add(d)
	for range n {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				smp, err := b.runOnce(ctx, s, c, run, int(next.Add(1)))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				acc.lat = append(acc.lat, smp.End.Sub(smp.Start))
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	acc.elapsed += time.Since(start)
	w1, srv1 := s.cpu()
	if w0 < 0 {
		acc.workerCPU = -1
	} else if acc.workerCPU >= 0 {
		acc.workerCPU += w1 - w0
	}
	acc.serverCPU += srv1 - srv0
	return acc, firstErr
}

// runOnce runs one round (or the empty workflow) and times it from the
// start call to the result.
func (b *bench) runOnce(ctx context.Context, s *setup, c Case, run string, i int) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, roundTimeout)
	defer cancel()
	if c.Tool == "" {
		id := fmt.Sprintf("bench/%s/%s-%s/%d", b.session, s.spec.Name, run, i)
		start := time.Now()
		opts := tclient.StartWorkflowOptions{ID: id, TaskQueue: s.taskQueue, EnableEagerStart: s.eager}
		var (
			wr  tclient.WorkflowRun
			err error
		)
		switch {
		case c.Peer != "":
			wr, err = s.tc.ExecuteWorkflow(ctx, opts, PeerWorkflowName, peerInput(c, s.bound))
		case c.Payload > 0:
			wr, err = s.tc.ExecuteWorkflow(ctx, opts, PayloadWorkflowName, c.Payload)
		default:
			wr, err = s.tc.ExecuteWorkflow(ctx, opts, EmptyWorkflowName)
		}
		if err == nil && c.Peer != "" {
			var out []string
			if err = wr.Get(ctx, &out); err == nil && len(out) != c.Calls {
				err = fmt.Errorf("%d outputs for %d calls", len(out), c.Calls)
			}
		} else if err == nil {
			var out string
			err = wr.Get(ctx, &out)
		}
		if err != nil {
			return sample{}, fmt.Errorf("%s workflow %s: %w", c.Name, id, err)
		}
		return sample{WorkflowID: id, Start: start, End: time.Now()}, nil
	}
	in := b.input(c, s.spec.Name+"-"+run, i)
	start := time.Now()
	res, err := s.cl.Run(ctx, in)
	end := time.Now()
	if err != nil {
		return sample{}, fmt.Errorf("%s round %s: %w", c.Name, in.WorkflowID(), err)
	}
	if err := checkResult(c, res); err != nil {
		return sample{}, fmt.Errorf("%s round %s: %w", c.Name, in.WorkflowID(), err)
	}
	return sample{WorkflowID: in.WorkflowID(), Start: start, End: end}, nil
}

// input is a round of c.Calls calls of c.Tool. The claude-code provider
// loads every registered tool and the run state says the model has the
// tool's schema, so every call runs; distinct arguments keep pass 1 from
// deduplicating them.
func (b *bench) input(c Case, run string, i int) *round.Input {
	calls := make([]round.ToolCall, c.Calls)
	for k := range calls {
		args := fmt.Sprintf(`{"n":%d}`, k)
		if c.Tool == ToolSleep {
			args = fmt.Sprintf(`{"n":%d,"ms":%d}`, k, b.o.Sleep.Milliseconds())
		}
		calls[k] = round.ToolCall{ID: fmt.Sprintf("call_%d", k), Type: "function", Function: round.FunctionCall{Name: c.Tool, Arguments: round.Arguments(args)}}
	}
	return &round.Input{
		SessionID: b.session, RunID: run, Round: i, Provider: tools.ProviderClaudeCode, AutoApprove: true,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls},
		State:     &round.RunState{Fetched: []string{c.Tool}},
	}
}

func checkResult(c Case, res *round.Result) error {
	if len(res.Results) != c.Calls {
		return fmt.Errorf("%d results for %d calls", len(res.Results), c.Calls)
	}
	for _, r := range res.Results {
		if r.Status != round.StatusOK {
			return fmt.Errorf("call %s ended %s: %s", r.CallID, r.Status, r.Content)
		}
	}
	return nil
}

// histories reads the histories of the last HistorySamples rounds of a case.
func (b *bench) histories(ctx context.Context, s *setup, c Case) (HistoryStats, error) {
	smps := s.samples[c.Name]
	smps = smps[max(0, len(smps)-b.o.HistorySamples):]
	ts := make([]*trace, 0, len(smps))
	for _, smp := range smps {
		t, err := fetchTrace(ctx, s.tc, smp.WorkflowID)
		if err != nil {
			return HistoryStats{}, err
		}
		ts = append(ts, t)
	}
	hs := summarizeTraces(ts, smps)
	slow := slices.Clone(s.samples[c.Name])
	slices.SortFunc(slow, func(a, b sample) int { return cmp.Compare(b.End.Sub(b.Start), a.End.Sub(a.Start)) })
	for _, smp := range slow[:min(len(slow), slowestKept)] {
		t, err := fetchTrace(ctx, s.tc, smp.WorkflowID)
		if err != nil {
			return HistoryStats{}, err
		}
		hs.Slowest = append(hs.Slowest, slowRound(t, smp))
	}
	return hs, nil
}

const slowestKept = 3

// cleanRedis deletes the bench session's event stream and history; a
// failure only leaves them to their own trimming.
func (b *bench) cleanRedis(ctx context.Context) { cleanSession(ctx, b.o.RedisURL, b.session) }

// cleanSession deletes a session's event stream and history in the Redis
// at url ("none": no Redis).
func cleanSession(ctx context.Context, url, session string) {
	if url == "none" {
		return
	}
	rc, err := cache.Open(ctx, cache.Options{URL: url})
	if rc == nil {
		return
	}
	defer rc.Close()
	if err != nil {
		return
	}
	// One key at a time: in a cluster the two are in one slot, but a DEL
	// of keys of several slots is refused.
	for _, k := range []string{cache.EventsKey(session), tools.HistoryKey(session)} {
		_ = rc.Redis().Del(ctx, k).Err()
	}
}

// serverVersion asks the server for its version; "" when it does not say.
func serverVersion(ctx context.Context, tc tclient.Client) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := tc.WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{})
	if err != nil {
		return ""
	}
	return info.GetServerVersion()
}
