// Package builtin registers every built-in tool of the catalog, from the
// tool packages, with one configuration.
package builtin

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/agent"
	"github.com/toolround/toolround/tools/command"
	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/decision"
	"github.com/toolround/toolround/tools/files"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/web"
)

// Config is what the built-in tools need from the worker. The per-package
// configurations keep their own defaults; Register fills in the shared
// parts (workdir, Redis, cache, secrets).
type Config struct {
	// Workdir confines the file and command tools (TOOLS_WORKDIR). Required.
	Workdir *tools.Workdir
	// SecretData keeps the store_secret values (the agent tools' other
	// per-session data goes to Agent.Store); the worker passes
	// cache.SessionData, over Redis. Nil: in process, not shared between
	// workers.
	SecretData secrets.Hashes
	// Cache is the result cache (K1). Nil: no cache.
	Cache tools.ResultCache
	// SecretKey seals store_secret values (32 bytes). Required.
	SecretKey []byte
	// Decision configures the model that filters fetch_page and search_web
	// results; an empty BaseURL uses the extractive filter.
	Decision decision.Config
	Files    files.Config
	Command  command.Config
	Web      web.Config
	Agent    agent.Config
	Logger   *slog.Logger
}

// Builtins holds what the built-in tools keep running between calls.
type Builtins struct {
	// Secrets is the store of store_secret, which http_request reads.
	Secrets *secrets.Store
	// stopCommands stops the background commands of every workspace.
	stopCommands func()
}

// Register adds every built-in tool to reg.
func Register(reg *tools.Registry, cfg Config) (*Builtins, error) {
	if cfg.Workdir == nil {
		return nil, errors.New("builtin: Config.Workdir is required")
	}
	if cfg.Workdir.PerSession() && (cfg.Command.Sandbox == nil || cfg.Command.Sandbox.Mode() != sandbox.ModeBwrap) {
		return nil, errors.New("builtin: WORKSPACE=session needs the bubblewrap sandbox for commands (W2)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	store, err := secrets.NewStore(cfg.SecretKey, secrets.StoreOptions{Hashes: cfg.SecretData})
	if err != nil {
		return nil, fmt.Errorf("builtin: %w", err)
	}
	b := &Builtins{Secrets: store}

	if err := reg.Register(FindTools(reg)); err != nil {
		return nil, err
	}

	filesCfg := cfg.Files
	filesCfg.Workdir = cfg.Workdir
	if filesCfg.NetPolicy == nil {
		filesCfg.NetPolicy = cfg.Web.Policy
	}
	if err := files.Register(reg, filesCfg); err != nil {
		return nil, err
	}

	// In session mode each workspace has its own commands: background ids,
	// output and limits (W2).
	cmdDefs, stop, err := tools.PerSession(cfg.Workdir, func(wd *tools.Workdir) ([]tools.Definition, func(), error) {
		c := cfg.Command
		c.Workdir = wd
		ct, err := command.New(c)
		if err != nil {
			return nil, nil, err
		}
		return ct.Definitions(), func() { _ = ct.Close() }, nil
	})
	if err != nil {
		return nil, err
	}
	b.stopCommands = stop
	if err := reg.RegisterAll(cmdDefs...); err != nil {
		b.Close()
		return nil, err
	}

	filter, err := decision.New(withLogger(cfg.Decision, cfg.Logger))
	if err != nil {
		b.Close()
		return nil, err
	}
	webCfg := cfg.Web
	webCfg.Cache, webCfg.Secrets, webCfg.Decision, webCfg.Logger = cfg.Cache, store, filter, cfg.Logger
	if err := web.Register(reg, webCfg); err != nil {
		b.Close()
		return nil, err
	}

	agentCfg := cfg.Agent
	agentCfg.Secrets = store
	if err := agent.Register(reg, agentCfg); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func withLogger(c decision.Config, l *slog.Logger) decision.Config {
	if c.Logger == nil {
		c.Logger = l
	}
	return c
}

// Close stops the background commands the tools started.
func (b *Builtins) Close() {
	if b != nil && b.stopCommands != nil {
		b.stopCommands()
	}
}
