package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/mcp"
)

// tools: the tools array a worker offers a provider.

// printTools lists the tools a worker with the same configuration offers:
// the built-ins, MCP_CONFIG's servers and TOOLS_CONFIG's tools. Only MCP
// servers are started (to ask them for their tools); nothing needs Temporal,
// Redis or the workdir.
func printTools(ctx context.Context, w io.Writer, provider, format string) error {
	f, err := round.ParseFormat(format)
	if format != "" && err != nil {
		return usageError{error: fmt.Errorf("tools --format: %w", err)}
	}
	reg, err := client.Catalog()
	if err != nil {
		return err
	}
	dir := envconf.Get("TOOLS_WORKDIR", "./workdir")
	if path := envconf.Get(mcp.ConfigEnv, ""); path != "" {
		mc, err := mcp.LoadConfig(path)
		if err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			mc.Dir = dir
		}
		mc.Logger = slog.New(slog.DiscardHandler)
		m, err := mcp.Connect(ctx, mc)
		if err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
		defer m.Close()
		if err := m.Register(reg); err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	if path := envconf.Get(ext.ConfigEnv, ""); path != "" {
		tc, err := ext.Load(path)
		if err != nil {
			return fmt.Errorf("TOOLS_CONFIG: %w", err)
		}
		if err := ext.Register(reg, tc, dir); err != nil {
			return fmt.Errorf("TOOLS_CONFIG: %w", err)
		}
	}
	ts := reg.ToolsFor(provider, nil)
	if format == "" {
		return printJSON(w, ts) // as it was before formats: no "format" field
	}
	out, err := ts.In(f)
	if err != nil {
		return err
	}
	return printJSON(w, out)
}
