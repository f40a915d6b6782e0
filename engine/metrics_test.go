package engine

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// TestWorkflowMetricsHaveHelpAndRealLabels (M2): the workflow's metrics go
// through the SDK's handler, which takes no description and tags workflow
// code with activity_type="none" and worker_type="none"; /metrics shows them
// with their HELP text and without those labels, and keeps the real ones.
func TestWorkflowMetricsHaveHelpAndRealLabels(t *testing.T) {
	tel, err := NewTelemetry(context.Background(), TelemetryOptions{Metrics: true, SpanExporter: tracetest.NewNoopExporter()})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }()
	tags := map[string]string{"activity_type": "none", "worker_type": "none", "workflow_type": "ToolRound", "tool": "calculate", "status": "ok"}
	tel.MetricsHandler.WithTags(tags).Counter("toolround_tool_calls").Inc(1)
	tel.MetricsHandler.WithTags(map[string]string{"activity_type": "none", "outcome": "ok"}).Counter("toolround_rounds").Inc(1)
	tel.MetricsHandler.WithTags(map[string]string{"worker_type": "none"}).Timer("toolround_approval_wait").Record(time.Minute)
	rec := httptest.NewRecorder()
	tel.Handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, name := range []string{"toolround_tool_calls_total", "toolround_rounds_total", "toolround_approval_wait_seconds"} {
		require.Regexp(t, `(?m)^# HELP `+name+` \S`, body, "%s has a HELP text", name)
	}
	require.NotContains(t, body, `="none"`)
	require.Contains(t, body, `toolround_tool_calls_total{status="ok",tool="calculate",workflow_type="ToolRound"} 1`)
	require.Contains(t, body, `toolround_approval_wait_seconds_bucket{le="3600"} 1`, "the approval buckets stay")
}
