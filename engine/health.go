package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/health"
)

// DefaultHealthAddr is where a worker serves /healthz and /readyz when
// neither HEALTH_ADDR nor METRICS_ADDR is set (O2).
const DefaultHealthAddr = "127.0.0.1:8781"

// healthChecks are the worker's readiness checks: Temporal answers
// (CheckHealth), and Redis's state for the body.
func (wk *Worker) healthChecks() health.Checks {
	c := health.Checks{Temporal: func(ctx context.Context) error {
		_, err := wk.Client.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}}
	if r := wk.Engine.Redis; r != nil {
		c.Redis = func(ctx context.Context) error { return r.Redis().Ping(ctx).Err() }
	}
	return c
}

// serveHealth serves h on addr. An address that cannot be bound (another
// worker of this host has it) is logged and the worker goes on without it:
// health endpoints never stop a worker from working.
func serveHealth(addr string, h http.Handler, logger *slog.Logger) *http.Server {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Warn("no health endpoints: HEALTH_ADDR cannot be bound (set HEALTH_ADDR to a free address, or off)", "addr", addr, "error", err)
		return nil
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("health server stopped", "addr", addr, "error", err)
		}
	}()
	return srv
}
