package main

import (
	"context"
	"net"
	"sync/atomic"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// OTLPSinkEndpoint is the value of OTEL_EXPORTER_OTLP_ENDPOINT in a setup
// (-compare) that asks for the benchmark's own OTLP receiver: a gRPC trace
// service on a free port that counts the spans it receives and keeps
// nothing, so that a setup with tracing pays for making, batching and
// sending its spans, as it would with a collector, without one.
// `make bench` with BENCH_TELEMETRY=1 adds such a setup:
//
//	telemetry:METRICS_ADDR=127.0.0.1:0,OTEL_EXPORTER_OTLP_ENDPOINT=sink
const OTLPSinkEndpoint = "sink"

type otlpSink struct {
	coltrace.UnimplementedTraceServiceServer
	srv   *grpc.Server
	addr  string
	spans atomic.Int64
}

func (s *otlpSink) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			s.spans.Add(int64(len(ss.GetSpans())))
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{srv: grpc.NewServer(), addr: ln.Addr().String()}
	coltrace.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// withOTLPSink points a setup that asks for the sink at a running one.
func (b *bench) withOTLPSink(spec *SetupSpec) error {
	for i, kv := range spec.Env {
		if kv != "OTEL_EXPORTER_OTLP_ENDPOINT="+OTLPSinkEndpoint {
			continue
		}
		if b.sink == nil {
			s, err := startOTLPSink()
			if err != nil {
				return err
			}
			b.sink = s
		}
		spec.Env[i] = "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + b.sink.addr
		spec.Env = append(spec.Env, "OTEL_EXPORTER_OTLP_INSECURE=true")
		return nil
	}
	return nil
}

// stopSink stops the receiver and says how many spans it received.
func (b *bench) stopSink() {
	if b.sink == nil {
		return
	}
	b.sink.srv.Stop()
	b.logf("the OTLP sink received %d spans", b.sink.spans.Load())
}
