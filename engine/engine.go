package engine

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/toolround/toolround/activities"
	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/builtin"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/netguard"
	"github.com/toolround/toolround/workflows"
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
	Logger     *slog.Logger

	builtins *builtin.Builtins
	mcp      *mcp.Manager
	sandbox  *sandbox.Sandbox
}

// New builds the engine: the workdir, Redis (or the in-process fallback, said
// at start), and the registry with every built-in tool.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.Default()
	}
	wd, err := tools.OpenWorkdir(cfg.Workdir)
	if err != nil {
		return nil, err
	}
	e := &Engine{Config: cfg, Registry: tools.NewRegistry(), Workdir: wd, Logger: logger}
	acts := &activities.Activities{Registry: e.Registry, LargeResult: cfg.LargeResult, Logger: logger}
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
	acts.Cache = resultCache
	e.Activities = acts
	if err := e.registerTools(ctx, resultCache); err != nil {
		e.Close()
		return nil, err
	}
	e.Catalog = workflows.NewCatalog(e.Registry, workflows.CatalogOptions{
		MaxConcurrent:    cfg.MaxConcurrent,
		ConfirmTimeout:   cfg.ConfirmTimeout,
		HeartbeatTimeout: cfg.HeartbeatTimeout,
		LocalMaxTimeout:  cfg.LocalActivityMax,
	})
	e.Workflow = &workflows.RoundWorkflow{Catalog: e.Catalog}
	return e, nil
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
	}
	bc.Web.SearXNGURL = cfg.SearchURL
	if cfg.DenyPrivate {
		p := netguard.DefaultPolicy()
		p.DenyPrivate = true
		bc.Web.Policy = &p
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
	}
	if cfg.ToolsConfig != "" {
		tc, err := ext.Load(cfg.ToolsConfig)
		if err != nil {
			return fmt.Errorf("engine: TOOLS_CONFIG: %w", err)
		}
		tc.Sandbox = e.sandbox
		if err := ext.Register(e.Registry, tc, e.Workdir.Dir()); err != nil {
			return fmt.Errorf("engine: TOOLS_CONFIG: %w", err)
		}
	}
	return nil
}

// Dial connects a Temporal client with the engine's address and namespace.
func (e *Engine) Dial() (client.Client, error) {
	return Dial(e.Config, e.Logger)
}

// Dial connects a Temporal client (a nil logger is slog.Default()).
func Dial(cfg Config, logger *slog.Logger) (client.Client, error) {
	if logger == nil {
		logger = slog.Default()
	}
	return cfg.temporal().Dial(logger)
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
}
