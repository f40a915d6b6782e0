package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command"
	"github.com/toolround/toolround/tools/command/sandbox"
)

// sandboxRuns is how many `true` commands each mode runs for the overhead
// measurement, after a few discarded ones.
const (
	sandboxRuns   = 50
	sandboxWarmup = 5
)

// runSandboxBench measures what the command sandbox adds to a command:
// `true` through the run_command handler, with SANDBOX=none and with
// SANDBOX=bwrap (`go run ./cmd/bench sandbox`). No Temporal server is needed.
func runSandboxBench(out io.Writer) error {
	dir, err := os.MkdirTemp("", "bench-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	wd, err := tools.OpenWorkdir(dir)
	if err != nil {
		return err
	}
	defer wd.Close()
	medians := map[string]float64{}
	for _, mode := range []string{sandbox.ModeNone, sandbox.ModeBwrap} {
		sb, err := sandbox.New(sandbox.Config{Mode: mode}, wd.Dir())
		if err != nil {
			return fmt.Errorf("sandbox %s: %w", mode, err)
		}
		s, err := timeTrue(wd, sb)
		sb.Close()
		if err != nil {
			return fmt.Errorf("sandbox %s: %w", mode, err)
		}
		medians[mode] = s.P50
		fmt.Fprintf(out, "sandbox_%s_ms=%.2f (p50 of %d runs of `true` through run_command; p90 %.2f, max %.2f; %s)\n",
			mode, s.P50, s.N, s.P90, s.Max, sb.Describe())
	}
	fmt.Fprintf(out, "sandbox_overhead_ms=%.2f\n", medians[sandbox.ModeBwrap]-medians[sandbox.ModeNone])
	return nil
}

// timeTrue runs `true` through run_command and times each call.
func timeTrue(wd *tools.Workdir, sb *sandbox.Sandbox) (Summary, error) {
	ct, err := command.New(command.Config{Workdir: wd, Sandbox: sb})
	if err != nil {
		return Summary{}, err
	}
	defer ct.Close()
	var run tools.Definition
	for _, d := range ct.Definitions() {
		if d.Name == command.RunCommand {
			run = d
		}
	}
	args, _ := json.Marshal(map[string]any{"command": "true"})
	var samples []time.Duration
	for i := range sandboxWarmup + sandboxRuns {
		start := time.Now()
		if _, err := run.Handler(context.Background(), tools.Request{CallID: "bench", Args: args}); err != nil {
			return Summary{}, err
		}
		if i >= sandboxWarmup {
			samples = append(samples, time.Since(start))
		}
	}
	return Summarize(samples), nil
}
