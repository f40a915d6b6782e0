package activities

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// UnknownTool is the tool label of a call whose tool the worker does not
// know, so that names a model made up never become label values.
const UnknownTool = "unknown"

// Metrics are the activity side of section M: how long each tool attempt
// took. Calls and their statuses are counted by the workflow, once per call
// with its final status.
type Metrics struct {
	duration metric.Float64Histogram
}

// NewMetrics makes the instruments on m.
func NewMetrics(m metric.Meter) (*Metrics, error) {
	d, err := m.Float64Histogram("toolround_tool_duration",
		metric.WithUnit("s"),
		metric.WithDescription("How long one attempt of a tool call ran on the worker, by tool."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
	if err != nil {
		return nil, err
	}
	return &Metrics{duration: d}, nil
}

// callTrace is one attempt's span, metric and log attributes.
type callTrace struct {
	a     *Activities
	ctx   context.Context
	span  trace.Span
	tool  string // the label: a registered name or UnknownTool
	start time.Time
	log   *slog.Logger
}

// beginCall starts the span of one attempt (under the SDK interceptor's
// RunActivity span when tracing is on) and the call's logger, which carries
// the workflow id, call id and tool on every line.
func (a *Activities) beginCall(ctx context.Context, in wire.ExecuteInput, known bool, attempt int) (context.Context, *callTrace) {
	tool := in.Tool
	if !known {
		tool = UnknownTool
	}
	ct := &callTrace{a: a, tool: tool, start: time.Now(),
		log: a.logger().With("workflow_id", in.WorkflowID, "call_id", in.CallID, "tool", tool, "attempt", attempt)}
	if a.Tracer != nil {
		ctx, ct.span = a.Tracer.Start(ctx, "tool "+tool, trace.WithAttributes(
			attribute.String("toolround.tool", tool),
			attribute.String("toolround.call_id", in.CallID),
			attribute.String("toolround.workflow_id", in.WorkflowID),
			attribute.Int("toolround.attempt", attempt),
			attribute.Bool("toolround.local", activity.GetInfo(ctx).IsLocalActivity),
		))
	}
	ct.ctx = ctx
	return ctx, ct
}

// end records the attempt's duration and ends its span with the status the
// attempt reported: ok, error (the tool's own failure), retry (a transient
// failure Temporal retries) or cancelled.
func (ct *callTrace) end(status string) time.Duration {
	d := time.Since(ct.start)
	if m := ct.a.Metrics; m != nil {
		m.duration.Record(context.Background(), d.Seconds(), metric.WithAttributes(attribute.String("tool", ct.tool)))
	}
	if ct.span != nil {
		ct.span.SetAttributes(attribute.String("toolround.status", status))
		if status != string(round.StatusOK) {
			ct.span.SetStatus(codes.Error, status)
		}
		ct.span.End()
	}
	ct.log.Debug("tool call attempt finished", "status", status, "duration_ms", d.Milliseconds())
	return d
}
