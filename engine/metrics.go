package engine

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/toolround/toolround/internal/workflows"
)

// ScopeName is the instrumentation scope of the worker's own metrics and
// spans.
const ScopeName = "github.com/toolround/toolround"

// Telemetry is one worker's metrics and traces: one OpenTelemetry
// MeterProvider, exposed for Prometheus at /metrics (METRICS_ADDR), and one
// TracerProvider, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Either is a no-op when it is
// not configured, so a worker without them pays nothing.
type Telemetry struct {
	Meter  metric.Meter
	Tracer trace.Tracer
	// MetricsHandler is the Temporal SDK's metrics handler over the same
	// MeterProvider (the SDK's own temporal_* metrics and workflow metrics).
	MetricsHandler client.MetricsHandler
	// ClientInterceptor and WorkerInterceptor are the SDK's tracing
	// interceptor, the worker's replay-safe (tracing.go); nil without traces.
	ClientInterceptor interceptor.ClientInterceptor
	WorkerInterceptor interceptor.WorkerInterceptor
	// Handler serves /metrics; nil without METRICS_ADDR.
	Handler http.Handler

	meters  *sdkmetric.MeterProvider
	tracers *sdktrace.TracerProvider
}

// TelemetryOptions say which parts of Telemetry are on.
type TelemetryOptions struct {
	// Metrics turns on the Prometheus exporter (METRICS_ADDR is set).
	Metrics bool
	// SpanExporter receives the spans. Default: OTLP over gRPC when the
	// standard OTEL_EXPORTER_OTLP_* variables name an endpoint, else no
	// traces at all.
	SpanExporter sdktrace.SpanExporter
	// SyncSpans exports each span when it ends (tests); default batches.
	SyncSpans bool
}

// NewTelemetry sets up the providers. Shutdown flushes and releases them.
func NewTelemetry(ctx context.Context, o TelemetryOptions) (*Telemetry, error) {
	t := &Telemetry{}
	res := resource.NewSchemaless(semconv.ServiceName(serviceName()))
	var mp metric.MeterProvider = metricnoop.NewMeterProvider()
	if o.Metrics {
		reg := prometheus.NewRegistry()
		// The default translation keeps the names the SPEC gives:
		// counters end in _total, histograms in seconds in _seconds.
		exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
		if err != nil {
			return nil, err
		}
		t.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res), sdkmetric.WithView(sdkView))
		mp = t.meters
		t.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	t.Meter = mp.Meter(ScopeName)
	t.MetricsHandler = client.MetricsNopHandler
	if o.Metrics {
		t.MetricsHandler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
			Meter: mp.Meter("temporal-sdk-go"), UseMonotonicCounters: true,
			OnError: func(error) {}, // a metric that cannot be made is dropped, never a panic
		})
	}

	exp := o.SpanExporter
	if exp == nil && otlpConfigured() {
		var err error
		if exp, err = otlptracegrpc.New(ctx); err != nil {
			return nil, err
		}
	}
	var tp trace.TracerProvider = tracenoop.NewTracerProvider()
	if exp != nil {
		export := sdktrace.WithBatcher(exp)
		if o.SyncSpans {
			export = sdktrace.WithSyncer(exp)
		}
		t.tracers = sdktrace.NewTracerProvider(export, sdktrace.WithResource(res))
		tp = t.tracers
		ti, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
			Tracer:            tp.Tracer("temporal-sdk-go"),
			TextMapPropagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		})
		if err != nil {
			return nil, err
		}
		t.ClientInterceptor, t.WorkerInterceptor = clientTracing{ti}, ReplaySafeTracing(ti)
	}
	t.Tracer = tp.Tracer(ScopeName)
	return t, nil
}

// Shutdown flushes the spans not yet exported and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tracers != nil {
		errs = append(errs, t.tracers.Shutdown(ctx))
	}
	if t.meters != nil {
		errs = append(errs, t.meters.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// The SDK's timers are histograms in seconds; OpenTelemetry's default
// buckets (0, 5, 10, 25 ... 10000) would put every task latency in the
// first. The approval wait, recorded through the same handler, keeps
// buckets from seconds to hours.
var (
	latencyBuckets  = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	approvalBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400}
)

// sdkView is the one view of the instruments made through the SDK's
// metrics handler (one view, since every view that matches adds a stream):
// histogram buckets as above, and, for the workflow's toolround_* metrics,
// the HELP text the handler cannot carry (workflows.MetricDescriptions) and
// no label the SDK fills with its placeholder "none" (activity_type and
// worker_type of workflow code).
func sdkView(i sdkmetric.Instrument) (sdkmetric.Stream, bool) {
	if i.Scope.Name != "temporal-sdk-go" {
		return sdkmetric.Stream{}, false
	}
	s := sdkmetric.Stream{Name: i.Name, Description: i.Description, Unit: i.Unit}
	ours := strings.HasPrefix(i.Name, "toolround_")
	if ours {
		if s.Description == "" {
			s.Description = workflows.MetricDescriptions[i.Name]
		}
		s.AttributeFilter = func(kv attribute.KeyValue) bool { return kv.Value.String() != placeholderLabel }
	}
	if i.Kind == sdkmetric.InstrumentKindHistogram {
		b := latencyBuckets
		if i.Name == "toolround_approval_wait" {
			b = approvalBuckets
		}
		s.Aggregation = sdkmetric.AggregationExplicitBucketHistogram{Boundaries: b}
	} else if !ours {
		return sdkmetric.Stream{}, false
	}
	return s, true
}

// placeholderLabel is the value the SDK gives a tag it has none for.
const placeholderLabel = "none"

func otlpConfigured() bool {
	return strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
}

func serviceName() string {
	if v := strings.TrimSpace(os.Getenv("OTEL_SERVICE_NAME")); v != "" {
		return v
	}
	return "toolround-worker"
}

// observeRedis counts the Redis operations the worker skipped (K5); the
// cache client keeps the count.
func (e *Engine) observeRedis(m metric.Meter) error {
	if e.Redis == nil {
		return nil
	}
	_, err := m.Int64ObservableCounter("toolround_redis_skipped",
		metric.WithDescription("Redis operations skipped because Redis failed or was slow (K5)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(e.Redis.Skipped())
			return nil
		}))
	return err
}
