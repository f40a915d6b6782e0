// Command testworker is the worker of the integration tests: the engine of
// bin/worker, configured the same way, plus what only tests need:
//   - tools that return a given number of bytes (emit_bytes runs as a local
//     activity, emit_bytes_remote as a regular one), for large results;
//   - with TESTWORKER_HOLD_COMMIT=DIR, the publication at the end of pass 3
//     (the PublishRound call that carries the round's history) stops and
//     writes DIR/commit, so that a crash test can kill the process in exactly
//     that step; TESTWORKER_HOLD_WHEN=after lets the publication take effect
//     first, so the kill lands after its writes and before the workflow task
//     that follows it is recorded.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testworker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := engine.New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := register(e.Registry, cfg); err != nil {
		return err
	}
	c, err := e.Dial()
	if err != nil {
		return err
	}
	defer c.Close()

	dir, after := os.Getenv("TESTWORKER_HOLD_COMMIT"), os.Getenv("TESTWORKER_HOLD_WHEN") == "after"
	publish := func(ctx context.Context, in round.PublishInput) error {
		if dir == "" || len(in.History) == 0 {
			return e.Activities.PublishRound(ctx, in)
		}
		if after {
			if err := e.Activities.PublishRound(ctx, in); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "commit"), []byte(in.WorkflowID), 0o644); err != nil {
			return err
		}
		<-ctx.Done() // the test kills the process here
		return ctx.Err()
	}
	// The engine's registrations, with PublishRound replaced by the hook.
	w := worker.New(c, cfg.TaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(e.Workflow.Run, workflow.RegisterOptions{Name: round.WorkflowName})
	w.RegisterActivityWithOptions(e.Activities.ExecuteTool, activity.RegisterOptions{Name: round.ActivityExecuteTool})
	w.RegisterActivityWithOptions(publish, activity.RegisterOptions{Name: round.ActivityPublishRound})
	w.RegisterActivityWithOptions(e.Activities.StoreContents, activity.RegisterOptions{Name: round.ActivityStoreContents})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker started", "task_queue", cfg.TaskQueue, "pid", os.Getpid(), "hold_commit", dir != "")
	<-ctx.Done()
	w.Stop()
	return nil
}

var emitSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "bytes": {"type": "integer", "minimum": 0, "maximum": 67108864, "description": "How many bytes to return."},
    "fill": {"type": "string", "minLength": 1, "description": "Text repeated to fill the result; default \"x\"."}
  },
  "required": ["bytes"],
  "additionalProperties": false
}`)

// Emit is the content that emit_bytes returns: fill repeated, cut to n bytes.
func emit(n int, fill string) string {
	if fill == "" {
		fill = "x"
	}
	return strings.Repeat(fill, n/len(fill)+1)[:n]
}

// register adds emit_bytes, which runs as a local activity (a read-only
// tool with a short timeout), and emit_bytes_remote, which runs as a regular
// activity (its timeout is above LOCAL_ACTIVITY_MAX).
func register(reg *tools.Registry, cfg engine.Config) error {
	handler := func(_ context.Context, req tools.Request) (tools.Result, error) {
		var a struct {
			Bytes int    `json:"bytes"`
			Fill  string `json:"fill"`
		}
		if err := req.Decode(&a); err != nil {
			return tools.Result{}, fmt.Errorf("%s: %w", req.Tool, err)
		}
		return tools.Text(emit(a.Bytes, a.Fill)), nil
	}
	local := tools.Definition{
		Name:        "emit_bytes",
		Description: "Return the given number of bytes of fill text (tests of large results).",
		Parameters:  emitSchema,
		Concurrent:  true,
		SideEffect:  tools.ReadOnly,
		Timeout:     10 * time.Second,
		Handler:     handler,
	}
	remote := local
	remote.Name = "emit_bytes_remote"
	remote.Timeout = max(2*time.Minute, cfg.LocalActivityMax+time.Minute)
	for _, d := range []tools.Definition{local, remote} {
		if err := reg.Register(d); err != nil {
			return fmt.Errorf("testworker: %w", err)
		}
	}
	return nil
}
