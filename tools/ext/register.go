// Package ext registers the operator's own tools from a configuration file:
// script_* tools run a command, ext_* tools POST to an HTTP endpoint.
package ext

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command"
)

// Register adds every configured tool to reg. Scripts run in workdir
// (TOOLS_WORKDIR). A tool that cannot be registered does not stop the others;
// the returned error lists every one.
func Register(reg *tools.Registry, cfg Config, workdir string) error {
	return registerIn(reg, cfg, workdir, nil)
}

// registerIn is Register; wd, when it is in session mode, gives each
// script call its session's workspace.
func registerIn(reg *tools.Registry, cfg Config, workdir string, wd *tools.Workdir) error {
	cfg = cfg.withDefaults()
	client := &http.Client{Transport: cfg.Network.Transport()}
	var errs []error
	for _, tc := range cfg.Tools {
		def, err := definition(tc, cfg, workdir, wd, client)
		if err == nil && wd != nil && wd.PerSession() && def.Source == tools.SourceScript {
			if cfg.Sandbox == nil {
				err = errors.New("WORKSPACE=session runs scripts only in the sandbox, and none is given")
			} else {
				def.Handler = inWorkspace(wd, def.Handler)
			}
		}
		if err == nil {
			err = reg.Register(def)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ext: tool %q: %w", tc.Name, err))
		}
	}
	return errors.Join(errs...)
}

// RegisterIn is Register in wd. With WORKSPACE=session (W2) each call of a
// script runs in its session's workspace, which is all the sandbox lets it
// see of TOOLS_WORKDIR; its program is found in the tools file's folder
// (Config.Dir) when it is a relative path, on PATH when it is a bare name,
// and refused when it lies inside TOOLS_WORKDIR.
func RegisterIn(reg *tools.Registry, cfg Config, wd *tools.Workdir) error {
	if !wd.PerSession() {
		// Scripts keep to wd's WORKSPACE_MAX_BYTES (W3).
		return registerIn(reg, cfg, wd.Dir(), wd)
	}
	var errs []error
	kept := cfg.Tools[:0:0]
	for _, tc := range cfg.Tools {
		if tc.script() && len(tc.Command) > 0 {
			prog, err := resolveProgram(tc.Command[0], cfg.Dir, wd.Dir())
			if err != nil {
				errs = append(errs, fmt.Errorf("ext: tool %q: %w", tc.Name, err))
				continue
			}
			tc.Command = append([]string{prog}, tc.Command[1:]...)
		}
		kept = append(kept, tc)
	}
	cfg.Tools = kept
	if err := registerIn(reg, cfg, wd.Dir(), wd); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// resolveProgram finds a script's program as RegisterIn says.
func resolveProgram(prog, confDir, workdir string) (string, error) {
	p := prog
	switch {
	case filepath.IsAbs(p):
	case strings.Contains(p, "/"):
		if confDir == "" {
			return "", fmt.Errorf("program %q is relative, and the tools file's folder is unknown", prog)
		}
		p = filepath.Join(confDir, p)
	default:
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("program %q: %w", prog, err)
		}
		if p, err = filepath.Abs(found); err != nil {
			return "", err
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if p == workdir || strings.HasPrefix(p, workdir+"/") {
		return "", fmt.Errorf("program %s lies inside TOOLS_WORKDIR %s, which holds every session's workspace (WORKSPACE=session): keep scripts outside it", p, workdir)
	}
	return p, nil
}

// definition is tc's tool; a script keeps to wd's WORKSPACE_MAX_BYTES, or
// in session mode to that of the call's workspace (nil: no limit).
func definition(tc ToolConfig, cfg Config, workdir string, wd *tools.Workdir, client *http.Client) (tools.Definition, error) {
	if err := tc.validate(); err != nil {
		return tools.Definition{}, err
	}
	timeout := cfg.Timeout
	if tc.TimeoutSeconds > 0 {
		timeout = time.Duration(tc.TimeoutSeconds * float64(time.Second))
	}
	def := tools.Definition{
		Name:        tc.Name,
		Description: tc.Description,
		Parameters:  tc.Parameters,
		Concurrent:  tc.Concurrent,
		SideEffect:  tc.effect(),
		Timeout:     timeout,
	}
	if tc.script() {
		if workdir == "" {
			return tools.Definition{}, errors.New("TOOLS_WORKDIR is empty; scripts need a folder to run in")
		}
		dir, err := filepath.Abs(workdir)
		if err != nil {
			return tools.Definition{}, fmt.Errorf("workdir %q: %w", workdir, err)
		}
		s := &script{name: tc.Name, argv: tc.Command, base: command.BuildEnv(os.Environ(), cfg.PassEnv, nil), env: tc.Env, dir: dir, timeout: timeout, limit: cfg.MaxOutputBytes, readOnly: def.SideEffect == tools.ReadOnly, sandbox: cfg.Sandbox, wd: wd}
		def.Source = tools.SourceScript
		// A script sees the whole workdir, like a shell command.
		def.Volatile = true
		def.Handler = s.run
		return def, nil
	}
	e := &endpoint{name: tc.Name, url: tc.URL, headers: tc.Headers, timeout: timeout, limit: cfg.MaxOutputBytes, client: client, retryable: def.SideEffect != tools.AtMostOnce}
	def.Source = tools.SourceExt
	def.Handler = e.run
	return def, nil
}

// inWorkspace runs h with the call's session workspace in ctx, for
// script.run; a call without a usable session fails.
func inWorkspace(wd *tools.Workdir, h tools.Handler) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		ws, err := wd.For(ctx)
		if err != nil {
			return tools.Result{}, err
		}
		return h(context.WithValue(ctx, workspaceKey{}, ws), req)
	}
}

type workspaceKey struct{}

// workspaceOf is the workspace inWorkspace gave the call; nil in shared
// mode.
func workspaceOf(ctx context.Context) *tools.Workdir {
	w, _ := ctx.Value(workspaceKey{}).(*tools.Workdir)
	return w
}
