package workflows

// This file holds what the round does only to replay executions recorded
// before changeApprovals (versions.go): their P1.6, confirm gate and
// decisions, with unsigned rules, one deadline for the round and no
// approval ids, decision records, extend or confirm update. No round
// started on newer code reaches it: each records changeApprovals, or a
// baseline (changeBaseline1, changeBaseline2) that takes it at version 1.
//
// It can be deleted once no execution that recorded none of these three
// markers can still run or be replayed: no worker from before
// changeApprovals runs, and the namespace's retention period has passed
// since the last round such a worker started was closed (within retention
// a closed execution can still be queried or reset, which replays it). The
// recorded rounds in testdata/ without those markers go with it:
// allow_turn, cancel_confirm, cancel_running, confirm_timeout, dedupe_off,
// fanout, inbox, pass1, repeats, result_budget, retries, signals and
// unknown_outcome. Then pickApprovals still asks for changeApprovals (the
// histories recorded between it and the baselines hold its marker) but
// always takes liveApprovals, and Preflight leaves P1.6 to asks.
//
// The other changes of versions.go keep nothing here: a round recorded
// before one of them does what the newer code does without it, at the one
// if that asks for it.

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// legacyApprovals are the approvals of rounds recorded before
// changeApprovals: pass 1 alone decided who asks, decisions came by signal
// only, and pass 3 found nothing to sign or record.
type legacyApprovals struct{ r *run }

func (legacyApprovals) ask(workflow.Context) {}

func (legacyApprovals) setUpdateHandlers(workflow.Context) error { return nil }

func (legacyApprovals) extends() bool { return false }

func (a legacyApprovals) onConfirm(ctx workflow.Context, s round.Confirm) {
	a.r.legacyOnConfirm(ctx, s)
}

func (a legacyApprovals) gate(ctx workflow.Context) { a.r.legacyGate(ctx) }

func (legacyApprovals) settle(workflow.Context) {}

// legacyGate is the confirm gate (P1.6) of rounds recorded before
// changeApprovals: it raises every confirmation of the round at once and
// waits for the decisions, which may come in any order (legacyOnConfirm), up
// to the confirm timeout, after which the calls still waiting count as
// denied.
func (r *run) legacyGate(ctx workflow.Context) {
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

// legacyOnConfirm applies a decision. An approval that remembers a rule or
// allows the rest of the round may settle other calls that wait.
func (r *run) legacyOnConfirm(ctx workflow.Context, s round.Confirm) {
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
	r.legacyDecide(ctx, c, s.Approve, s.Reason, detail)
	if !s.Approve {
		return
	}
	for k := len(r.calls) - 1; k >= 0; k-- {
		q := &r.calls[k]
		if !q.waitsFor(round.KindConfirm) {
			continue
		}
		if r.allowTurn || (!q.Facts.Sensitive && legacyAllowed(r.st, q.Tool, q.Facts.Subject)) {
			r.legacyDecide(ctx, q, true, "", "approved by "+s.CallID)
		}
	}
}

// legacyDecide settles a call that waits at legacyGate and records the
// decision.
func (r *run) legacyDecide(ctx workflow.Context, c *Call, approve bool, reason, detail string) {
	r.metricApprovalDecided(ctx, c, decision(approve))
	c.pending = nil
	Decide(c, approve, reason)
	r.record(r.scope.ConfirmationAnswered(workflow.Now(ctx), c.CallID, c.Tool, detail))
}

// legacyNeedsConfirm applies C4 as rounds recorded before changeApprovals
// did, and returns why a call must be confirmed, or "". Preflight asks it
// for every round; in the others asks decides again (approval.Needs).
func legacyNeedsConfirm(ti ToolInfo, f CallFacts, autoApprove bool, st *round.RunState, name string) string {
	switch {
	case f.Sensitive:
		return "it reads a file that may hold keys or credentials"
	case ti.ConfirmNever || ti.Client:
		return ""
	case f.Effect == tools.ReadOnly:
		return ""
	case autoApprove:
		return ""
	case legacyAllowed(st, name, f.Subject):
		return ""
	case f.Effect == tools.Idempotent:
		return "it changes something"
	default:
		return "it has side effects"
	}
}

// legacyAllowed reports whether a rule remembered in the run state approves
// the call (P1.6), unsigned, as rounds recorded before changeApprovals
// remembered them.
func legacyAllowed(st *round.RunState, tool, subject string) bool {
	for _, r := range st.Allow {
		//lint:ignore SA1019 rounds recorded before signed rules replay with the rules they had
		if (tools.AllowRule{Tool: r.Tool, Pattern: r.Pattern}).Matches(tool, subject) {
			return true
		}
	}
	return false
}
