package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// The round's events are built by round.Scope (one place for every event id)
// and recorded here in the order they happen; flush and publish hand them
// to the session's event stream as the round goes, and pass 3 returns them
// with the result.

// record adds an event to the round's.
func (r *run) record(e round.Event) round.Event {
	r.events = append(r.events, e)
	return e
}

// flush publishes the events recorded since the last flush.
func (r *run) flush(ctx workflow.Context) {
	if r.published == len(r.events) {
		return
	}
	events := r.events[r.published:]
	r.published = len(r.events)
	r.publish(ctx, wire.PublishInput{Events: events})
}

// publish hands events (and the result-cache writes and history of pass 3)
// to the PublishRound local activity. It never fails the round (K5).
func (r *run) publish(ctx workflow.Context, in wire.PublishInput) {
	ctx, _ = workflow.NewDisconnectedContext(ctx) // a cancelled round still publishes
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2, InitialInterval: 100 * time.Millisecond},
		Summary:             "publish events",
	})
	in.SessionID, in.RunID, in.Round, in.WorkflowID = r.scope.SessionID, r.scope.RunID, r.scope.Round, r.scope.WorkflowID
	events := in.Events[:0:0]
	for _, e := range in.Events {
		if e.Type == round.EventCallStarted && r.calls[r.index[e.CallID]].selfPublished {
			continue // the activity publishes it, with the worker's clock
		}
		events = append(events, e)
	}
	in.Events = events
	if err := workflow.ExecuteLocalActivity(lctx, wire.ActivityPublishRound, in).Get(lctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("publishing the round's events failed; the round goes on", "error", err)
	}
}

// publishCommitted is step 7 of a round: pass 3's events not yet
// published, its result-cache writes and the session history go to the
// PublishRound local activity, with the call_finished events only the
// workflow knows (changeCallFinished); then the round and every call are
// done.
func (r *run) publishCommitted(ctx workflow.Context, out *CommitOutput) {
	pub := wire.PublishInput{Events: out.Result.Events[r.published:], CacheWrites: out.CacheWrites, History: out.Result.History}
	if Version(ctx, changeCallFinished, 1) == 1 {
		pub.Finished = r.finished(workflow.Now(ctx), out.Result.Results)
	}
	crashpoint.Step(ctx, "round.pass3.after")
	r.publish(ctx, pub)
	crashpoint.Step(ctx, "round.publish.after")
	r.phase = round.PhaseDone
	for i := range r.calls {
		r.calls[i].State = CallDone
	}
}

// finished is the call_finished event of each call whose end only the
// workflow knows (U7): settled in pass 1, repeated, answered by a signal,
// lost, reconciled or cancelled. The others' attempts published theirs. They
// go to the stream only, not into the round's events.
func (r *run) finished(now time.Time, results []round.CallResult) []round.Event {
	var out []round.Event
	for i := range r.calls {
		c := &r.calls[i]
		if c.selfFinished {
			continue
		}
		var d time.Duration
		if c.Outcome != nil {
			d = time.Duration(c.Outcome.DurationMS) * time.Millisecond
		}
		res := results[i]
		out = append(out, r.scope.CallFinished(now, res.CallID, res.Tool, res.Status, res.Content, d))
	}
	return out
}
