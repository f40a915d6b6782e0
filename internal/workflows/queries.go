package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// setQueryHandlers answers QueryPending and QueryProgress while the round
// runs and after it ended.
func (r *run) setQueryHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, names.QueryPending, func() ([]round.Pending, error) { return r.pendingList(), nil }); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, names.QueryProgress, func() (round.Progress, error) { return r.progress(), nil })
}

// pendingList is what the round waits for, in call order.
func (r *run) pendingList() []round.Pending {
	out := []round.Pending{}
	for i := range r.calls {
		if p := r.calls[i].pending; p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// progress is where the round and each of its calls stand.
func (r *run) progress() round.Progress {
	pr := round.Progress{Phase: r.phase, InFlight: r.inFlight, Peak: r.peak, Bound: r.snap.MaxConcurrent, Calls: make([]round.CallProgress, len(r.calls)),
		StartedBuildID: r.snap.BuildID}
	if rc, ok := r.cat.(*RegistryCatalog); ok {
		pr.BuildID = rc.Options.BuildID // the worker that answers
	}
	for i := range r.calls {
		c := &r.calls[i]
		cp := round.CallProgress{CallID: c.CallID, Tool: c.Tool, State: c.State.String()}
		switch {
		case c.Outcome != nil:
			cp.Status = c.Outcome.Status
		case c.State == CallDone:
			cp.Status = c.Status
		}
		if a := c.Approval; a != nil && a.Decision != round.DecisionNotNeeded {
			cp.Decision, cp.By = a.Decision, a.By
		}
		pr.Calls[i] = cp
	}
	return pr
}
