// Command worker runs a toolround worker: it polls TASK_QUEUE on the Temporal
// server at TEMPORAL_ADDRESS and runs rounds of tool calls. Configuration is
// read from the environment (see engine.Config).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolround/toolround/engine"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, logger, err := engine.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return engine.RunWorker(ctx, cfg, logger)
}
