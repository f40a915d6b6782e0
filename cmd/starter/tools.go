package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/mcp"
)

// tools: the tools array a worker offers a provider.

var toolsCommand = &command{name: "tools", args: "--provider P [--format openai|anthropic|responses] [--worker]", flagsInArgs: true,
	summary: "Print a provider's tools array, deferred names and turn-context line (JSON): the built-in tools, MCP_CONFIG's and TOOLS_CONFIG's.\n" +
		"claude-code gets every tool; any other provider gets find_tools, run_tool and the always-loaded tools.\n" +
		"MCP tools are the worker's: --worker asks a running worker of TASK_QUEUE for its own list instead.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.provider, "provider", "", "the session's provider: claude-code, or any other name (required)")
		fs.StringVar(&f.format, "format", "", "the tools array's wire format: openai (chat completions, the default), anthropic (Messages API) or responses (Responses API)")
		fs.BoolVar(&f.fromWorker, "worker", false, "ask a worker of TASK_QUEUE for the tools it offers (its MCP servers' included) instead of reading MCP_CONFIG and TOOLS_CONFIG here; needs Temporal")
	},
	run: func(ctx context.Context, x *call) error {
		if x.f.provider == "" {
			return usageError{errors.New("tools needs --provider P (claude-code or any other name)"), x.usage}
		}
		if err := round.CheckProvider(x.f.provider); err != nil {
			return usageError{error: err}
		}
		if x.f.fromWorker {
			return printWorkerTools(ctx, x.stdout, x.stderr, x.f.provider, x.f.format)
		}
		return printTools(ctx, x.stdout, x.stderr, x.f.provider, x.f.format)
	}}

// printTools lists the tools a worker with the same configuration offers:
// the built-ins, MCP_CONFIG's servers and TOOLS_CONFIG's tools. Only MCP
// servers are started (to ask them for their tools); nothing needs Temporal,
// Redis or the workdir. Without MCP_CONFIG it says on stderr that MCP tools
// are the worker's, and how to ask a worker for them.
func printTools(ctx context.Context, w, stderr io.Writer, provider, format string) error {
	f, err := parseToolsFormat(format)
	if err != nil {
		return err
	}
	reg, err := client.Catalog()
	if err != nil {
		return err
	}
	dir := envconf.Get("TOOLS_WORKDIR", "./workdir")
	if envconf.Get(mcp.ConfigEnv, "") == "" {
		fmt.Fprintln(stderr, "starter tools: no MCP tools listed: MCP tools are the worker's, and MCP_CONFIG is not set here; "+
			"give MCP_CONFIG the worker's file, or ask a running worker with --worker")
	}
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
		sayUnavailable(stderr, m.Unavailable())
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
	return printToolset(w, reg.ToolsFor(provider, nil), format, f)
}

// printWorkerTools lists the tools a running worker of TASK_QUEUE offers,
// as it answers (client.WorkerTools).
func printWorkerTools(ctx context.Context, w, stderr io.Writer, provider, format string) error {
	f, err := parseToolsFormat(format)
	if err != nil {
		return err
	}
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ts, err := c.WorkerTools(ctx, provider)
	if err != nil {
		return err
	}
	sayUnavailable(stderr, ts.Unavailable)
	return printToolset(w, ts, format, f)
}

// sayUnavailable names on stderr the MCP servers whose tools are missing:
// a server that waits for a sign-in, with where to do it.
func sayUnavailable(stderr io.Writer, list []tools.Unavailable) {
	for _, u := range list {
		switch {
		case u.NeedsSignIn && u.SignIn != "":
			fmt.Fprintf(stderr, "starter tools: MCP server %q needs sign-in: a person signs it in at %s\n", u.Server, u.SignIn)
		case u.NeedsSignIn:
			fmt.Fprintf(stderr, "starter tools: MCP server %q needs sign-in: a person signs it in on the console's MCP page (/mcp)\n", u.Server)
		default:
			fmt.Fprintf(stderr, "starter tools: MCP server %q is unavailable: %s\n", u.Server, u.Reason)
		}
	}
}

func parseToolsFormat(format string) (round.Format, error) {
	f, err := round.ParseFormat(format)
	if format != "" && err != nil {
		return f, usageError{error: fmt.Errorf("tools --format: %w", err)}
	}
	return f, nil
}

func printToolset(w io.Writer, ts tools.Toolset, format string, f round.Format) error {
	if format == "" {
		return printJSON(w, ts) // as it was before formats: no "format" field
	}
	out, err := ts.In(f)
	if err != nil {
		return err
	}
	return printJSON(w, out)
}
