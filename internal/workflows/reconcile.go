package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// reconcilable reports whether a lost attempt of c can be reconciled.
func reconcilable(ti ToolInfo, c *Call) bool {
	return ti.Reconcile && c.Facts.Effect == tools.AtMostOnce
}

// unreconciled is a lost attempt that a reconciliation could not settle;
// finish reports it as unknown_outcome with why.
type unreconciled struct {
	err error
	why string
}

func (e *unreconciled) Error() string { return e.err.Error() + " (" + e.why + ")" }
func (e *unreconciled) Unwrap() error { return e.err }

// lostAgain is a call whose first attempt was lost, whose effect a
// reconciliation proved absent (absent says how), and whose run once more
// was lost as well. It is not reconciled again: at most one more run.
type lostAgain struct {
	first, second error
	absent        string
}

func (e *lostAgain) Error() string { return e.second.Error() }
func (e *lostAgain) Unwrap() error { return e.second }

// startReconcilable runs the call, and when its attempt is lost (a timeout,
// a dead worker), asks the tool's reconciler what became of it: its effect
// found is the call's result; its effect proven absent with the attempt
// proven dead runs the call once more; anything else stays a lost attempt.
func (r *run) startReconcilable(ctx workflow.Context, c *Call, ti ToolInfo, in wire.ExecuteInput) workflow.Future {
	first := r.executeTool(ctx, ti, activityOptions(ti, c, r.snap), in)
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var out wire.ExecuteOutput
		err := first.Get(ctx, &out)
		var gone *hostGone
		if err == nil || temporal.IsCanceledError(err) || ctx.Err() != nil || errors.As(err, &gone) {
			set.Set(out, err)
			return
		}
		var rec wire.ReconcileOutput
		opts := workflow.ActivityOptions{
			ActivityID:          c.CallID + "/reconcile",
			StartToCloseTimeout: 30 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
			Summary:             "reconcile " + c.Tool + " " + c.CallID,
		}
		var rf workflow.Future
		if r.placed(ti) { // the reconciler looks at the workspace's host (W4)
			rf = onHost[wire.ReconcileOutput](r, ctx, opts, wire.ActivityReconcile, wire.ReconcileInput{Call: in})
		} else {
			rf = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), wire.ActivityReconcile, wire.ReconcileInput{Call: in})
		}
		if rerr := rf.Get(ctx, &rec); rerr != nil {
			set.Set(nil, &unreconciled{err: err, why: text.RootMessage(rerr)})
			return
		}
		switch rec.Verdict {
		case wire.VerdictApplied:
			set.Set(wire.ExecuteOutput{Content: rec.Content, Touched: rec.Touched, Attempt: 1, Reconciled: true}, nil)
		case wire.VerdictAbsent:
			again := in
			again.Generation = 1
			o := activityOptions(ti, c, r.snap)
			o.ActivityID = c.CallID + "/again"
			var out2 wire.ExecuteOutput
			err2 := r.executeTool(ctx, ti, o, again).Get(ctx, &out2)
			out2.Attempt = 2
			if err2 != nil && !temporal.IsCanceledError(err2) && ctx.Err() == nil &&
				Version(ctx, changeLostAgain, 1) == 1 {
				set.Set(nil, &lostAgain{first: err, second: err2, absent: rec.Content})
				return
			}
			set.Set(out2, err2)
		default:
			set.Set(nil, &unreconciled{err: err, why: rec.Content})
		}
	})
	return f
}
