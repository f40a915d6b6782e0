package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// BenchmarkRoundTelemetry is what metrics and traces cost the worker per
// round, without a server's noise: a round of 10 no-op calls (local
// activities) and one of 10 at-most-once calls (regular activities) in the
// SDK's test environment, with telemetry off and on (the worker's own
// setup: the Prometheus exporter, the SDK's metrics handler, the replay-safe
// tracing interceptor and per-call spans into a batching span processor
// whose exporter discards them). The difference between off and on is the
// cost; `make bench` with BENCH_TELEMETRY=1 measures the same against a
// real server.
//
//	go test ./bench -run '^$' -bench RoundTelemetry -benchtime 200x
func BenchmarkRoundTelemetry(b *testing.B) {
	for _, tool := range []string{ToolNoop, ToolWrite} {
		for _, on := range []bool{false, true} {
			name := fmt.Sprintf("%s10/telemetry=%t", tool, on)
			b.Run(name, func(b *testing.B) { benchRound(b, tool, on) })
		}
	}
}

func benchRound(b *testing.B, tool string, on bool) {
	ctx := context.Background()
	opts := engine.TelemetryOptions{}
	if on {
		opts = engine.TelemetryOptions{Metrics: true, SpanExporter: tracetest.NewNoopExporter()}
	}
	tel, err := engine.NewTelemetry(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(ctx) }()
	reg := tools.NewRegistry()
	for _, d := range benchTools() {
		reg.MustRegister(d)
	}
	metrics, err := activities.NewMetrics(tel.Meter)
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	acts := &activities.Activities{Registry: reg, Logger: quiet, Metrics: metrics, Tracer: tel.Tracer}
	wf := &workflows.RoundWorkflow{Catalog: workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute, LocalMaxTimeout: 30 * time.Second})}
	calls := make([]round.ToolCall, 10)
	for k := range calls {
		calls[k] = round.ToolCall{ID: fmt.Sprintf("call_%d", k), Type: "function", Function: round.FunctionCall{Name: tool, Arguments: round.Arguments(fmt.Sprintf(`{"n":%d}`, k))}}
	}
	in := round.Input{SessionID: "bench", RunID: "r", Round: 1, Provider: tools.ProviderClaudeCode, AutoApprove: true,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		var s testsuite.WorkflowTestSuite
		s.SetLogger(tlog.NewStructuredLogger(quiet))
		s.SetMetricsHandler(tel.MetricsHandler)
		env := s.NewTestWorkflowEnvironment()
		if tel.WorkerInterceptor != nil {
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{tel.WorkerInterceptor}})
		}
		env.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: names.WorkflowName})
		env.RegisterActivityWithOptions(acts.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
		env.RegisterActivityWithOptions(acts.PublishRound, activity.RegisterOptions{Name: wire.ActivityPublishRound})
		env.RegisterActivityWithOptions(acts.StoreContents, activity.RegisterOptions{Name: wire.ActivityStoreContents})
		in.Round = i + 1
		env.ExecuteWorkflow(names.WorkflowName, in)
		if err := env.GetWorkflowError(); err != nil {
			b.Fatal(err)
		}
	}
}
