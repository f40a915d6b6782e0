// Command worker runs a toolround worker: it polls TASK_QUEUE on the Temporal
// server at TEMPORAL_ADDRESS and runs rounds of tool calls. Configuration is
// read from the environment (see engine.Config).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolround/toolround/engine"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
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
	c, err := dialWithRetry(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer c.Close()

	if cfg.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", e.MetricsHandler())
		srv := &http.Server{Addr: cfg.MetricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("metrics server stopped", "addr", cfg.MetricsAddr, "error", err)
			}
		}()
		defer srv.Close()
	}

	w := e.NewWorker(c)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	redis := "none (in-process cache)"
	if e.Redis != nil {
		redis = cfg.RedisURL
	}
	logger.Info("worker started",
		"temporal", cfg.TemporalAddress, "namespace", cfg.Namespace, "task_queue", cfg.TaskQueue,
		"workdir", e.Workdir.Dir(), "redis", redis, "tools", len(e.Registry.Names()),
		"max_concurrent_tools", e.Catalog.Options.MaxConcurrent, "pid", os.Getpid())
	<-ctx.Done()
	logger.Info("stopping worker")
	w.Stop()
	return nil
}

// dialWithRetry waits for the Temporal server for up to a minute, so a worker
// started beside the server does not race it.
func dialWithRetry(ctx context.Context, cfg engine.Config, logger *slog.Logger) (client.Client, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := engine.Dial(cfg, logger)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		logger.Info("waiting for the Temporal server", "address", cfg.TemporalAddress, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
