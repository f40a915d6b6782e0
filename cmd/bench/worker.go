package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/tools"
)

// Names the benchmark registers next to the engine's own.
const (
	ToolNoop          = "bench_noop"
	ToolSleep         = "bench_sleep"
	ToolWrite         = "bench_write"
	EmptyWorkflowName = "BenchEmpty"
	// PayloadWorkflowName returns a result of the size it is given at once:
	// the floor plus the cost of a large result alone.
	PayloadWorkflowName = "BenchPayload"

	readyPrefix = "bench worker ready"
)

var (
	noopSchema = tools.Schema(`{"type":"object","properties":{
		"n":{"type":"integer","description":"the call's number in its round; it keeps calls distinct so that none is deduplicated"}},
		"additionalProperties":false}`)
	sleepSchema = tools.Schema(`{"type":"object","properties":{
		"n":{"type":"integer","description":"the call's number in its round"},
		"ms":{"type":"integer","minimum":0,"maximum":60000,"description":"how long the call takes, in milliseconds"}},
		"required":["ms"],"additionalProperties":false}`)
)

// benchTools are the tools the rounds call: a read-only no-op (a local
// activity unless LOCAL_ACTIVITY_MAX=0), a read-only sleep, and an
// at-most-once no-op, which always stays a regular activity.
func benchTools() []tools.Definition {
	noop := func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("ok"), nil }
	return []tools.Definition{
		{
			Name: ToolNoop, Description: "Does nothing and answers ok; measures the engine's own cost per call.",
			Parameters: noopSchema, Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 10 * time.Second,
			Source: tools.SourceApp, Handler: noop,
		},
		{
			Name: ToolSleep, Description: "Waits for ms milliseconds and answers ok; measures how well pass 2 packs work under its bound.",
			Parameters: sleepSchema, Concurrent: true, SideEffect: tools.ReadOnly, Timeout: 10 * time.Second,
			Source: tools.SourceApp, Handler: sleepHandler,
		},
		{
			Name: ToolWrite, Description: "Pretends to change something and answers ok; measures calls that must run at most once.",
			Parameters: noopSchema, Concurrent: true, SideEffect: tools.AtMostOnce, Timeout: 10 * time.Second,
			Source: tools.SourceApp, Handler: noop,
		},
	}
}

func sleepHandler(ctx context.Context, req tools.Request) (tools.Result, error) {
	var a struct {
		MS int `json:"ms"`
	}
	if err := req.Decode(&a); err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", ToolSleep, err)
	}
	t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return tools.Text("ok"), nil
	case <-ctx.Done():
		return tools.Result{}, fmt.Errorf("%s: stopped after less than %d ms: %w", ToolSleep, a.MS, ctx.Err())
	}
}

func emptyWorkflow(workflow.Context) error { return nil }

func payloadWorkflow(_ workflow.Context, size int) (string, error) {
	return strings.Repeat("x", max(size, 0)), nil
}

// runWorker is the worker process of the benchmark: the engine with its
// configuration from the environment (engine.ConfigFromEnv), the bench tools
// and the empty workflow. It stops on SIGTERM or when its standard input
// closes, so it never outlives the benchmark that started it.
func runWorker() error {
	cfg, logger, err := engine.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()

	ew, err := startEngineWorker(ctx, cfg, nil, logger)
	if err != nil {
		return err
	}
	fmt.Printf("%s pid=%d bound=%d local_max=%s task_queue=%s\n", readyPrefix, os.Getpid(), ew.bound, cfg.LocalActivityMax, cfg.TaskQueue)
	<-ctx.Done()
	ew.stop()
	return nil
}

// engineWorker is a started worker with the engine, the bench tools and the
// empty workflow.
type engineWorker struct {
	w     *engine.Worker
	bound int
}

func (ew *engineWorker) stop() { ew.w.Stop() }

// startEngineWorker starts the engine's worker with the bench tools and
// workflows, on c or, when c is nil, on a client of its own. The worker
// options are the engine's own unless a BENCH_* worker option is set, so
// that `make bench` measures what a deployment runs and variants measure one
// option at a time.
func startEngineWorker(ctx context.Context, cfg engine.Config, c client.Client, logger *slog.Logger) (*engineWorker, error) {
	wopts, changed, err := workerOptionsFromEnv()
	if err != nil {
		return nil, err
	}
	if v := strings.TrimSpace(os.Getenv("BENCH_STICKY_CACHE")); v != "" {
		size, err := strconv.Atoi(v)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("BENCH_STICKY_CACHE=%q: want a whole number, 0 (no sticky execution) or more", v)
		}
		worker.SetStickyWorkflowCacheSize(size)
	}
	defs := benchTools()
	if url := os.Getenv("BENCH_RECORDER_URL"); url != "" {
		defs = append(defs, soakTools(url)...) // the soak's (soak.go)
	}
	opts := []engine.Option{
		engine.WithTools(defs...),
		engine.WithWorkflow(EmptyWorkflowName, emptyWorkflow),
		engine.WithWorkflow(PayloadWorkflowName, payloadWorkflow),
		engine.WithWorkflow(PeerWorkflowName, peerWorkflow),
		engine.WithActivity(PeerActivityName, peerTool),
	}
	if c != nil {
		opts = append(opts, engine.WithClient(c))
	}
	if changed {
		opts = append(opts, engine.WithWorkerOptions(wopts))
	}
	w, err := engine.StartWorker(ctx, cfg, logger, opts...)
	if err != nil {
		return nil, fmt.Errorf("bench worker: %w", err)
	}
	return &engineWorker{w: w, bound: w.Bound}, nil
}

// workerOptionsFromEnv reads the worker options a variant may change.
func workerOptionsFromEnv() (worker.Options, bool, error) {
	var opts worker.Options
	changed := false
	ints := []struct {
		name string
		set  func(int)
	}{
		{"BENCH_WFT_POLLERS", func(n int) { opts.MaxConcurrentWorkflowTaskPollers = n }},
		{"BENCH_ACTIVITY_POLLERS", func(n int) { opts.MaxConcurrentActivityTaskPollers = n }},
		{"BENCH_EAGER_RESERVATIONS", func(n int) { opts.MaxEagerActivityReservationsPerWorkflowTask = &n }},
	}
	for _, o := range ints {
		n, ok, err := envIntOK(o.name)
		if err != nil {
			return opts, false, err
		}
		if ok {
			o.set(n)
			changed = true
		}
	}
	if v := os.Getenv("BENCH_DISABLE_EAGER"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return opts, false, fmt.Errorf("BENCH_DISABLE_EAGER=%q: want true or false", v)
		}
		opts.DisableEagerActivities, changed = b, true
	}
	return opts, changed, nil
}

func envIntOK(name string) (int, bool, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, false, fmt.Errorf("%s=%q: want a whole number above 0", name, v)
	}
	return n, true, nil
}
