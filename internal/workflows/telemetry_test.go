package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/activity"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// tracing is the worker's tracing interceptor (the SDK's, made replay-safe
// by the engine) with an in-memory exporter.
func tracing(t *testing.T) (interceptor.WorkerInterceptor, *tracetest.InMemoryExporter) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	ti, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("test")})
	require.NoError(t, err)
	return engine.ReplaySafeTracing(ti), spans
}

// sums reads the counters of a manual reader: name -> attribute set -> value.
func sums(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			s, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			out[m.Name] = map[string]int64{}
			for _, dp := range s.DataPoints {
				key := ""
				for _, kv := range dp.Attributes.ToSlice() {
					if k := string(kv.Key); k == "tool" || k == "status" || k == "outcome" || k == "decision" {
						key += k + "=" + kv.Value.AsString() + " "
					}
				}
				out[m.Name][key] += dp.Value
			}
		}
	}
	return out
}

// TestRoundSpansAndMetrics runs a round under the SDK's tracing interceptor
// and its OpenTelemetry metrics handler: the round has one RunWorkflow span
// carrying its outcome and approval decisions, and the workflow counts the
// round, each call by tool and status (a made-up name as "unknown") and the
// approvals.
func TestRoundSpansAndMetrics(t *testing.T) {
	ti, spans := tracing(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var s testsuite.WorkflowTestSuite
	s.SetLogger(testenv.QuietLogger())
	s.SetMetricsHandler(temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: mp.Meter("test"), UseMonotonicCounters: true}))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{ti}})
	reg := testtools.Registry(testtools.NewRecorder())
	wf := &workflows.RoundWorkflow{Catalog: workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute, LocalMaxTimeout: time.Minute})}
	acts := &activities.Activities{Registry: reg}
	env.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: names.WorkflowName})
	env.RegisterActivityWithOptions(acts.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	env.RegisterActivityWithOptions(acts.PublishRound, activity.RegisterOptions{Name: wire.ActivityPublishRound})
	env.RegisterActivityWithOptions(acts.StoreContents, activity.RegisterOptions{Name: wire.ActivityStoreContents})
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(names.QueryPending)
		require.NoError(t, err)
		var pending []round.Pending
		require.NoError(t, v.Get(&pending))
		require.Len(t, pending, 1)
		env.SignalWorkflow(names.SignalConfirm, round.Confirm{CallID: "e1", Approve: false, Reason: "no", ApprovalID: pending[0].ApprovalID})
	}, time.Minute)

	env.ExecuteWorkflow(names.WorkflowName, input(
		call("a1", "calculate", `{"expression":"1+2"}`),
		call("a2", "calculate", `{"expression":"2*3"}`),
		call("u1", "made_up_tool", `{}`),
		call("e1", "edit_file", `{"path":"x.txt","new_text":"x"}`)))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	var runs []sdktrace.ReadOnlySpan
	for _, sp := range spans.GetSpans().Snapshots() {
		if sp.Name() == "RunWorkflow:"+names.WorkflowName {
			runs = append(runs, sp)
		}
	}
	require.Len(t, runs, 1, "one span per round")
	attrs := map[string]string{}
	for _, kv := range runs[0].Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	require.Equal(t, "partial", attrs["toolround.outcome"])
	require.Equal(t, "4", attrs["toolround.calls"])
	require.Len(t, runs[0].Events(), 1)
	require.Equal(t, "approval decided", runs[0].Events()[0].Name)

	got := sums(t, reader)
	require.Equal(t, map[string]int64{"outcome=partial ": 1}, got["toolround_rounds"])
	require.Equal(t, map[string]int64{"status=ok tool=calculate ": 2, "status=unknown tool=unknown ": 1, "status=skipped tool=edit_file ": 1}, got["toolround_tool_calls"])
	require.Equal(t, map[string]int64{"tool=edit_file ": 1}, got["toolround_approvals_requested"])
	require.Equal(t, map[string]int64{"decision=denied tool=edit_file ": 1}, got["toolround_approvals_decided"])
}

// TestReplayEmitsNoSpans replays every recorded round under the worker's
// tracing interceptor with an in-memory exporter: a replay re-runs the
// workflow code, and nothing it does may be traced a second time. (The
// SDK's interceptor alone reports the RunWorkflow span again on replay;
// engine.ReplaySafeTracing is what makes this pass.)
func TestReplayEmitsNoSpans(t *testing.T) {
	for _, h := range loadHistories(t) {
		ti, spans := tracing(t)
		r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{ti}})
		require.NoError(t, err)
		r.RegisterWorkflowWithOptions((&workflows.RoundWorkflow{Catalog: &refusingCatalog{}}).Run, workflow.RegisterOptions{Name: names.WorkflowName})
		require.NoError(t, r.ReplayWorkflowHistoryWithOptions(testenv.QuietLogger(), h.history, worker.ReplayWorkflowHistoryOptions{
			OriginalExecution: workflow.Execution{ID: h.input.WorkflowID()},
		}), h.name)
		require.Empty(t, spans.GetSpans(), "%s: a replay emitted spans", h.name)
	}
}
