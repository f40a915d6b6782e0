package tools

import "context"

// Verdict is what a reconciler found out about a lost attempt (SPEC R).
type Verdict string

const (
	// VerdictApplied: the attempt's effect is in place; the call is ok.
	VerdictApplied Verdict = "applied"
	// VerdictAbsent: the effect is absent and the attempt is proven dead
	// (its operation lock is free), so running the call once more cannot
	// double it.
	VerdictAbsent Verdict = "absent"
	// VerdictUnknown: nothing can be proven; the outcome stays unknown.
	VerdictUnknown Verdict = "unknown"
)

// Reconciliation is a reconciler's answer.
type Reconciliation struct {
	Verdict Verdict
	// Content is the call's result when the effect was found, or why the
	// outcome stays unknown.
	Content string
	Touched []string
}

// Reconciler decides whether a lost attempt of req took effect. It runs on
// a later activity, possibly on another worker; it must not change what the
// attempt would have changed.
type Reconciler func(ctx context.Context, req Request) (Reconciliation, error)

type checkpointKey struct{}

// WithCheckpoint returns a context whose tools call fn at their named
// checkpoints ("edit_file:before_write"). The crash tests kill the worker
// there; production code sets none.
func WithCheckpoint(ctx context.Context, fn func(point string)) context.Context {
	return context.WithValue(ctx, checkpointKey{}, fn)
}

// Checkpoint marks a named point inside a tool for WithCheckpoint.
func Checkpoint(ctx context.Context, point string) {
	if fn, ok := ctx.Value(checkpointKey{}).(func(string)); ok && fn != nil {
		fn(point)
	}
}
