// Package ext registers the operator's own tools from a configuration file:
// script_* tools run a command, ext_* tools POST to an HTTP endpoint.
package ext

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command"
)

// Register adds every configured tool to reg. Scripts run in workdir
// (TOOLS_WORKDIR). A tool that cannot be registered does not stop the others;
// the returned error lists every one.
func Register(reg *tools.Registry, cfg Config, workdir string) error {
	cfg = cfg.withDefaults()
	client := &http.Client{Transport: cfg.Network.Transport()}
	var errs []error
	for _, tc := range cfg.Tools {
		def, err := definition(tc, cfg, workdir, client)
		if err == nil {
			err = reg.Register(def)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ext: tool %q: %w", tc.Name, err))
		}
	}
	return errors.Join(errs...)
}

func definition(tc ToolConfig, cfg Config, workdir string, client *http.Client) (tools.Definition, error) {
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
		s := &script{name: tc.Name, argv: tc.Command, base: command.BuildEnv(os.Environ(), cfg.PassEnv, nil), env: tc.Env, dir: dir, timeout: timeout, limit: cfg.MaxOutputBytes, readOnly: def.SideEffect == tools.ReadOnly, sandbox: cfg.Sandbox}
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
