// Package health serves the liveness and readiness endpoints of the worker
// and the console (O2): /healthz says the process is alive, /readyz says
// whether it can do its work now.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// Checks says how a process is ready: Temporal decides the status, Redis
// is only reported (a worker without Redis still runs rounds, K5).
type Checks struct {
	// Temporal answers nil when the Temporal server answers.
	Temporal func(ctx context.Context) error
	// Redis answers nil when Redis answers; nil when there is none.
	Redis func(ctx context.Context) error
	// Timeout bounds each check; default 2 seconds.
	Timeout time.Duration
}

// Handler serves /healthz and /readyz. Drain makes /readyz answer 503
// from then on, so a load balancer stops sending work while the process
// finishes what it has.
type Handler struct {
	checks   Checks
	draining atomic.Bool
	mux      *http.ServeMux
}

// New returns the handler of checks.
func New(checks Checks) *Handler {
	if checks.Timeout <= 0 {
		checks.Timeout = 2 * time.Second
	}
	h := &Handler{checks: checks, mux: http.NewServeMux()}
	h.Register(h.mux)
	return h
}

// Register adds /healthz and /readyz to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
}

// ServeHTTP serves the two endpoints alone.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Drain marks the process as stopping: /readyz answers 503 "draining".
func (h *Handler) Drain() { h.draining.Store(true) }

// Report is the body of /readyz.
type Report struct {
	Ready    bool   `json:"ready"`
	Temporal string `json:"temporal"`
	// Redis is "ok", "none" (not configured) or what failed; it never
	// decides the status.
	Redis    string `json:"redis"`
	Draining bool   `json:"draining,omitempty"`
}

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	rep := h.Check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rep.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(rep)
}

// Check runs the checks: ready when Temporal answers and the process does
// not drain.
func (h *Handler) Check(ctx context.Context) Report {
	rep := Report{Temporal: "ok", Redis: "none", Draining: h.draining.Load()}
	rep.Temporal = run(ctx, h.checks.Timeout, h.checks.Temporal)
	if h.checks.Redis != nil {
		rep.Redis = run(ctx, h.checks.Timeout, h.checks.Redis)
	}
	rep.Ready = rep.Temporal == "ok" && !rep.Draining
	return rep
}

func run(ctx context.Context, timeout time.Duration, check func(context.Context) error) string {
	if check == nil {
		return "ok"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := check(ctx); err != nil {
		return "down: " + err.Error()
	}
	return "ok"
}
