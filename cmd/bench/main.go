// Command bench measures a toolround round against a real Temporal server
// and Redis: latency by round size against an empty workflow, throughput,
// history size and the worker's memory. `make bench` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "worker":
		err = runWorker()
	case len(os.Args) > 1 && os.Args[1] == "toolworker":
		// The Go tool worker of the user-tool case (usertools.go).
		err = runToolWorker()
	case len(os.Args) > 1 && os.Args[1] == "sandbox":
		err = runSandboxBench(os.Stdout)
	case len(os.Args) > 1 && os.Args[1] == "long":
		// One round of many calls, one round with a long approval wait (long.go).
		err = runLong(os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "soak":
		// One agent run of many calls with the worker killed (soak.go).
		err = runSoak(os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "scaling":
		// Throughput by worker count (scaling.go).
		err = runScaling(os.Args[2:])
	default:
		err = runBench(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Options are the benchmark's settings; each flag defaults to its
// environment variable, then to the value shown.
type Options struct {
	Address   string // -address, TEMPORAL_ADDRESS, 127.0.0.1:7233
	Namespace string // -namespace, TEMPORAL_NAMESPACE, default
	RedisURL  string // REDIS_URL, redis://127.0.0.1:6379/0 (only to delete the bench session's keys)
	// TaskQueue prefixes the task queues of the bench workers (-task-queue,
	// BENCH_TASK_QUEUE); default bench-<time>, unique per run.
	TaskQueue          string
	Iterations         int           // -iterations, BENCH_ITERATIONS, 200
	Warmup             int           // -warmup, BENCH_WARMUP, 10
	SleepIterations    int           // -sleep-iterations, BENCH_SLEEP_ITERATIONS, 30
	Sleep              time.Duration // -sleep, BENCH_SLEEP, 200ms
	ThroughputDuration time.Duration // -throughput, BENCH_THROUGHPUT, 8s per in-flight level
	ThroughputCase     string        // -throughput-case, BENCH_THROUGHPUT_CASE, noop10
	HistorySamples     int           // -history-samples, BENCH_HISTORY_SAMPLES, 30
	Out                string        // -out, BENCH_OUT, bench
	Label              string        // -label, BENCH_LABEL, default
	Compare            []SetupSpec   // -compare (repeatable), BENCH_COMPARE (';' between setups)
	// Cases limits the latency cases (-cases, BENCH_CASES, comma-separated);
	// default all. The empty workflow always runs: it is the floor.
	Cases []string
}

// SetupSpec is one worker configuration: its name and the environment its
// worker process gets on top of the benchmark's (KEY=VALUE). A setup's
// TEMPORAL_ADDRESS also points the benchmark's client for it elsewhere.
type SetupSpec struct {
	Name string   `json:"name"`
	Env  []string `json:"env,omitempty"`
}

// ParseSetup reads "name:KEY=VALUE,KEY=VALUE".
func ParseSetup(s string) (SetupSpec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	if !validSetupName(name) {
		return SetupSpec{}, fmt.Errorf("setup %q: want name:KEY=VALUE,... with a name of letters, digits, '-' or '_'", s)
	}
	spec := SetupSpec{Name: name}
	for kv := range strings.SplitSeq(rest, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return SetupSpec{}, fmt.Errorf("setup %q: %q is not KEY=VALUE", s, kv)
		}
		spec.Env = append(spec.Env, kv)
	}
	return spec, nil
}

func validSetupName(n string) bool {
	if n == "" || len(n) > 40 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

type setupList struct{ specs *[]SetupSpec }

func (l setupList) String() string { return "" }
func (l setupList) Set(s string) error {
	spec, err := ParseSetup(s)
	if err != nil {
		return err
	}
	*l.specs = append(*l.specs, spec)
	return nil
}

func parseOptions(args []string) (Options, error) {
	o := Options{RedisURL: envStr("REDIS_URL", "redis://127.0.0.1:6379/0")}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.Address, "address", envStr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (TEMPORAL_ADDRESS)")
	fs.StringVar(&o.Namespace, "namespace", envStr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (TEMPORAL_NAMESPACE)")
	fs.StringVar(&o.TaskQueue, "task-queue", envStr("BENCH_TASK_QUEUE", fmt.Sprintf("bench-%d", time.Now().UnixNano())), "task queue prefix, unique per run (BENCH_TASK_QUEUE)")
	fs.IntVar(&o.Iterations, "iterations", envInt("BENCH_ITERATIONS", 200), "measured rounds per case (BENCH_ITERATIONS)")
	fs.IntVar(&o.Warmup, "warmup", envInt("BENCH_WARMUP", 10), "discarded rounds per case before measuring (BENCH_WARMUP)")
	fs.IntVar(&o.SleepIterations, "sleep-iterations", envInt("BENCH_SLEEP_ITERATIONS", 30), "measured rounds of the sleeping-tools case (BENCH_SLEEP_ITERATIONS)")
	fs.DurationVar(&o.Sleep, "sleep", envDuration("BENCH_SLEEP", 200*time.Millisecond), "how long each sleeping tool takes (BENCH_SLEEP)")
	fs.DurationVar(&o.ThroughputDuration, "throughput", envDuration("BENCH_THROUGHPUT", 8*time.Second), "how long each throughput level runs (BENCH_THROUGHPUT)")
	fs.StringVar(&o.ThroughputCase, "throughput-case", envStr("BENCH_THROUGHPUT_CASE", "noop10"), "the round the throughput levels repeat (BENCH_THROUGHPUT_CASE)")
	fs.IntVar(&o.HistorySamples, "history-samples", envInt("BENCH_HISTORY_SAMPLES", 30), "rounds per case whose history is read (BENCH_HISTORY_SAMPLES)")
	fs.StringVar(&o.Out, "out", envStr("BENCH_OUT", "bench"), "directory for latency.png and results.json (BENCH_OUT)")
	fs.StringVar(&o.Label, "label", envStr("BENCH_LABEL", "default"), "name of the main setup (BENCH_LABEL)")
	fs.Var(setupList{&o.Compare}, "compare", "another worker setup measured in the same run, name:KEY=VALUE,... (repeatable; BENCH_COMPARE, ';' between setups)")
	cases := fs.String("cases", envStr("BENCH_CASES", ""), "latency cases to run, comma-separated (BENCH_CASES; default all)")
	if v := os.Getenv("BENCH_COMPARE"); v != "" {
		for s := range strings.SplitSeq(v, ";") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			if err := (setupList{&o.Compare}).Set(s); err != nil {
				return o, fmt.Errorf("BENCH_COMPARE: %w", err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Iterations < 1 || o.Warmup < 0 || o.SleepIterations < 1 || o.HistorySamples < 0 || o.ThroughputDuration <= 0 {
		return o, errors.New("iterations and sleep-iterations must be at least 1, warmup and history-samples not negative, throughput positive")
	}
	if caseNamed(o.ThroughputCase) == nil {
		return o, fmt.Errorf("no case %q for throughput; the cases are %s", o.ThroughputCase, strings.Join(caseNames(), ", "))
	}
	for c := range strings.SplitSeq(*cases, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if caseNamed(c) == nil {
			return o, fmt.Errorf("no latency case %q; the cases are %s", c, strings.Join(caseNames(), ", "))
		}
		o.Cases = append(o.Cases, c)
	}
	if !validSetupName(o.Label) {
		return o, fmt.Errorf("label %q: use letters, digits, '-' or '_'", o.Label)
	}
	seen := map[string]bool{o.Label: true}
	for _, s := range o.Compare {
		if seen[s.Name] {
			return o, fmt.Errorf("two setups are named %q", s.Name)
		}
		seen[s.Name] = true
	}
	return o, nil
}

func envStr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(name))); err == nil {
		return n
	}
	return def
}

// interruptible is the context of a mode's run, cancelled by an interrupt
// or SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// dialTemporal connects to the Temporal server, its client logging
// warnings and worse to progress.
func dialTemporal(address, namespace string, progress io.Writer) (tclient.Client, error) {
	logger := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tc, err := tclient.Dial(tclient.Options{HostPort: address, Namespace: namespace, Logger: tlog.NewStructuredLogger(logger)})
	if err != nil {
		return nil, fmt.Errorf("temporal: dial %s (namespace %s): %w", address, namespace, err)
	}
	return tc, nil
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(strings.TrimSpace(os.Getenv(name))); err == nil {
		return d
	}
	return def
}

func runBench(args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	rep, err := Run(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	if err := rep.Write(o.Out); err != nil {
		return err
	}
	rep.Print(os.Stdout)
	return nil
}
