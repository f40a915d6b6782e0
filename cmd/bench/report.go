package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run measured; results.json holds it.
type Report struct {
	Time    time.Time     `json:"time"`
	Seconds float64       `json:"seconds"`
	Machine Machine       `json:"machine"`
	Options ReportOptions `json:"options"`
	Setups  []SetupReport `json:"setups"`
}

// ReportOptions are the settings of the run.
type ReportOptions struct {
	Address            string  `json:"address"`
	Namespace          string  `json:"namespace"`
	Iterations         int     `json:"iterations"`
	Warmup             int     `json:"warmup"`
	SleepIterations    int     `json:"sleep_iterations"`
	SleepMS            int64   `json:"sleep_ms"`
	ThroughputSeconds  float64 `json:"throughput_seconds"`
	ThroughputCase     string  `json:"throughput_case"`
	HistorySamples     int     `json:"history_samples"`
	PercentileMethod   string  `json:"percentile_method"`
	LatencyMeasurement string  `json:"latency_measurement"`
}

// Machine is where the run happened.
type Machine struct {
	CPUs          int    `json:"cpus"`
	MemTotalMiB   int    `json:"mem_total_mib"`
	GoVersion     string `json:"go_version"`
	OS            string `json:"os"`
	ServerVersion string `json:"server_version"`
	CLIVersion    string `json:"cli_version,omitempty"`
	LoadAvgStart  string `json:"loadavg_start,omitempty"`
	LoadAvgEnd    string `json:"loadavg_end,omitempty"`
}

// SetupReport is one worker configuration's results.
type SetupReport struct {
	Name             string       `json:"name"`
	Env              []string     `json:"env,omitempty"`
	Address          string       `json:"address"`
	TaskQueue        string       `json:"task_queue"`
	Bound            int          `json:"bound"`
	LocalActivityMax string       `json:"local_activity_max"`
	Cases            []CaseReport `json:"cases"`
	Makespan         Makespan     `json:"makespan"`
	Throughput       []Throughput `json:"throughput"`
	Worker           Memory       `json:"worker_memory"`
	// ToolWorkers are the user tools' worker processes' memory, by kind
	// (python, go), when the run had them.
	ToolWorkers map[string]Memory `json:"tool_worker_memory,omitempty"`
	Ratios      Ratios            `json:"ratios"`
}

// CaseReport is one case's latency and history.
type CaseReport struct {
	Case
	Latency Summary      `json:"latency"`
	History HistoryStats `json:"history"`
	// VsFloorP50 is this case's p50 over the empty workflow's p50.
	VsFloorP50 float64 `json:"vs_floor_p50"`
}

// Makespan compares the sleeping-tools round with the ideal packing of its
// calls under the bound, ceil(calls/bound) * sleep.
type Makespan struct {
	Calls   int     `json:"calls"`
	Bound   int     `json:"bound"`
	SleepMS int64   `json:"sleep_ms"`
	IdealMS float64 `json:"ideal_ms"`
	// Pass2MS is the median span of the calls in the sampled histories, from
	// the start of pass 2 to the last call's completion; Ratio is it over
	// the ideal.
	Pass2MS float64 `json:"pass2_p50_ms"`
	Ratio   float64 `json:"ratio"`
	// The round's latency from the start call to the result, and over the
	// ideal: the makespan plus everything else a round costs.
	P50MS    float64 `json:"round_p50_ms"`
	P99MS    float64 `json:"round_p99_ms"`
	RatioE2E float64 `json:"ratio_round"`
}

// Throughput is rounds per second with n rounds in flight.
type Throughput struct {
	InFlight        int     `json:"in_flight"`
	Case            string  `json:"case"`
	Rounds          int     `json:"rounds"`
	Seconds         float64 `json:"seconds"`
	RoundsPerSecond float64 `json:"rounds_per_second"`
	Latency         Summary `json:"latency"`
	// WorkerCPUMS and ServerCPUMS are CPU milliseconds (utime+stime) per
	// round of the worker process and of the Temporal server, when known:
	// what a round costs, whatever the load.
	WorkerCPUMS float64 `json:"worker_cpu_ms_per_round,omitempty"`
	ServerCPUMS float64 `json:"server_cpu_ms_per_round,omitempty"`
}

// Memory is the worker process's resident memory at the end of the run.
type Memory struct {
	PID       int     `json:"pid"`
	PeakMiB   float64 `json:"vmhwm_mib"`
	ResidMiB  float64 `json:"vmrss_mib"`
	Available bool    `json:"available"`
	// InProcess memory is the benchmark's own process, worker included.
	InProcess bool `json:"in_process,omitempty"`
}

// Ratios are the numbers the targets are about.
type Ratios struct {
	P50Noop10     float64 `json:"ratio_p50_10tools"`
	P99Noop10     float64 `json:"ratio_p99_10tools"`
	P50AtMostOnce float64 `json:"ratio_p50_10atmostonce"`
	P99AtMostOnce float64 `json:"ratio_p99_10atmostonce"`
	// Throughput4 is rounds per second of the throughput case over empty
	// workflows per second, both with 4 in flight, measured alternately.
	Throughput4    float64 `json:"ratio_throughput_4"`
	Makespan       float64 `json:"ratio_makespan"`
	MakespanRound  float64 `json:"ratio_makespan_round"`
	MaxP99MS       float64 `json:"max_p99_ms"`
	MaxLatencyCase string  `json:"max_p99_case"`
	// Against the peer pattern (peer.go), in the same run: the 10-no-op
	// round's p50 over the peer's 10 activities at once and over its 10
	// local activities; the 10-at-most-once round's over the peer's 10
	// activities bounded like the round; the throughput case's rounds per
	// second over the peer's, both with 4 in flight.
	P50Noop10VsPeer            float64 `json:"ratio_p50_10tools_vs_peer"`
	P50Noop10VsPeerLocal       float64 `json:"ratio_p50_10tools_vs_peer_local"`
	P50AtMostOnceVsPeerBounded float64 `json:"ratio_p50_10atmostonce_vs_peer_bounded"`
	Throughput4VsPeer          float64 `json:"ratio_throughput_4_vs_peer"`
	// History bytes per call of a 10-call round, and of each peer round.
	HistoryPerCall10           float64 `json:"history_bytes_per_call_10tools"`
	HistoryPerCallPeer         float64 `json:"history_bytes_per_call_peer"`
	HistoryPerCallPeerBounded  float64 `json:"history_bytes_per_call_peer_bounded"`
	HistoryPerCallPeerLocal    float64 `json:"history_bytes_per_call_peer_local"`
	HistoryPerCallAtMostOnce10 float64 `json:"history_bytes_per_call_10atmostonce"`
	// Users' own tools (usertools.go): the p50 and p99 of 10 calls of a
	// Python and of a Go tool worker's read-only tool in a round over
	// noop10's (10 calls of a tool of the worker itself), and the p50 over
	// the peer's 10 activities at once, which also go through a task
	// queue; their history bytes per call.
	P50PyTool10VsBuiltin   float64 `json:"ratio_p50_10pytool_vs_10tools"`
	P99PyTool10VsBuiltin   float64 `json:"ratio_p99_10pytool_vs_10tools"`
	P50GoTool10VsBuiltin   float64 `json:"ratio_p50_10gotool_vs_10tools"`
	P99GoTool10VsBuiltin   float64 `json:"ratio_p99_10gotool_vs_10tools"`
	P50PyTool10VsPeer      float64 `json:"ratio_p50_10pytool_vs_peer"`
	P50GoTool10VsPeer      float64 `json:"ratio_p50_10gotool_vs_peer"`
	HistoryPerCallPyTool10 float64 `json:"history_bytes_per_call_10pytool"`
	HistoryPerCallGoTool10 float64 `json:"history_bytes_per_call_10gotool"`
}

// ratioLine is one name=value line of the printed ratios.
type ratioLine struct{ name, value string }

// lines are the ratios as Print writes them, in order: the names are the
// JSON names.
func (r Ratios) lines() []ratioLine {
	f3 := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	bytes := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	return []ratioLine{
		{"ratio_p50_10tools", f3(r.P50Noop10)},
		{"ratio_p99_10tools", f3(r.P99Noop10)},
		{"ratio_p50_10atmostonce", f3(r.P50AtMostOnce)},
		{"ratio_p99_10atmostonce", f3(r.P99AtMostOnce)},
		{"ratio_throughput_4", f3(r.Throughput4)},
		{"ratio_makespan", f3(r.Makespan)},
		{"ratio_makespan_round", f3(r.MakespanRound)},
		{"max_p99_ms", fmt.Sprintf("%.1f (%s)", r.MaxP99MS, r.MaxLatencyCase)},
		{"ratio_p50_10tools_vs_peer", f3(r.P50Noop10VsPeer)},
		{"ratio_p50_10tools_vs_peer_local", f3(r.P50Noop10VsPeerLocal)},
		{"ratio_p50_10atmostonce_vs_peer_bounded", f3(r.P50AtMostOnceVsPeerBounded)},
		{"ratio_throughput_4_vs_peer", f3(r.Throughput4VsPeer)},
		{"history_bytes_per_call_10tools", bytes(r.HistoryPerCall10)},
		{"history_bytes_per_call_10atmostonce", bytes(r.HistoryPerCallAtMostOnce10)},
		{"history_bytes_per_call_peer", bytes(r.HistoryPerCallPeer)},
		{"history_bytes_per_call_peer_bounded", bytes(r.HistoryPerCallPeerBounded)},
		{"history_bytes_per_call_peer_local", bytes(r.HistoryPerCallPeerLocal)},
		{"ratio_p50_10pytool_vs_10tools", f3(r.P50PyTool10VsBuiltin)},
		{"ratio_p99_10pytool_vs_10tools", f3(r.P99PyTool10VsBuiltin)},
		{"ratio_p50_10gotool_vs_10tools", f3(r.P50GoTool10VsBuiltin)},
		{"ratio_p99_10gotool_vs_10tools", f3(r.P99GoTool10VsBuiltin)},
		{"ratio_p50_10pytool_vs_peer", f3(r.P50PyTool10VsPeer)},
		{"ratio_p50_10gotool_vs_peer", f3(r.P50GoTool10VsPeer)},
		{"history_bytes_per_call_10pytool", bytes(r.HistoryPerCallPyTool10)},
		{"history_bytes_per_call_10gotool", bytes(r.HistoryPerCallGoTool10)},
	}
}

func newReport(ctx context.Context, o Options, s *setup) *Report {
	return &Report{
		Time: time.Now().UTC(),
		Machine: Machine{
			CPUs: runtime.NumCPU(), MemTotalMiB: memTotalMiB(), GoVersion: runtime.Version(),
			OS: runtime.GOOS + "/" + runtime.GOARCH, ServerVersion: serverVersion(ctx, s.tc),
			CLIVersion: cliVersion(), LoadAvgStart: loadAvg(),
		},
		Options: ReportOptions{
			Address: o.Address, Namespace: o.Namespace, Iterations: o.Iterations, Warmup: o.Warmup,
			SleepIterations: o.SleepIterations, SleepMS: o.Sleep.Milliseconds(),
			ThroughputSeconds: o.ThroughputDuration.Seconds(), ThroughputCase: o.ThroughputCase, HistorySamples: o.HistorySamples,
			PercentileMethod:   "linear interpolation between closest ranks",
			LatencyMeasurement: "from the client's start call to the decoded result, one round in flight, cases interleaved",
		},
	}
}

func (sr *SetupReport) caseByName(name string) *CaseReport {
	for i := range sr.Cases {
		if sr.Cases[i].Name == name {
			return &sr.Cases[i]
		}
	}
	return nil
}

// latency of a case; the zero Summary when the run left the case out.
func (sr *SetupReport) latency(name string) Summary {
	if c := sr.caseByName(name); c != nil {
		return c.Latency
	}
	return Summary{}
}

// finish derives the ratios once every case is in.
func (sr *SetupReport) finish(bound int, sleep time.Duration) {
	floor := sr.latency("empty")
	for i := range sr.Cases {
		c := &sr.Cases[i]
		c.VsFloorP50 = Ratio(c.Latency.P50, floor.P50)
		if c.Name != sleepCase.Name && c.Latency.P99 > sr.Ratios.MaxP99MS {
			sr.Ratios.MaxP99MS, sr.Ratios.MaxLatencyCase = c.Latency.P99, c.Name
		}
	}
	n10 := sr.latency("noop10")
	amo := sr.latency("atmostonce10")
	sl := sr.latency(sleepCase.Name)
	var pass2 float64
	if c := sr.caseByName(sleepCase.Name); c != nil {
		pass2 = c.History.Phases.Pass2
	}
	ideal := math.Ceil(float64(sleepCase.Calls)/float64(max(bound, 1))) * float64(sleep.Milliseconds())
	sr.Makespan = Makespan{
		Calls: sleepCase.Calls, Bound: bound, SleepMS: sleep.Milliseconds(), IdealMS: ideal,
		Pass2MS: pass2, Ratio: Ratio(pass2, ideal),
		P50MS: sl.P50, P99MS: sl.P99, RatioE2E: Ratio(sl.P50, ideal),
	}
	sr.Ratios.P50Noop10 = Ratio(n10.P50, floor.P50)
	sr.Ratios.P99Noop10 = Ratio(n10.P99, floor.P99)
	sr.Ratios.P50AtMostOnce = Ratio(amo.P50, floor.P50)
	sr.Ratios.P99AtMostOnce = Ratio(amo.P99, floor.P99)
	sr.Ratios.Makespan = sr.Makespan.Ratio
	var rounds, empty, peer float64
	for _, t := range sr.Throughput {
		switch {
		case t.InFlight != floorInFlight:
		case t.Case == latencyCases[0].Name:
			empty = t.RoundsPerSecond
		case t.Case == peerThroughputCase:
			peer = t.RoundsPerSecond
		default:
			rounds = t.RoundsPerSecond
		}
	}
	sr.Ratios.Throughput4 = Ratio(rounds, empty)
	sr.Ratios.Throughput4VsPeer = Ratio(rounds, peer)
	sr.Ratios.P50Noop10VsPeer = Ratio(n10.P50, sr.latency("peer10").P50)
	sr.Ratios.P50Noop10VsPeerLocal = Ratio(n10.P50, sr.latency("peerlocal10").P50)
	sr.Ratios.P50AtMostOnceVsPeerBounded = Ratio(amo.P50, sr.latency("peerbounded10").P50)
	perCall := func(name string) float64 {
		if c := sr.caseByName(name); c != nil && c.Calls > 0 {
			return round2(c.History.Bytes / float64(c.Calls))
		}
		return 0
	}
	sr.Ratios.HistoryPerCall10 = perCall("noop10")
	sr.Ratios.HistoryPerCallAtMostOnce10 = perCall("atmostonce10")
	sr.Ratios.HistoryPerCallPeer = perCall("peer10")
	sr.Ratios.HistoryPerCallPeerBounded = perCall("peerbounded10")
	sr.Ratios.HistoryPerCallPeerLocal = perCall("peerlocal10")
	sr.Ratios.MakespanRound = sr.Makespan.RatioE2E
	py, gt, peer10 := sr.latency("pytool10"), sr.latency("gotool10"), sr.latency("peer10")
	sr.Ratios.P50PyTool10VsBuiltin = Ratio(py.P50, n10.P50)
	sr.Ratios.P99PyTool10VsBuiltin = Ratio(py.P99, n10.P99)
	sr.Ratios.P50GoTool10VsBuiltin = Ratio(gt.P50, n10.P50)
	sr.Ratios.P99GoTool10VsBuiltin = Ratio(gt.P99, n10.P99)
	sr.Ratios.P50PyTool10VsPeer = Ratio(py.P50, peer10.P50)
	sr.Ratios.P50GoTool10VsPeer = Ratio(gt.P50, peer10.P50)
	sr.Ratios.HistoryPerCallPyTool10 = perCall("pytool10")
	sr.Ratios.HistoryPerCallGoTool10 = perCall("gotool10")
}

// writeJSON saves v, indented, as dir/name, making dir first: the
// results of every benchmark mode.
func writeJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// writeReport writes a mode's report to dir as name.json and name.txt,
// and its text to standard output too.
func writeReport(dir, name string, rep interface{ Print(io.Writer) }) error {
	if err := writeJSON(dir, name+".json", rep); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name+".txt"))
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	defer f.Close()
	rep.Print(io.MultiWriter(os.Stdout, f))
	return nil
}

// Write saves results.json and a latency chart per setup (latency.png for
// the main one, latency-<name>.png for the others) in dir.
func (r *Report) Write(dir string) error {
	if err := writeJSON(dir, "results.json", r); err != nil {
		return err
	}
	for i, s := range r.Setups {
		name := "latency.png"
		if i > 0 {
			name = "latency-" + s.Name + ".png"
		}
		var rows []ChartRow
		for _, c := range s.Cases {
			if c.Name == sleepCase.Name {
				continue
			}
			rows = append(rows, ChartRow{Label: c.Label, P50: c.Latency.P50, P90: c.Latency.P90, P99: c.Latency.P99})
		}
		title := fmt.Sprintf("toolround round latency (%s; %d rounds per case, %d CPUs)", s.Name, r.Options.Iterations, r.Machine.CPUs)
		if err := WriteLatencyChart(filepath.Join(dir, name), title, rows); err != nil {
			return err
		}
	}
	return nil
}

// Print writes the human summary and the ratio lines.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\ntoolround bench %s: server %s at %s, %d CPUs, %d MiB, %s, load %s -> %s, %.0f s\n",
		r.Time.Format(time.RFC3339), r.Machine.ServerVersion, r.Options.Address, r.Machine.CPUs, r.Machine.MemTotalMiB,
		r.Machine.GoVersion, r.Machine.LoadAvgStart, r.Machine.LoadAvgEnd, r.Seconds)
	fmt.Fprintf(w, "%d measured rounds per case after %d warm-up; latency from the start call to the result, ms\n",
		r.Options.Iterations, r.Options.Warmup)
	for _, s := range r.Setups {
		fmt.Fprintf(w, "\nsetup %s (bound %d, LOCAL_ACTIVITY_MAX %s%s)\n", s.Name, s.Bound, s.LocalActivityMax, envSuffix(s.Env))
		s.printTables(w)
		m := s.Makespan
		fmt.Fprintf(w, "makespan: %d calls of %d ms at bound %d: ideal %.0f ms; pass 2 took %.1f ms (median); the round p50 %.1f ms, p99 %.1f ms\n",
			m.Calls, m.SleepMS, m.Bound, m.IdealMS, m.Pass2MS, m.P50MS, m.P99MS)
		for _, t := range s.Throughput {
			cpu := ""
			if t.WorkerCPUMS > 0 {
				cpu += fmt.Sprintf("; CPU per round: worker %.2f ms", t.WorkerCPUMS)
				if t.ServerCPUMS > 0 {
					cpu += fmt.Sprintf(", server %.2f ms", t.ServerCPUMS)
				}
			}
			fmt.Fprintf(w, "throughput: %d in flight: %.1f rounds/s (%d %s rounds in %.1f s; p50 %.1f ms, p99 %.1f ms%s)\n",
				t.InFlight, t.RoundsPerSecond, t.Rounds, t.Case, t.Seconds, t.Latency.P50, t.Latency.P99, cpu)
		}
		if s.Worker.Available {
			where := "worker process"
			if s.Worker.InProcess {
				where = "benchmark process with the worker in it"
			}
			fmt.Fprintf(w, "worker memory: VmHWM %.1f MiB, VmRSS %.1f MiB (%s, pid %d)\n", s.Worker.PeakMiB, s.Worker.ResidMiB, where, s.Worker.PID)
		}
		for _, kind := range []string{userPython, userGo} {
			if m, ok := s.ToolWorkers[kind]; ok && m.Available {
				fmt.Fprintf(w, "%s tool worker memory: VmHWM %.1f MiB, VmRSS %.1f MiB (pid %d)\n", kind, m.PeakMiB, m.ResidMiB, m.PID)
			}
		}
		for _, name := range []string{"noop10", "atmostonce10"} {
			c := s.caseByName(name)
			if c == nil || len(c.History.Kinds) == 0 {
				continue
			}
			fmt.Fprintf(w, "history of a %s round by kind (mean count x bytes):", name)
			for _, k := range c.History.Kinds {
				fmt.Fprintf(w, " %s %.1fx %.0fB;", k.Kind, k.Count, k.Bytes)
			}
			fmt.Fprintf(w, "\n  its result by field (bytes):")
			for _, k := range sortedFields(c.History.ResultFields) {
				fmt.Fprintf(w, " %s %.0f;", k, c.History.ResultFields[k])
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	for i, s := range r.Setups {
		suffix := ""
		if i > 0 {
			suffix = "[" + s.Name + "]"
		}
		for _, l := range s.Ratios.lines() {
			fmt.Fprintf(w, "%s%s=%s\n", l.name, suffix, l.value)
		}
	}
	fmt.Fprintln(w)
	for _, t := range r.Setups[0].Targets() {
		fmt.Fprintln(w, t)
	}
}

func (sr *SetupReport) printTables(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tn\tp50\tp90\tp99\tmax\tp50/floor\tevents\tbytes\tinput B\tresult B\twf tasks\tmarkers\tactivities\t")
	for _, c := range sr.Cases {
		h := c.History
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f (max %d)\t%.0f\t%.0f\t\n",
			c.Name, c.Latency.N, c.Latency.P50, c.Latency.P90, c.Latency.P99, c.Latency.Max, c.VsFloorP50,
			h.Events, h.Bytes, h.InputBytes, h.ResultBytes, h.WorkflowTasks, h.WorkflowTasksMax, h.Markers, h.Activities)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "where the time goes (medians of the sampled rounds, ms):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tsubmit\ttask wait\ttask work\tpass 2\tpublish\tfinish\tactivity wait\tother server\tresult\tserver total\t")
	for _, c := range sr.Cases {
		p := c.History.Phases
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			c.Name, p.Submit, p.TaskWait, p.TaskWork, p.Pass2, p.Publish, p.Finish, p.ActivityWait, p.Waiting, p.Result, p.Server)
	}
	_ = tw.Flush()
	for _, c := range sr.Cases {
		if len(c.History.Slowest) == 0 || c.History.Slowest[0].LatencyMS < slowReported {
			continue
		}
		r := c.History.Slowest[0]
		p := r.Phases
		fmt.Fprintf(w, "slowest %s round %s: %.0f ms: submit %.1f, task wait %.1f, task work %.1f, activity wait %.1f, other server %.1f, result %.1f; %d workflow tasks, %d timeouts or failures\n",
			c.Name, r.WorkflowID, r.LatencyMS, p.Submit, p.TaskWait, p.TaskWork, p.ActivityWait, p.Waiting, p.Result, r.WorkflowTasks, r.Timeouts)
	}
}

// slowReported is the latency from which the slowest round of a case is
// printed with its phases.
const slowReported = 1000

func sortedFields(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	return keys
}

// Targets checks the owners' targets for one setup: the read-only and the
// at-most-once round against the peer patterns of the same run (SPEC L and
// docs/benchmarks/peers.md), their history per call, the makespan and the
// tails. The ratios over the empty workflow (ratio_p50_10tools and the
// rest) are printed as figures: their targets of 2026-11-30 are retired.
func (sr *SetupReport) Targets() []string {
	check := func(ok bool, what string) string {
		if ok {
			return "target met:     " + what
		}
		return "target not met: " + what
	}
	r := sr.Ratios
	return []string{
		check(r.P50Noop10VsPeerLocal > 0 && r.P50Noop10VsPeerLocal <= 1.3, fmt.Sprintf("ratio_p50_10tools_vs_peer_local %.3f <= 1.3", r.P50Noop10VsPeerLocal)),
		check(r.P50Noop10VsPeer > 0 && r.P50Noop10VsPeer <= 0.5, fmt.Sprintf("ratio_p50_10tools_vs_peer %.3f <= 0.5", r.P50Noop10VsPeer)),
		check(r.P50AtMostOnceVsPeerBounded > 0 && r.P50AtMostOnceVsPeerBounded <= 1, fmt.Sprintf("ratio_p50_10atmostonce_vs_peer_bounded %.3f <= 1.0", r.P50AtMostOnceVsPeerBounded)),
		check(r.Throughput4VsPeer >= 1, fmt.Sprintf("ratio_throughput_4_vs_peer %.3f >= 1.0", r.Throughput4VsPeer)),
		check(r.HistoryPerCall10 > 0 && r.HistoryPerCall10 <= 1024, fmt.Sprintf("history_bytes_per_call_10tools %.0f <= 1024", r.HistoryPerCall10)),
		check(r.HistoryPerCallAtMostOnce10 > 0 && r.HistoryPerCallAtMostOnce10 <= 1024, fmt.Sprintf("history_bytes_per_call_10atmostonce %.0f <= 1024", r.HistoryPerCallAtMostOnce10)),
		check(r.Makespan > 0 && math.Abs(r.Makespan-1) <= 0.1, fmt.Sprintf("makespan %.3f within 10%% of the ideal (the whole round: %.3f)", r.Makespan, r.MakespanRound)),
		check(r.MaxP99MS < 1000, fmt.Sprintf("no multi-second tails: highest p99 %.1f ms (%s)", r.MaxP99MS, r.MaxLatencyCase)),
	}
}

func envSuffix(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return "; " + strings.Join(env, " ")
}

// readMemory reads VmHWM and VmRSS of a live process from /proc.
func readMemory(pid int) Memory {
	m := Memory{PID: pid}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmHWM":
			m.PeakMiB, m.Available = kibToMiB(v), true
		case "VmRSS":
			m.ResidMiB = kibToMiB(v)
		}
	}
	return m
}

func kibToMiB(v string) float64 {
	kib, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
	if err != nil {
		return 0
	}
	return round2(kib / 1024)
}

func memTotalMiB() int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			return int(kibToMiB(v))
		}
	}
	return 0
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func cliVersion() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "temporal", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
