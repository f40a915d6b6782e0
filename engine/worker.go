package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/health"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/usertools"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows/toolcatalog"
	"github.com/toolround/toolround/internal/workspace"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/toolworker"
)

// Option changes the worker that StartWorker and RunWorker start. With none,
// the worker is bin/worker's.
type Option func(*options)

type options struct {
	tools      []tools.Definition
	workflows  []namedFunc
	activities []namedFunc
	workerOpts *worker.Options
	client     client.Client
	logAttrs   []any
	telemetry  *TelemetryOptions
}

type namedFunc struct {
	name string
	fn   any
}

// WithTools adds tools to the registry next to the built-in ones.
func WithTools(defs ...tools.Definition) Option {
	return func(o *options) { o.tools = append(o.tools, defs...) }
}

// WithWorkflow registers another workflow under name on the same worker.
func WithWorkflow(name string, fn any) Option {
	return func(o *options) { o.workflows = append(o.workflows, namedFunc{name, fn}) }
}

// WithActivity registers another activity under name on the same worker.
func WithActivity(name string, fn any) Option {
	return func(o *options) { o.activities = append(o.activities, namedFunc{name, fn}) }
}

// WithWorkerOptions replaces the engine's worker options (see
// DefaultWorkerOptions) with opts.
func WithWorkerOptions(opts worker.Options) Option {
	return func(o *options) { o.workerOpts = &opts }
}

// WithClient runs the worker on c instead of dialing its own client; Stop
// then leaves c open.
func WithClient(c client.Client) Option {
	return func(o *options) { o.client = c }
}

// WithLogAttrs adds attributes to the "worker started" log line.
func WithLogAttrs(args ...any) Option {
	return func(o *options) { o.logAttrs = append(o.logAttrs, args...) }
}

// WithTelemetry replaces the telemetry the configuration asks for (metrics
// when METRICS_ADDR is set, traces when OTEL_EXPORTER_OTLP_ENDPOINT is):
// tests and the benchmark export spans to memory or turn metrics on.
func WithTelemetry(t TelemetryOptions) Option {
	return func(o *options) { o.telemetry = &t }
}

// Worker is a started worker: the engine, its Temporal client and the
// polling worker.
type Worker struct {
	Engine *Engine
	Client client.Client
	// Bound is how many calls of a round run at once (MAX_CONCURRENT_TOOLS
	// or its default).
	Bound int

	w       worker.Worker
	started bool
	// host is the worker of the host queue (WORKSPACE_PLACEMENT=host);
	// stopPresence ends its presence polls, presenceDone is closed once
	// they have.
	host         worker.Worker
	hostStarted  bool
	stopPresence context.CancelFunc
	presenceDone chan struct{}
	ownClient    bool
	metrics      *http.Server
	// health answers /healthz and /readyz (O2); healthSrv serves it when
	// it has an address of its own.
	health    *health.Handler
	healthSrv *http.Server
	// stopJanitor ends the WORKSPACE_TTL sweeps; janitorDone is closed
	// once they have.
	stopJanitor context.CancelFunc
	janitorDone chan struct{}
	// userTools reads the catalogs of TOOL_QUEUES (Y2); stopUserTools
	// ends it, userToolsDone is closed once it has.
	userTools     *usertools.Sync
	stopUserTools context.CancelFunc
	userToolsDone chan struct{}
}

// DefaultWorkerOptions are the worker options of the engine's workers.
func (e *Engine) DefaultWorkerOptions() worker.Options {
	// A round schedules up to MAX_CONCURRENT_TOOLS activities in one workflow
	// task; reserve that many slots for eager dispatch (the SDK's default is
	// 3), so none of them waits for a poll (BENCHMARKS.md).
	eager := max(3, e.Catalog.Options.MaxConcurrent)
	// Stopping waits for the calls that run (WORKER_STOP_TIMEOUT): a
	// drained worker leaves no attempt to reconcile (V1).
	return worker.Options{MaxEagerActivityReservationsPerWorkflowTask: &eager, WorkerStopTimeout: e.Config.StopTimeout}
}

// StartWorker builds the engine, connects to Temporal (waiting up to a
// minute for a server that is still starting), registers the round and
// starts polling cfg.TaskQueue. With cfg.MetricsAddr set it also serves
// /metrics there. Stop undoes all of it.
func StartWorker(ctx context.Context, cfg Config, logger *slog.Logger, opts ...Option) (*Worker, error) {
	if logger == nil {
		logger = slog.Default()
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e, err := newEngine(ctx, cfg, logger, o.telemetry)
	if err != nil {
		return nil, err
	}
	wk := &Worker{Engine: e, Client: o.client, Bound: e.Catalog.Options.MaxConcurrent}
	if err := wk.start(ctx, &o); err != nil {
		wk.Stop()
		return nil, err
	}
	redis := "none (in-process cache)"
	if e.Redis != nil {
		redis = cfg.RedisURL
	}
	attrs := []any{
		"temporal", cfg.TemporalAddress, "namespace", cfg.Namespace, "task_queue", cfg.TaskQueue,
		"workdir", e.Workdir.Dir(), "workspace", e.Workdir.Mode(), "redis", redis, "tools", len(e.Registry.Names()),
		"max_concurrent_tools", wk.Bound, "build_id", e.Config.BuildID, "pid", os.Getpid(), "health", cfg.HealthAddr,
	}
	if e.Config.Deployment != "" {
		attrs = append(attrs, "deployment", e.Config.Deployment)
	}
	if e.Config.Placement == placement.Host {
		attrs = append(attrs, "placement", placement.Host, "host_id", e.Config.HostID, "host_queue", placement.HostQueue(cfg.TaskQueue, e.Config.HostID))
	}
	if e.Catalog.Options.NoSandbox {
		attrs = append(attrs, "rules", RulesOffNote) // T12
	}
	logger.Info("worker started", append(attrs, o.logAttrs...)...)
	return wk, nil
}

func (wk *Worker) start(ctx context.Context, o *options) error {
	e := wk.Engine
	for _, d := range o.tools {
		if err := e.Registry.Register(d); err != nil {
			return err
		}
	}
	if wk.Client == nil {
		c, err := dialWait(ctx, e.Config, e.Logger, e.Telemetry)
		if err != nil {
			return err
		}
		wk.Client, wk.ownClient = c, true
	}
	if err := e.checkSearchAttributes(ctx, wk.Client); err != nil {
		return err
	}
	wopts := e.DefaultWorkerOptions()
	if o.workerOpts != nil {
		wopts = *o.workerOpts
	}
	if e.Telemetry.WorkerInterceptor != nil {
		wopts.Interceptors = append(wopts.Interceptors, e.Telemetry.WorkerInterceptor)
	}
	if ci := crashpoint.WorkerInterceptor(); ci != nil {
		wopts.Interceptors = append(wopts.Interceptors, ci) // L1: a test build only
	}
	if !wopts.DeploymentOptions.UseVersioning {
		wopts.DeploymentOptions = e.Config.deploymentOptions()
	}
	wk.w = worker.New(wk.Client, e.Config.TaskQueue, wopts)
	swaps, err := seamSwaps(ctx, e.Activities)
	if err != nil {
		return err
	}
	e.Activities.Client = wk.Client // MCP elicitation reaches the round through it (E1)
	registerAll(wk.w, e.Workflow, e.Activities, swaps...)
	registerNotify(wk.w, e.Notifier)
	registerPreview(wk.w, e, true)
	if err := wk.startUserTools(ctx); err != nil {
		return err
	}
	placement.Register(wk.w, &placement.Activities{Client: wk.Client, TaskQueue: e.Config.TaskQueue, Timeout: e.Config.HostTimeout})
	wk.w.RegisterActivityWithOptions((&activities.Subagents{Client: wk.Client}).Status, activity.RegisterOptions{Name: wire.ActivitySubagentStatus})
	wk.w.RegisterActivityWithOptions((&activities.Chatbots{Client: wk.Client, TaskQueue: e.Config.TaskQueue}).Send, activity.RegisterOptions{Name: wire.ActivitySendToChatbot})
	for _, nw := range o.workflows {
		wk.w.RegisterWorkflowWithOptions(nw.fn, workflow.RegisterOptions{Name: nw.name})
	}
	for _, na := range o.activities {
		wk.w.RegisterActivityWithOptions(na.fn, activity.RegisterOptions{Name: na.name})
	}
	if e.Telemetry.Handler != nil {
		q := waitingQuery(e.Config.TaskQueue)
		w := &waitingApprovals{list: listWaiting(wk.Client, q), query: q, every: waitingEvery, timeout: waitingTimeout, now: time.Now, logger: e.Logger}
		if err := observeWaiting(e.Telemetry.Meter, w, e.Config.TaskQueue); err != nil {
			return fmt.Errorf("waiting-approval gauges: %w", err)
		}
		if err := observeBuild(e.Telemetry.Meter, e.Config); err != nil {
			return fmt.Errorf("build gauge: %w", err)
		}
	}
	wk.health = health.New(wk.healthChecks())
	if addr := e.Config.MetricsAddr; addr != "" && e.Telemetry.Handler != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", e.Telemetry.Handler)
		if e.Config.HealthAddr == addr {
			wk.health.Register(mux)
		}
		wk.metrics = &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func(srv *http.Server) {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				e.Logger.Error("metrics server stopped", "addr", addr, "error", err)
			}
		}(wk.metrics)
	}
	if addr := e.Config.HealthAddr; addr != "off" && (wk.metrics == nil || addr != e.Config.MetricsAddr) {
		wk.healthSrv = serveHealth(addr, wk.health, e.Logger)
	}
	if err := wk.w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	wk.started = true
	if err := wk.startHost(swaps); err != nil {
		return err
	}
	if ttl := e.Config.WorkspaceTTL; ttl > 0 {
		removed := e.Workdir.Forget
		if e.Config.Placement == placement.Host {
			removed = func(session string) {
				e.Workdir.Forget(session)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := placement.Release(ctx, wk.Client, session, e.Config.HostID); err != nil {
					e.Logger.Warn("the workspace was removed, but its binding to this host was not released", "session", session, "error", err)
				}
			}
		}
		j := &workspace.Janitor{Workdir: e.Workdir.Dir(), TTL: ttl, Logger: e.Logger, Removed: removed,
			Lister: workspace.TemporalLister(wk.Client, e.Config.Namespace)}
		ctx, cancel := context.WithCancel(context.Background())
		wk.stopJanitor, wk.janitorDone = cancel, make(chan struct{})
		go func() {
			defer close(wk.janitorDone)
			j.Run(ctx)
		}()
	}
	return becomeCurrentIfNone(ctx, wk.Client, e.Config, e.Logger, 30*time.Second)
}

// startHost starts, under WORKSPACE_PLACEMENT=host, the worker of this
// host's queue, <TASK_QUEUE>@<HOST_ID>, which serves the workspace
// activities (W4), and its presence polls. It is unversioned whatever
// WORKER_DEPLOYMENT says: a host queue is one host's, whichever build
// runs there (V1).
func (wk *Worker) startHost(swaps []swap) error {
	e := wk.Engine
	if e.Config.Placement != placement.Host {
		return nil
	}
	opts := worker.Options{WorkerStopTimeout: e.Config.StopTimeout}
	if e.Telemetry.WorkerInterceptor != nil {
		opts.Interceptors = append(opts.Interceptors, e.Telemetry.WorkerInterceptor)
	}
	if ci := crashpoint.WorkerInterceptor(); ci != nil {
		opts.Interceptors = append(opts.Interceptors, ci)
	}
	q := placement.HostQueue(e.Config.TaskQueue, e.Config.HostID)
	wk.host = worker.New(wk.Client, q, opts)
	registerHost(wk.host, e.Activities, swaps...)
	registerPreview(wk.host, e, false)
	if err := wk.host.Start(); err != nil {
		return fmt.Errorf("start the worker of host queue %s: %w", q, err)
	}
	wk.hostStarted = true
	ctx, cancel := context.WithCancel(context.Background())
	wk.stopPresence, wk.presenceDone = cancel, make(chan struct{})
	go func() {
		defer close(wk.presenceDone)
		placement.Presence(ctx, wk.Client, e.Config.Namespace, e.Config.TaskQueue, e.Config.HostID, e.Config.HostTimeout, e.Logger)
	}()
	return nil
}

// Stop stops polling, waits for running activities as the SDK does, and
// releases the metrics server, the client (unless it came from WithClient)
// and the engine.
func (wk *Worker) Stop() {
	if wk.health != nil {
		wk.health.Drain()
	}
	if wk.stopJanitor != nil {
		wk.stopJanitor()
		<-wk.janitorDone
	}
	if wk.stopUserTools != nil {
		wk.stopUserTools()
		<-wk.userToolsDone
	}
	if wk.started {
		wk.w.Stop()
	}
	if wk.stopPresence != nil {
		wk.stopPresence()
		<-wk.presenceDone
	}
	if wk.hostStarted {
		wk.host.Stop()
	}
	if wk.metrics != nil {
		_ = wk.metrics.Close()
	}
	if wk.healthSrv != nil {
		_ = wk.healthSrv.Close()
	}
	if wk.ownClient {
		wk.Client.Close()
	}
	wk.Engine.Close()
}

// RunWorker starts a worker (StartWorker) and runs it until ctx is done.
// worker/, the test worker and the benchmark's worker process run through
// it.
func RunWorker(ctx context.Context, cfg Config, logger *slog.Logger, opts ...Option) error {
	wk, err := StartWorker(ctx, cfg, logger, opts...)
	if err != nil {
		return err
	}
	<-ctx.Done()
	wk.Engine.Logger.Info("stopping worker")
	wk.Stop()
	return nil
}

// dialWait waits for the Temporal server for up to a minute, so a worker
// started beside the server does not race it.
func dialWait(ctx context.Context, cfg Config, logger *slog.Logger, t *Telemetry) (client.Client, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := dial(cfg, logger, t)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		logger.Info("waiting for the Temporal server", "address", cfg.TemporalAddress, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// startUserTools registers the catalog of user tools, which answers every
// tool worker's announcement (with a refusal when its queue is not in
// TOOL_QUEUES), reads the catalogs of TOOL_QUEUES once, and keeps reading
// them while the worker runs (Y2).
func (wk *Worker) startUserTools(ctx context.Context) error {
	e := wk.Engine
	wk.userTools = &usertools.Sync{Client: wk.Client, Registry: e.Registry, Queues: e.Config.ToolQueues, TTL: e.Config.ToolWorkerTTL, Logger: e.Logger}
	cat := &toolcatalog.UserTools{Refuse: wk.userTools.Refuse}
	wk.w.RegisterWorkflowWithOptions(cat.Run, workflow.RegisterOptions{Name: toolworker.CatalogWorkflowType})
	e.Activities.Queues = wk.userTools.States
	if len(e.Config.ToolQueues) == 0 {
		return nil
	}
	if e.Telemetry.Meter != nil {
		if err := observeToolQueues(e.Telemetry.Meter, wk.userTools.States); err != nil {
			return fmt.Errorf("tool queue gauges: %w", err)
		}
	}
	wk.userTools.Once(ctx)
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	wk.stopUserTools, wk.userToolsDone = stop, make(chan struct{})
	go func() {
		defer close(wk.userToolsDone)
		wk.userTools.Run(run)
	}()
	return nil
}
