package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
)

// Placement (W4, W5). On a worker with WORKSPACE_PLACEMENT=host the
// snapshot carries PlacementSettings; a round of such a worker with a
// workspace call asks for changePlacement and, once, binds its session's
// workspace (the BindWorkspace activity: update-with-start on
// workspace/<session> with the worker's HOST_ID as the candidate). From
// then on every workspace call (ToolInfo.Workspace), the U3 checks and
// reconcilers included, is a regular activity on the bound host's queue,
// never a local one; the other calls run anywhere. A call waits for its
// host while HostAlive sees a poller of that queue within the host
// timeout; past it, a call that never started ends error
// workspace_unavailable, and one whose attempt started and was lost ends
// as any lost attempt does. Dedupe entries of workspace calls carry the
// binding's generation; one of another generation is never served.

// hostGone is a placed call that could not reach its host: it never
// started.
type hostGone struct{ why string }

func (e *hostGone) Error() string { return e.why }

// place binds the round's workspace, before its first workspace call.
func (r *run) place(ctx workflow.Context, calls []Unwrapped) {
	p := r.snap.Placement
	if p == nil {
		return
	}
	need := false
	for _, u := range calls {
		if u.Err == "" && r.snap.Tools[u.Name].Workspace {
			need = true
			break
		}
	}
	if !need || Version(ctx, changePlacement, 1) == workflow.DefaultVersion {
		return
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:             "bind the workspace of session " + r.scope.SessionID,
	})
	var b placement.Binding
	in := placement.BindInput{Session: r.scope.SessionID, Host: p.HostID, TaskQueue: p.TaskQueue}
	if err := workflow.ExecuteLocalActivity(lctx, placement.ActivityBindWorkspace, in).Get(ctx, &b); err != nil {
		r.bindErr = "the workspace of session " + r.scope.SessionID + " could not be bound to a host: " + text.RootMessage(err)
		b = placement.Binding{}
	}
	r.bound = &b
}

// placed reports whether a call of ti runs on the workspace's host.
func (r *run) placed(ti ToolInfo) bool {
	return r.bound != nil && ti.Workspace
}

// dropOtherGenerations removes from the run state the entries of
// workspace calls made under another binding generation (W5), so that
// none is served: the files they describe may be another host's.
func (r *run) dropOtherGenerations() {
	if r.bound == nil {
		return
	}
	for _, key := range SortedDedupeKeys(r.st.Dedupe) {
		e := r.st.Dedupe[key]
		if ti, ok := r.snap.Tools[e.Tool]; ok && ti.Workspace && e.Generation != r.bound.Generation {
			delete(r.st.Dedupe, key)
		}
	}
}

// generation is the binding's generation for pass 3's entries; 0 when the
// round is not placed.
func (r *run) generation() int {
	if r.bound == nil {
		return 0
	}
	return r.bound.Generation
}

// hostAlive asks HostAlive whether the bound host's queue has a poller
// seen within the host timeout; an answer from the last third of that
// timeout is taken again. A HostAlive that fails counts as alive: the
// schedule-to-start timeout then decides.
func (r *run) hostAlive(ctx workflow.Context) bool {
	p := r.snap.Placement
	now := workflow.Now(ctx)
	if !r.aliveAt.IsZero() && now.Sub(r.aliveAt) < p.HostTimeout/3 {
		return true
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
		Summary:             "is host " + r.bound.Host + " alive",
	})
	var out placement.HostAliveOutput
	err := workflow.ExecuteLocalActivity(lctx, placement.ActivityHostAlive,
		placement.HostAliveInput{TaskQueue: p.TaskQueue, Host: r.bound.Host, Timeout: p.HostTimeout}).Get(ctx, &out)
	if err != nil || out.Alive {
		if err == nil {
			r.aliveAt = workflow.Now(ctx)
		}
		return true
	}
	r.aliveAt = time.Time{}
	return false
}

// unavailable says why a placed call did not start.
func (r *run) unavailable() error {
	if r.bindErr != "" {
		return &hostGone{why: r.bindErr}
	}
	p := r.snap.Placement
	q := placement.HostQueue(p.TaskQueue, r.bound.Host)
	return &hostGone{why: fmt.Sprintf("the workspace's host %s is unavailable: no worker polled %s within %s, so the call did not start; "+
		"once the host is back it runs there, or `starter workspace move %s HOST` binds the session to a live host",
		r.bound.Host, q, p.HostTimeout, r.scope.SessionID)}
}

// onHost schedules activity name on the bound host's queue and waits for
// its result while the host lives: a schedule-to-start timeout with the
// host still polling schedules it again; with the host gone it fails with
// hostGone. T is the activity's result type.
func onHost[T any](r *run, ctx workflow.Context, opts workflow.ActivityOptions, name string, arg any) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	if r.bound.Host == "" {
		set.SetError(r.unavailable())
		return f
	}
	p := r.snap.Placement
	opts.TaskQueue = placement.HostQueue(p.TaskQueue, r.bound.Host)
	opts.ScheduleToStartTimeout = p.HostTimeout
	if opts.HeartbeatTimeout > p.HostTimeout {
		opts.HeartbeatTimeout = p.HostTimeout
	}
	id := opts.ActivityID
	// A host that polls but never starts the call (its slots taken for
	// longer than the call may run) is waited for as long as the call
	// may run, and no longer: each wait lasts the host timeout.
	wait := max(opts.StartToCloseTimeout, p.HostTimeout)
	tries := int(wait/p.HostTimeout) + 1
	workflow.Go(ctx, func(ctx workflow.Context) {
		for n := 0; ; n++ {
			if !r.hostAlive(ctx) {
				set.SetError(r.unavailable())
				return
			}
			o := opts
			if n > 0 && id != "" {
				o.ActivityID = fmt.Sprintf("%s/wait%d", id, n)
			}
			var out T
			err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), name, arg).Get(ctx, &out)
			var te *temporal.TimeoutError
			if err != nil && ctx.Err() == nil && errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
				r.aliveAt = time.Time{}
				if n+1 >= tries {
					set.SetError(&hostGone{why: fmt.Sprintf("the workspace's host %s polls %s but did not start the call within %s, so it did not run",
						r.bound.Host, opts.TaskQueue, wait)})
					return
				}
				continue
			}
			if err != nil {
				set.SetError(err)
			} else {
				set.SetValue(out)
			}
			return
		}
	})
	return f
}

// executeTool runs a call's ExecuteTool activity with opts: on the
// workspace's host when the round is placed and the tool acts there.
func (r *run) executeTool(ctx workflow.Context, ti ToolInfo, opts workflow.ActivityOptions, in wire.ExecuteInput) workflow.Future {
	if r.placed(ti) {
		return onHost[wire.ExecuteOutput](r, ctx, opts, wire.ActivityExecuteTool, in)
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), wire.ActivityExecuteTool, in)
}
