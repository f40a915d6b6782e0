// Command testworker is the worker with one hook for crash tests: with
// TESTWORKER_HOLD_COMMIT=DIR, the publication at the end of pass 3 (the
// PublishRound call that carries the round's history) stops and writes
// DIR/commit, so that a test can kill the process in exactly that step.
// TESTWORKER_HOLD_WHEN=after lets the publication take effect first, so the
// kill lands after its writes and before the workflow task that follows it
// is recorded. Everything else is the real engine.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/workflows"
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
	c, err := e.Dial()
	if err != nil {
		return err
	}
	defer c.Close()

	dir, after := os.Getenv("TESTWORKER_HOLD_COMMIT"), os.Getenv("TESTWORKER_HOLD_WHEN") == "after"
	publish := func(ctx context.Context, in workflows.PublishInput) error {
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
	w := worker.New(c, cfg.TaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(e.Workflow.Run, workflow.RegisterOptions{Name: workflows.WorkflowName})
	w.RegisterActivityWithOptions(e.Activities.ExecuteTool, activity.RegisterOptions{Name: workflows.ActivityExecuteTool})
	w.RegisterActivityWithOptions(publish, activity.RegisterOptions{Name: workflows.ActivityPublishRound})
	w.RegisterActivityWithOptions(e.Activities.StoreContents, activity.RegisterOptions{Name: workflows.ActivityStoreContents})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker started", "task_queue", cfg.TaskQueue, "pid", os.Getpid(), "hold_commit", dir != "")
	<-ctx.Done()
	w.Stop()
	return nil
}
