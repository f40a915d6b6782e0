package tools

import (
	"context"

	"github.com/toolround/toolround/internal/seam"
)

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

// Checkpoint marks a named point inside a tool ("edit_file:before_write"):
// the crash tests kill the worker there (internal/seam); elsewhere it does
// nothing.
func Checkpoint(ctx context.Context, point string) {
	seam.Checkpoint(ctx, point)
}
