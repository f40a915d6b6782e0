package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// TestCallLogsSpansAndDuration: every log line about a call carries the
// workflow id, call id and tool (never the arguments, which may hold a
// secret); each attempt has a span with its tool, call id, attempt and
// status; its duration is recorded by tool, and a tool the worker does not
// know is labelled "unknown".
func TestCallLogsSpansAndDuration(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "boom", SideEffect: tools.ReadOnly,
		Handler: func(context.Context, tools.Request) (tools.Result, error) { panic("kaboom") }})
	var logs bytes.Buffer
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	m, err := NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	require.NoError(t, err)
	a := &Activities{Registry: reg, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Tracer: tp.Tracer("test"), Metrics: m}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	const secret = "hunter2-secret-value"
	for _, in := range []wire.ExecuteInput{
		{CallID: "c1", Tool: "boom", Args: `{"token":"` + secret + `"}`, WorkflowID: "wf-1"},
		{CallID: "c2", Tool: "made_up", Args: `{}`, WorkflowID: "wf-1"},
	} {
		v, err := env.ExecuteActivity(wire.ActivityExecuteTool, in)
		require.NoError(t, err)
		var out wire.ExecuteOutput
		require.NoError(t, v.Get(&out))
		require.True(t, out.IsError)
	}

	require.NotContains(t, logs.String(), secret)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 4, logs.String())
	for i, want := range []struct{ call, tool, msg string }{
		{"c1", "boom", "tool panicked"}, {"c1", "boom", "call finished"},
		{"c2", "unknown", "tool is not registered on this worker"}, {"c2", "unknown", "call finished"},
	} {
		var line map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &line), lines[i])
		require.Equal(t, want.msg, line["msg"])
		require.Equal(t, "wf-1", line["workflow_id"])
		require.Equal(t, want.call, line["call_id"])
		require.Equal(t, want.tool, line["tool"])
		if want.msg == "call finished" {
			require.Equal(t, "INFO", line["level"], "one INFO line per call, at its end")
			require.Equal(t, "error", line["status"])
			require.Contains(t, line, "duration_ms")
		}
	}

	got := spans.GetSpans()
	require.Len(t, got, 2)
	require.Equal(t, "tool boom", got[0].Name)
	attrs := map[string]string{}
	for _, kv := range got[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	require.Equal(t, map[string]string{"toolround.tool": "boom", "toolround.call_id": "c1", "toolround.workflow_id": "wf-1",
		"toolround.attempt": "1", "toolround.local": "false", "toolround.status": "error"}, attrs)
	require.Equal(t, "tool unknown", got[1].Name)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			require.Equal(t, "toolround_tool_duration", mt.Name)
			for _, dp := range mt.Data.(metricdata.Histogram[float64]).DataPoints {
				tool, _ := dp.Attributes.Value("tool")
				counts[tool.AsString()] += dp.Count
			}
		}
	}
	require.Equal(t, map[string]uint64{"boom": 1, "unknown": 1}, counts)
}
