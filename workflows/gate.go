package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
)

// gate is step 3, the confirm gate (P1.6): it raises every confirmation of
// the round at once and waits for the decisions, which may come in any
// order (onConfirm), up to the confirm timeout, after which the calls still
// waiting count as denied.
func (r *run) gate(ctx workflow.Context) {
	now := workflow.Now(ctx)
	deadline := now.Add(r.snap.ConfirmTimeout)
	raised := 0
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallWaiting {
			continue
		}
		c.pending = &round.Pending{
			CallID: c.CallID, Tool: c.Tool, Kind: round.KindConfirm, Arguments: c.Args, Subject: c.Facts.Subject,
			Reason: c.ConfirmWhy, Since: now, Deadline: deadline,
		}
		r.record(r.scope.ConfirmationRequested(workflow.Now(ctx), c.CallID, c.Tool, c.Facts.Subject+" ("+c.ConfirmWhy+")"))
		r.metricApprovalRequested(ctx, c)
		raised++
	}
	if raised == 0 {
		return
	}
	r.phase = round.PhaseConfirm
	r.flush(ctx)
	defer r.flush(ctx) // the answers
	ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return r.waiting(round.KindConfirm) == 0 })
	if err == nil && ok {
		return
	}
	cancelled := err != nil
	for i := len(r.calls) - 1; i >= 0; i-- {
		c := &r.calls[i]
		if !c.waitsFor(round.KindConfirm) {
			continue
		}
		r.metricApprovalDecided(ctx, c, gateEnd(cancelled))
		c.pending = nil
		if cancelled {
			c.done(round.StatusCancelled, "the round was cancelled while the call waited for confirmation; it did not run")
		} else {
			Decide(c, false, "no answer within "+r.snap.ConfirmTimeout.String())
		}
	}
}

// waiting counts the calls that wait for a signal of that kind.
func (r *run) waiting(kind string) int {
	n := 0
	for i := range r.calls {
		if r.calls[i].waitsFor(kind) {
			n++
		}
	}
	return n
}

// onConfirm applies a decision. An approval that remembers a rule or allows
// the rest of the round may settle other calls that wait.
func (r *run) onConfirm(ctx workflow.Context, s round.Confirm) {
	i, known := r.index[s.CallID]
	if !known || !r.calls[i].waitsFor(round.KindConfirm) {
		why := "no call with this id in the round"
		if known {
			why = "the call is not waiting for confirmation"
		}
		r.ignore(ctx, round.SignalConfirm, s.CallID, why)
		return
	}
	c := &r.calls[i]
	detail := "denied"
	if s.Approve {
		detail = "approved"
		if s.Remember {
			pattern := s.Pattern
			if pattern == "" {
				pattern = c.Facts.Subject
			}
			r.st.AddRule(round.AllowRule{Tool: c.Tool, Pattern: pattern})
			detail += ", remembered " + c.Tool + " " + pattern
		}
		if s.AllowTurn {
			r.allowTurn = true
			detail += ", allowed for the rest of the round"
		}
	} else if s.Reason != "" {
		detail += ": " + s.Reason
	}
	r.decide(ctx, c, s.Approve, s.Reason, detail)
	if !s.Approve {
		return
	}
	for k := len(r.calls) - 1; k >= 0; k-- {
		q := &r.calls[k]
		if !q.waitsFor(round.KindConfirm) {
			continue
		}
		if r.allowTurn || (!q.Facts.Sensitive && allowed(r.st, q.Tool, q.Facts.Subject)) {
			r.decide(ctx, q, true, "", "approved by "+s.CallID)
		}
	}
}

// decide settles a call that waits at the gate and records the decision.
func (r *run) decide(ctx workflow.Context, c *Call, approve bool, reason, detail string) {
	r.metricApprovalDecided(ctx, c, decision(approve))
	c.pending = nil
	Decide(c, approve, reason)
	r.record(r.scope.ConfirmationAnswered(workflow.Now(ctx), c.CallID, c.Tool, detail))
}
