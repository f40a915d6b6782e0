// Package builtin registers every built-in tool of the catalog, from the
// tool packages, with one configuration.
package builtin

import (
	"errors"

	"github.com/toolround/toolround/tools"
)

// Config is what the built-in tools need from the worker.
type Config struct {
	// Workdir confines the file and command tools (TOOLS_WORKDIR). Required.
	Workdir *tools.Workdir
}

// Register adds every built-in tool to reg.
func Register(reg *tools.Registry, cfg Config) error {
	if cfg.Workdir == nil {
		return errors.New("builtin: Config.Workdir is required")
	}
	return reg.Register(FindTools(reg))
}
