package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/client"
)

// ScalingOptions are the settings of `bench scaling`: the throughput of one
// task queue served by 1, 2, ... worker processes against one Temporal
// server, normally scripts/cluster.sh's (`BENCH_CLUSTER=1 make bench`).
type ScalingOptions struct {
	Address   string        // -address, TEMPORAL_ADDRESS, 127.0.0.1:7233
	Namespace string        // -namespace, TEMPORAL_NAMESPACE, default
	RedisURL  string        // REDIS_URL (only to delete the bench session's keys)
	TaskQueue string        // -task-queue, BENCH_TASK_QUEUE; each level gets <prefix>-w<N>
	Workers   []int         // -workers, BENCH_WORKERS, 1,2,4
	InFlight  int           // -in-flight, BENCH_IN_FLIGHT, 16 rounds kept in flight
	Duration  time.Duration // -duration, BENCH_THROUGHPUT, 20s measured per level
	Warmup    time.Duration // -warmup, BENCH_SCALING_WARMUP, 5s discarded per level
	Case      string        // -case, BENCH_THROUGHPUT_CASE, noop10
	Out       string        // -out, BENCH_OUT, bench/results/cluster-scaling
	// ServerPID, when set (BENCH_SERVER_PID), is the Temporal server's
	// process: its CPU time per level shows where the time goes.
	ServerPID int
}

// ScalingLevel is one worker count's measurement.
type ScalingLevel struct {
	Workers    int        `json:"workers"`
	Throughput Throughput `json:"throughput"`
	// CPU seconds per measured second: the workers together, the server.
	WorkerCPU float64 `json:"worker_cpu"`
	ServerCPU float64 `json:"server_cpu,omitempty"`
	LoadAvg   string  `json:"loadavg_end"`
}

// ScalingReport is what `bench scaling` writes to scaling.json.
type ScalingReport struct {
	Address       string         `json:"address"`
	ServerVersion string         `json:"server_version"`
	Case          string         `json:"case"`
	InFlight      int            `json:"in_flight"`
	CPUs          int            `json:"cpus"`
	LoadAvgStart  string         `json:"loadavg_start"`
	Levels        []ScalingLevel `json:"levels"`
}

func parseScalingOptions(args []string) (ScalingOptions, error) {
	o := ScalingOptions{RedisURL: envStr("REDIS_URL", "redis://127.0.0.1:6379/0"), ServerPID: envInt("BENCH_SERVER_PID", 0)}
	fs := flag.NewFlagSet("bench scaling", flag.ContinueOnError)
	fs.StringVar(&o.Address, "address", envStr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (TEMPORAL_ADDRESS)")
	fs.StringVar(&o.Namespace, "namespace", envStr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (TEMPORAL_NAMESPACE)")
	fs.StringVar(&o.TaskQueue, "task-queue", envStr("BENCH_TASK_QUEUE", fmt.Sprintf("bench-%d", time.Now().UnixNano())), "task queue prefix (BENCH_TASK_QUEUE)")
	workers := fs.String("workers", envStr("BENCH_WORKERS", "1,2,4"), "worker process counts, comma-separated (BENCH_WORKERS)")
	fs.IntVar(&o.InFlight, "in-flight", envInt("BENCH_IN_FLIGHT", 16), "rounds kept in flight (BENCH_IN_FLIGHT)")
	fs.DurationVar(&o.Duration, "duration", envDuration("BENCH_THROUGHPUT", 20*time.Second), "measured time per worker count (BENCH_THROUGHPUT)")
	fs.DurationVar(&o.Warmup, "warmup", envDuration("BENCH_SCALING_WARMUP", 5*time.Second), "discarded time per worker count (BENCH_SCALING_WARMUP)")
	fs.StringVar(&o.Case, "case", envStr("BENCH_THROUGHPUT_CASE", "noop10"), "the round repeated (BENCH_THROUGHPUT_CASE)")
	fs.StringVar(&o.Out, "out", envStr("BENCH_OUT", filepath.Join("bench", "results", "cluster-scaling")), "directory for scaling.json (BENCH_OUT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for f := range strings.SplitSeq(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-workers %q: want positive counts, comma-separated", *workers)
		}
		o.Workers = append(o.Workers, n)
	}
	if o.InFlight < 1 || o.Duration <= 0 || o.Warmup < 0 {
		return o, errors.New("in-flight must be at least 1, duration positive, warmup not negative")
	}
	if caseNamed(o.Case) == nil {
		return o, fmt.Errorf("no case %q; the cases are %s", o.Case, strings.Join(caseNames(), ", "))
	}
	return o, nil
}

func runScaling(args []string) error {
	o, err := parseScalingOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	rep, err := Scaling(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	if err := writeJSON(o.Out, "scaling.json", rep); err != nil {
		return fmt.Errorf("bench scaling: %w", err)
	}
	rep.Print(os.Stdout)
	return nil
}

// Scaling measures each worker count in turn: it starts that many bench
// workers on a task queue of the level's own, keeps InFlight rounds in
// flight for Warmup (discarded) and Duration, and stops the workers.
func Scaling(ctx context.Context, o ScalingOptions, progress io.Writer) (*ScalingReport, error) {
	tc, err := dialTemporal(o.Address, o.Namespace, progress)
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	b := &bench{
		o:       Options{Address: o.Address, Namespace: o.Namespace, RedisURL: o.RedisURL, TaskQueue: o.TaskQueue, ThroughputCase: o.Case},
		session: "bench-" + strings.TrimPrefix(o.TaskQueue, "bench-"),
		log:     progress,
	}
	defer b.cleanRedis(context.Background())
	rep := &ScalingReport{Address: o.Address, ServerVersion: serverVersion(ctx, tc), Case: o.Case, InFlight: o.InFlight,
		CPUs: runtime.NumCPU(), LoadAvgStart: loadAvg()}
	for i, n := range o.Workers {
		level, err := b.scalingLevel(ctx, o, tc, i, n)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, level)
	}
	return rep, nil
}

// scalingLevel measures the i-th entry of o.Workers, n workers. The setup's
// name is part of every round's run id: each level and its warm-up get
// names of their own, because a round whose workflow id exists already is
// not run again (the client attaches to it and returns its old result).
func (b *bench) scalingLevel(ctx context.Context, o ScalingOptions, tc tclient.Client, i, n int) (ScalingLevel, error) {
	name := fmt.Sprintf("l%d-w%d", i+1, n)
	s := &setup{spec: SetupSpec{Name: name + "-warmup"}, address: o.Address, taskQueue: fmt.Sprintf("%s-%s", o.TaskQueue, name), tc: tc}
	s.cl = client.New(tc, client.Options{TaskQueue: s.taskQueue})
	b.logf("scaling: starting %d workers on task queue %s (%s)", n, s.taskQueue, o.Address)
	env := []string{"TEMPORAL_ADDRESS=" + o.Address, "TEMPORAL_NAMESPACE=" + o.Namespace}
	var workers []*workerProc
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	for range n {
		w, _, err := startWorker(ctx, s.taskQueue, env)
		if err != nil {
			return ScalingLevel{}, err
		}
		workers = append(workers, w)
	}
	if o.Warmup > 0 {
		b.o.ThroughputDuration = o.Warmup
		if _, err := b.roundThroughput(ctx, s, o.InFlight); err != nil {
			return ScalingLevel{}, err
		}
	}
	cpu := func() (w, srv float64) {
		for _, p := range workers {
			w += cpuSeconds(p.cmd.Process.Pid)
		}
		if o.ServerPID > 0 {
			srv = cpuSeconds(o.ServerPID)
		}
		return w, srv
	}
	w0, srv0 := cpu()
	s.spec.Name = name
	b.o.ThroughputDuration = o.Duration
	tp, err := b.roundThroughput(ctx, s, o.InFlight)
	if err != nil {
		return ScalingLevel{}, err
	}
	w1, srv1 := cpu()
	level := ScalingLevel{Workers: n, Throughput: tp, WorkerCPU: round2((w1 - w0) / tp.Seconds), LoadAvg: loadAvg()}
	if o.ServerPID > 0 {
		level.ServerCPU = round2((srv1 - srv0) / tp.Seconds)
	}
	b.logf("scaling: %d workers: %.2f rounds/s, p50 %.0f ms", n, tp.RoundsPerSecond, tp.Latency.P50)
	return level, nil
}

// cpuSeconds is the user and system CPU time of a process so far, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func cpuSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it
	// start behind its closing parenthesis.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (user + sys) / 100
}

// Print writes the levels as a Markdown table, as BENCHMARKS.md shows it.
func (r *ScalingReport) Print(w io.Writer) {
	fmt.Fprintf(w, "Temporal %s at %s, case %s, %d rounds in flight, %d CPUs, load at start %s\n\n",
		r.ServerVersion, r.Address, r.Case, r.InFlight, r.CPUs, r.LoadAvgStart)
	fmt.Fprintln(w, "| workers | rounds | rounds/s | vs first | p50 ms | p90 ms | p99 ms | worker CPU | server CPU | load at end |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, l := range r.Levels {
		t := l.Throughput
		fmt.Fprintf(w, "| %d | %d | %.2f | %.2fx | %.0f | %.0f | %.0f | %.2f | %.2f | %s |\n", l.Workers, t.Rounds, t.RoundsPerSecond,
			Ratio(t.RoundsPerSecond, r.Levels[0].Throughput.RoundsPerSecond), t.Latency.P50, t.Latency.P90, t.Latency.P99, l.WorkerCPU, l.ServerCPU, l.LoadAvg)
	}
}
