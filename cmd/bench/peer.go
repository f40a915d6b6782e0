package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The peer pattern is what a user would pick instead of a round: the way
// Temporal's AI integrations run a model's tool calls. Each call is one
// activity (or one local activity), all are scheduled at once, nothing is
// checked before or recorded after, and the workflow returns the calls'
// outputs. The bounded variant keeps at most Bound calls in flight, as pass
// 2 of a round does, so that a round's at-most-once calls are compared with
// the same packing.
const (
	PeerWorkflowName = "BenchPeer"
	PeerActivityName = "BenchPeerTool"
)

// PeerInput is one peer round: Calls calls, Bound in flight at most (0: all
// at once), as local activities when Local.
type PeerInput struct {
	Calls int  `json:"calls"`
	Bound int  `json:"bound,omitempty"`
	Local bool `json:"local,omitempty"`
}

// Peer kinds of a Case.
const (
	peerRegular = "regular"
	peerBounded = "bounded"
	peerLocal   = "local"
)

// peerInput is the input of a peer case on a setup whose rounds run at most
// bound calls at once.
func peerInput(c Case, bound int) PeerInput {
	in := PeerInput{Calls: c.Calls}
	switch c.Peer {
	case peerBounded:
		in.Bound = bound
	case peerLocal:
		in.Local = true
	}
	return in
}

// peerTool is every peer call's activity: the same work as bench_noop.
func peerTool(context.Context, string) (string, error) { return "ok", nil }

// peerTimeout is the bench tools' own timeout.
const peerTimeout = 10 * time.Second

func peerWorkflow(ctx workflow.Context, in PeerInput) ([]string, error) {
	if in.Calls < 0 || in.Bound < 0 {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("peer round: calls %d and bound %d must not be negative", in.Calls, in.Bound), "invalid_input", nil)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: peerTimeout})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: peerTimeout})
	out := make([]string, in.Calls)
	var firstErr error
	sel := workflow.NewSelector(ctx)
	inFlight := 0
	for i := range in.Calls {
		if in.Bound > 0 && inFlight >= in.Bound {
			sel.Select(ctx)
			inFlight--
		}
		args := fmt.Sprintf(`{"n":%d}`, i)
		var f workflow.Future
		if in.Local {
			f = workflow.ExecuteLocalActivity(ctx, PeerActivityName, args)
		} else {
			f = workflow.ExecuteActivity(ctx, PeerActivityName, args)
		}
		sel.AddFuture(f, func(f workflow.Future) {
			if err := f.Get(ctx, &out[i]); err != nil && firstErr == nil {
				firstErr = err
			}
		})
		inFlight++
	}
	for ; inFlight > 0; inFlight-- {
		sel.Select(ctx)
	}
	return out, firstErr
}
