package engine

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/tools"
)

// TestTelemetryOffCostsNothing: without METRICS_ADDR and an OTLP endpoint
// there is no /metrics handler, no SDK metrics and no tracing interceptor.
func TestTelemetryOffCostsNothing(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{})
	require.NoError(t, err)
	require.Nil(t, tel.Handler)
	require.Nil(t, tel.WorkerInterceptor)
	require.Nil(t, tel.ClientInterceptor)
	require.NoError(t, tel.Shutdown(context.Background()))
}

// TestCacheRequestsByTool: the result cache's lookups are counted by the
// tool a key belongs to; keys of another shape fold into "other".
func TestCacheRequestsByTool(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true, SpanExporter: tracetest.NewNoopExporter()})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	require.NotNil(t, tel.WorkerInterceptor)
	c, err := countCache(cache.NewMemoryCache(), tel.Meter)
	require.NoError(t, err)
	ctx := context.Background()
	key := tools.FetchPageCacheKey("https://example.test/")
	c.Get(ctx, key)
	c.Set(ctx, key, "page", tools.ResultCacheTTL)
	c.Get(ctx, key)
	c.Get(ctx, "something:else")

	rec := httptest.NewRecorder()
	tel.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`toolround_cache_requests_total{result="hit",tool="fetch_page"} 1`,
		`toolround_cache_requests_total{result="miss",tool="fetch_page"} 1`,
		`toolround_cache_requests_total{result="miss",tool="other"} 1`,
		`toolround_cache_requests_total{result="hit",tool="http_request"} 0`,
	} {
		require.True(t, strings.Contains(string(body), want), "want %s in\n%s", want, body)
	}
}
