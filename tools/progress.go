package tools

import "context"

type progressKey struct{}

// WithProgress returns a context whose ReportProgress calls fn. The engine
// sets it so that long tools can record a heartbeat with details.
func WithProgress(ctx context.Context, fn func(details string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress tells the engine that a long call is alive, with a short
// description of where it is (lines of output so far, bytes downloaded). The
// engine heartbeats on its own as well; this only adds details.
func ReportProgress(ctx context.Context, details string) {
	if fn, ok := ctx.Value(progressKey{}).(func(string)); ok && fn != nil {
		fn(details)
	}
}
