// Package seam holds the hooks of the crash tests, kept out of the public
// API of engine and tools: a context that makes tools call a function at
// their named checkpoints, and a context that makes a worker register a
// wrapper of one of the round's activities instead of the activity itself.
// Production code sets neither; tools.Checkpoint and the engine's worker
// read them.
package seam

import (
	"context"
	"fmt"
)

type checkpointKey struct{}

// WithCheckpoint returns a context whose tools call fn at their named
// checkpoints ("edit_file:before_write"). The crash tests kill the worker
// there.
func WithCheckpoint(ctx context.Context, fn func(point string)) context.Context {
	return context.WithValue(ctx, checkpointKey{}, fn)
}

// Checkpoint calls the function of WithCheckpoint, if ctx carries one.
func Checkpoint(ctx context.Context, point string) {
	if fn, ok := ctx.Value(checkpointKey{}).(func(string)); ok && fn != nil {
		fn(point)
	}
}

// Swap replaces the round's activity Name with what Wrap makes of the
// engine's own activity of that name.
type Swap struct {
	Name string
	Wrap func(orig any) (any, error)
}

type swapsKey struct{}

// WithActivity returns a context with which a worker started on it
// (engine.StartWorker, engine.RunWorker) registers wrap(orig) under the
// round's activity name instead of orig, the engine's own activity: the
// test worker's crash hooks.
func WithActivity[F any](ctx context.Context, name string, wrap func(orig F) F) context.Context {
	s := Swap{Name: name, Wrap: func(orig any) (any, error) {
		f, ok := orig.(F)
		if !ok {
			var want F
			return nil, fmt.Errorf("seam: activity %q is a %T, not a %T", name, orig, want)
		}
		return wrap(f), nil
	}}
	prev := Swaps(ctx)
	return context.WithValue(ctx, swapsKey{}, append(prev[:len(prev):len(prev)], s))
}

// Swaps are the swaps of WithActivity that ctx carries, oldest first.
func Swaps(ctx context.Context) []Swap {
	s, _ := ctx.Value(swapsKey{}).([]Swap)
	return s
}
