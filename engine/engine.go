package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
	"github.com/toolround/toolround/tools/builtin"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/netguard"
)

// Engine is a worker's dependencies: the registry that applications add
// their tools to, the workflow and the activities.
type Engine struct {
	Config   Config
	Registry *tools.Registry
	Workdir  *tools.Workdir
	// Redis is nil when the worker runs without Redis.
	Redis      *cache.Client
	Catalog    *workflows.RegistryCatalog
	Workflow   *workflows.RoundWorkflow
	Activities *activities.Activities
	// Notifier posts the webhooks of waits (N1); nil without NOTIFY_URL.
	Notifier *notify.Notifier
	Logger   *slog.Logger
	// Telemetry is the worker's metrics and traces (metrics.go).
	Telemetry *Telemetry

	builtins *builtin.Builtins
	mcp      *mcp.Manager
	sandbox  *sandbox.Sandbox
}

// New builds the engine: the workdir, Redis (or the in-process fallback, said
// at start), and the registry with every built-in tool.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Engine, error) {
	return newEngine(ctx, cfg, logger, nil)
}

// newEngine is New with the telemetry of a WithTelemetry option; nil means
// the configuration's (METRICS_ADDR, OTEL_EXPORTER_OTLP_ENDPOINT).
func newEngine(ctx context.Context, cfg Config, logger *slog.Logger, tel *TelemetryOptions) (*Engine, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.BuildID == "" {
		cfg.BuildID = DefaultBuildID()
	}
	if tel == nil {
		tel = &TelemetryOptions{Metrics: cfg.MetricsAddr != ""}
	}
	t, err := NewTelemetry(ctx, *tel)
	if err != nil {
		return nil, fmt.Errorf("engine: telemetry: %w", err)
	}
	wd, err := tools.OpenWorkspaces(cfg.Workdir, cfg.Workspace)
	if err != nil {
		_ = t.Shutdown(ctx)
		return nil, err
	}
	wd.SetMaxBytes(cfg.WorkspaceMaxBytes)
	if cfg.Placement == placement.Host && cfg.HostID == "" {
		if cfg.HostID, err = hostID(wd.Dir()); err != nil {
			_ = wd.Close()
			_ = t.Shutdown(ctx)
			return nil, err
		}
	}
	if cfg.WorkspaceTTL > 0 && !wd.PerSession() {
		_ = wd.Close()
		_ = t.Shutdown(ctx)
		return nil, fmt.Errorf("WORKSPACE_TTL removes the sessions' workspaces of WORKSPACE=session; with WORKSPACE=%s there are none: unset it or use WORKSPACE=session", wd.Mode())
	}
	e := &Engine{Config: cfg, Registry: tools.NewRegistry(), Workdir: wd, Logger: logger, Telemetry: t}
	acts := &activities.Activities{Registry: e.Registry, LargeResult: cfg.LargeResult, Logger: logger, Tracer: t.Tracer}
	if acts.Metrics, err = activities.NewMetrics(t.Meter); err != nil {
		e.Close()
		return nil, err
	}
	var resultCache tools.ResultCache
	if cfg.RedisURL != "" {
		rc, err := cache.Open(ctx, cache.Options{URL: cfg.RedisURL, Logger: logger})
		if rc == nil {
			return nil, err
		}
		if err != nil {
			logger.Warn("redis does not answer yet; rounds go on without it until it does", "error", err)
		}
		e.Redis = rc
		resultCache = rc.ResultCache()
		acts.Events, acts.History, acts.Blobs = rc.Events(), rc.History(), rc.Blobs()
	} else {
		logger.Warn("REDIS_URL=none: the result cache is in process (not shared between workers); no event streams, session history or large-result store")
		resultCache = cache.NewMemoryCache()
	}
	if resultCache, err = countCache(resultCache, t.Meter); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.observeRedis(t.Meter); err != nil {
		e.Close()
		return nil, err
	}
	acts.Cache = resultCache
	if acts.RuleKey, err = cfg.RuleKey.LoadKey(); err != nil {
		e.Close()
		return nil, fmt.Errorf("engine: the key that signs allow rules: %w", err)
	}
	if acts.RuleKeyPrevious, err = cfg.RuleKey.LoadPrevious(); err != nil {
		e.Close()
		return nil, fmt.Errorf("engine: the previous key of allow rules: %w", err)
	}
	e.Activities = acts
	var missing string
	if e.Notifier, missing, err = newNotifier(cfg); err != nil {
		e.Close()
		return nil, err
	}
	if missing != "" {
		logger.Warn(missing)
	}
	if err := e.registerTools(ctx, resultCache); err != nil {
		e.Close()
		return nil, err
	}
	if e.Notifier != nil && e.builtins != nil {
		e.Notifier.Secrets = e.builtins.Secrets // webhooks carry no stored value (T9)
	}
	if e.builtins != nil {
		acts.Secrets = e.builtins.Secrets     // nor does an agent run's thought (F2)
		acts.SecretStore = e.builtins.Secrets // nor a user tool's call or answer (Y3)
	}
	var untested []string
	if e.sandbox != nil && e.sandbox.Mode() == sandbox.ModeBwrap {
		// Without a sandbox no rule approves a command (T12): nothing to probe.
		untested = probeTables(ctx, logger, approval.VersionProbes(), exec.LookPath)
	}
	e.Catalog = workflows.NewCatalog(e.Registry, workflows.CatalogOptions{
		MaxConcurrent:    cfg.MaxConcurrent,
		ConfirmTimeout:   cfg.ConfirmTimeout,
		HeartbeatTimeout: cfg.HeartbeatTimeout,
		LocalMaxTimeout:  cfg.LocalActivityMax,
		DenyAutoApprove:  cfg.DenyAutoApprove,
		NoSandbox:        e.sandbox == nil || e.sandbox.Mode() != sandbox.ModeBwrap,
		Untested:         untested,
		WorkerLimits:     cfg.Limits,
		ContextTokens:    cfg.ContextTokens,
		Notify:           notifySettings(cfg.Notify),
		BuildID:          cfg.BuildID,
		Placement:        placementSettings(cfg),
		SubagentDepth:    cfg.SubagentDepth,
		Chatbots:         cfg.Chatbots,
		LargeResult:      cfg.LargeResult,
	})
	e.Workflow = &workflows.RoundWorkflow{Catalog: e.Catalog}
	return e, nil
}

// placementSettings are what a round records of WORKSPACE_PLACEMENT=host;
// nil for shared.
func placementSettings(cfg Config) *workflows.PlacementSettings {
	if cfg.Placement != placement.Host {
		return nil
	}
	return &workflows.PlacementSettings{TaskQueue: cfg.TaskQueue, HostID: cfg.HostID, HostTimeout: cfg.HostTimeout}
}

// hostID is the HOST_ID kept in dir/.toolround/host-id, made on first
// start: a random id, so that it follows the disk, not the host name.
func hostID(dir string) (string, error) {
	p := filepath.Join(dir, placement.HostIDFile)
	for range 2 {
		b, err := os.ReadFile(p)
		if err == nil {
			id := strings.TrimSpace(string(b))
			if err := placement.CheckHostID(id); err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			return id, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("HOST_ID: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("HOST_ID: %w", err)
		}
		rb := make([]byte, 6)
		_, _ = rand.Read(rb)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue // another worker on this disk made it first
		}
		if err != nil {
			return "", fmt.Errorf("HOST_ID: %w", err)
		}
		_, werr := fmt.Fprintf(f, "h-%s\n", hex.EncodeToString(rb))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("HOST_ID: %w", werr)
		}
	}
	return "", fmt.Errorf("HOST_ID: %s could not be read", p)
}

// registerTools adds the built-in tools, the MCP servers' tools and the
// script_*/ext_* tools of the configuration files.
func (e *Engine) registerTools(ctx context.Context, cache tools.ResultCache) error {
	cfg := e.Config
	key, err := cfg.Secrets.LoadKey()
	if err != nil {
		return fmt.Errorf("engine: the key that seals secrets: %w", err)
	}
	if e.sandbox, err = e.openSandbox(); err != nil {
		return err
	}
	bc := builtin.Config{Workdir: e.Workdir, Cache: cache, SecretKey: key, Decision: cfg.Decision, Logger: e.Logger}
	bc.Command.Sandbox = e.sandbox
	if e.Redis != nil {
		bc.SecretData = e.Redis.SessionData()
		bc.Agent.Store = e.Redis.SessionData()
		bc.Agent.Blobs = e.Redis.Blobs()
	}
	bc.Agent.ContextTokens = cfg.ContextTokens
	bc.Web.SearXNGURL = cfg.SearchURL
	bc.Files.Media = cfg.Media
	bc.Agent.Chatbots = cfg.Chatbots
	bc.Web.IdempotentHosts = cfg.IdempotentHosts
	bc.Web.HostConcurrency, bc.Web.HostLimits = cfg.HostConcurrency, cfg.HostLimits
	if bc.Web.HostConcurrency <= 0 {
		bc.Web.HostConcurrency = cfg.MaxConcurrent
		if bc.Web.HostConcurrency <= 0 {
			bc.Web.HostConcurrency = workflows.DefaultMaxConcurrent()
		}
	}
	if cfg.DenyPrivate {
		p := netguard.DefaultPolicy()
		p.DenyPrivate = true
		bc.Web.Policy = &p
	}
	if bc.Web.Tenant, err = tenants(cfg.ConsoleTokens); err != nil {
		return err
	}
	if e.builtins, err = builtin.Register(e.Registry, bc); err != nil {
		return err
	}
	if cfg.MCPConfig != "" {
		mc, err := mcp.LoadConfig(cfg.MCPConfig)
		if err != nil {
			return fmt.Errorf("engine: MCP_CONFIG: %w", err)
		}
		mc.Dir, mc.Logger = e.Workdir.Dir(), e.Logger
		// Servers behind OAuth use the sign-ins people make through the
		// console, sealed in Redis (E3).
		if e.Redis != nil {
			if mc.Grants, err = mcp.NewGrants(e.Redis.SessionData(), key); err != nil {
				return fmt.Errorf("engine: MCP_CONFIG: %w", err)
			}
		}
		if u := strings.TrimRight(cfg.Notify.ConsoleURL, "/"); u != "" {
			mc.SignInLink = u + "/mcp"
		}
		mc.NetPolicy = bc.Web.Policy
		if e.Redis != nil {
			mc.Blobs = e.Redis.Blobs() // audio and binary resources of results
		}
		// A server that asks for roots gets the call's own workspace.
		mc.Workspace = func(ctx context.Context) (string, error) {
			w, err := e.Workdir.For(ctx)
			if err != nil {
				return "", err
			}
			return w.Dir(), nil
		}
		if !e.Workdir.PerSession() {
			// A server rooted in the workspace keeps to its
			// WORKSPACE_MAX_BYTES (W3).
			mc.Quota = e.Workdir
		}
		if e.Workdir.PerSession() {
			// No server may act in the sessions' folder (W2): those without a
			// cwd start in the folder of MCP_CONFIG.
			if mc.Dir, err = filepath.Abs(filepath.Dir(cfg.MCPConfig)); err != nil {
				return fmt.Errorf("engine: MCP_CONFIG: %w", err)
			}
			if err := mc.RootedOutside(e.Workdir.Dir()); err != nil {
				return fmt.Errorf("engine: MCP_CONFIG with WORKSPACE=session: %w", err)
			}
		}
		if e.mcp, err = mcp.Connect(ctx, mc); err != nil {
			return fmt.Errorf("engine: MCP_CONFIG: %w", err)
		}
		for _, st := range e.mcp.Status() {
			if st.Err != nil {
				e.Logger.Warn("an MCP server did not start; its tools are not available", "server", st.Name, "error", st.Err)
			}
		}
		if err := e.mcp.Register(e.Registry); err != nil {
			e.Logger.Warn("some MCP tools were not registered", "error", err)
		}
		e.Activities.Unavailable = e.mcp.Unavailable
	}
	if cfg.ToolsConfig != "" {
		tc, err := ext.Load(cfg.ToolsConfig)
		if err != nil {
			return fmt.Errorf("engine: TOOLS_CONFIG: %w", err)
		}
		tc.Sandbox = e.sandbox
		if err := ext.RegisterIn(e.Registry, tc, e.Workdir); err != nil {
			return fmt.Errorf("engine: TOOLS_CONFIG: %w", err)
		}
	}
	if err := agent.CheckChatbotTools(cfg.Chatbots, e.Registry, cfg.LLMAPI); err != nil {
		return fmt.Errorf("engine: %s: %w", agent.EnvAgentsConfig, err)
	}
	return nil
}

// Dial connects a Temporal client with the engine's address and namespace.
func (e *Engine) Dial() (client.Client, error) {
	return dial(e.Config, e.Logger, e.Telemetry)
}

// Dial connects a Temporal client (a nil logger is slog.Default()).
func Dial(cfg Config, logger *slog.Logger) (client.Client, error) {
	return dial(cfg, logger, nil)
}

// dial connects a client that reports the SDK's metrics and carries the
// tracing interceptor of t (the worker's, when t is the engine's).
func dial(cfg Config, logger *slog.Logger, t *Telemetry) (client.Client, error) {
	if logger == nil {
		logger = slog.Default()
	}
	opts, err := cfg.temporal().ClientOptions(logger)
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, crashpoint.DialOptions()...) // L1: a test build only
	if t != nil {
		opts.MetricsHandler = t.MetricsHandler
		if t.ClientInterceptor != nil {
			opts.Interceptors = []interceptor.ClientInterceptor{t.ClientInterceptor}
		}
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to Temporal at %s (namespace %s): %w", cfg.TemporalAddress, cfg.Namespace, err)
	}
	return c, nil
}

// Close stops background commands and MCP servers and releases Redis and
// the workdir.
func (e *Engine) Close() {
	e.builtins.Close()
	if e.mcp != nil {
		_ = e.mcp.Close()
	}
	if e.Redis != nil {
		_ = e.Redis.Close()
	}
	if e.sandbox != nil {
		e.sandbox.Close()
	}
	if e.Workdir != nil {
		_ = e.Workdir.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Telemetry.Shutdown(ctx); err != nil {
		e.Logger.Warn("flushing metrics and traces failed", "error", err)
	}
}
