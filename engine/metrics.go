package engine

import (
	"fmt"
	"net/http"
)

// MetricsHandler serves the worker's own metrics in the Prometheus text
// format: how many Redis operations were skipped (K5) and how many tools
// the worker offers.
func (e *Engine) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		var skipped int64
		up := 0
		if e.Redis != nil {
			skipped, up = e.Redis.Skipped(), 1
		}
		fmt.Fprintf(w, "# HELP toolround_redis_skipped_total Redis operations skipped because Redis failed or was slow.\n")
		fmt.Fprintf(w, "# TYPE toolround_redis_skipped_total counter\ntoolround_redis_skipped_total %d\n", skipped)
		fmt.Fprintf(w, "# HELP toolround_redis_configured Whether the worker uses Redis (1) or its in-process fallback (0).\n")
		fmt.Fprintf(w, "# TYPE toolround_redis_configured gauge\ntoolround_redis_configured %d\n", up)
		fmt.Fprintf(w, "# HELP toolround_tools The tools the worker offers.\n")
		fmt.Fprintf(w, "# TYPE toolround_tools gauge\ntoolround_tools %d\n", len(e.Registry.Names()))
	})
}
