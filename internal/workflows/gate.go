package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// approvals is how a round asks people (T1-T5): the end of pass 1, the
// confirm update and the extend signal, the confirm gate, and the decision
// records at the start of pass 3. Run picks it once (pickApprovals): rounds
// recorded before changeApprovals replay with legacyApprovals (legacy.go).
type approvals interface {
	// ask ends pass 1: P1.7, then who must decide, over the rules that
	// verified.
	ask(ctx workflow.Context)
	// setUpdateHandlers registers the confirm update.
	setUpdateHandlers(ctx workflow.Context) error
	// extends reports whether the round takes the extend signal.
	extends() bool
	// onConfirm applies a decision that came by signal.
	onConfirm(ctx workflow.Context, s round.Confirm)
	// gate is step 3.
	gate(ctx workflow.Context)
	// settle starts pass 3: the remembered rules are signed and every call
	// has a decision record.
	settle(ctx workflow.Context)
}

// pickApprovals is the one place where the round asks which approvals it
// recorded.
func (r *run) pickApprovals(ctx workflow.Context) approvals {
	if Version(ctx, changeApprovals, 1) >= 1 {
		return liveApprovals{r}
	}
	return legacyApprovals{r}
}

// liveApprovals are the approvals of every round that recorded
// changeApprovals or a baseline that takes it.
type liveApprovals struct{ r *run }

func (a liveApprovals) ask(ctx workflow.Context) {
	a.r.verifyRules(ctx)
	a.r.secretsAsk = a.r.sendsToolSecrets(ctx)
	a.r.asks(workflow.Now(ctx))
}

func (a liveApprovals) setUpdateHandlers(ctx workflow.Context) error {
	return a.r.setUpdateHandlers(ctx)
}

func (liveApprovals) extends() bool { return true }

func (a liveApprovals) onConfirm(ctx workflow.Context, s round.Confirm) {
	a.r.onConfirm(ctx, s, "signal")
}

func (a liveApprovals) gate(ctx workflow.Context) { a.r.gate(ctx) }

func (a liveApprovals) settle(ctx workflow.Context) {
	a.r.signRemembered(ctx)
	a.r.recordNotNeeded(workflow.Now(ctx))
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

// waitingDecisions counts the calls that wait for a person's decision.
func (r *run) waitingDecisions() int {
	n := 0
	for i := range r.calls {
		if r.calls[i].waitsForDecision() {
			n++
		}
	}
	return n
}

// maxWait bounds how long a call may wait for a decision, extensions
// included (T3).
const maxWait = 7 * 24 * time.Hour

// gate is step 3, the confirm gate (T1-T3): every call
// that asks is raised at once with its approval_id and its own deadline;
// the gate waits until each is decided or its deadline has passed, which
// gives it status expired. Reminders go out at half and at 90% of each
// wait; an extension moves the deadline and the reminders.
func (r *run) gate(ctx workflow.Context) {
	now := workflow.Now(ctx)
	raised := 0
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallWaiting {
			continue
		}
		c.deadline = now.Add(r.snap.ConfirmTimeout)
		c.pending = &round.Pending{
			CallID: c.CallID, Tool: c.Tool, Kind: round.KindConfirm, Arguments: c.Args, Subject: c.Facts.Subject,
			Queue: r.queueOf(c.Tool), Reason: c.ConfirmWhy, Reasons: c.Reasons, ApprovalID: c.ApprovalID, Since: now, Deadline: c.deadline,
			AlwaysAsks: c.Always,
		}
		if r.snap.Features.RunLimits {
			if len(c.Limits) > 0 {
				c.pending.Kind, c.pending.Limits = round.KindLimit, r.limitCounts(now)
			}
			c.Waits++
			c.pending.WaitID = approval.WaitID(c.ApprovalID, c.pending.Kind, c.Waits)
		}
		r.notifyWait(c, c.pending, notify.TypeWaiting, 0, c.ConfirmWhy)
		r.record(r.scope.ConfirmationRequested(now, c.CallID, c.Tool, c.Facts.Subject+" ("+c.ConfirmWhy+")"))
		r.metricApprovalRequested(ctx, c)
		raised++
	}
	if raised == 0 {
		return
	}
	r.phase = round.PhaseConfirm
	r.flush(ctx)
	defer r.flush(ctx) // the answers
	// Each decision is published as it lands while other calls still wait,
	// so that a page open on the session shows it; rounds recorded before
	// published them all when the gate closed.
	live := Version(ctx, changeLiveDecisions, 1) >= 1
	for {
		now = workflow.Now(ctx)
		r.expire(ctx, now)
		if r.remind(now) || live && r.waiting(round.KindConfirm) > 0 {
			r.flush(ctx)
		}
		next, waiting := r.nextGateTime()
		if !waiting {
			return
		}
		tick := r.gateTick
		_, err := workflow.AwaitWithTimeout(ctx, next.Sub(now), func() bool { return r.gateTick != tick || r.waitingDecisions() == 0 })
		if err != nil {
			r.cancelWaiting(ctx)
			return
		}
	}
}

// cancelWaiting settles the calls that still wait when the round is
// cancelled.
func (r *run) cancelWaiting(ctx workflow.Context) {
	for i := len(r.calls) - 1; i >= 0; i-- {
		c := &r.calls[i]
		if !c.waitsForDecision() {
			continue
		}
		r.metricApprovalDecided(ctx, c, gateEnd(true))
		c.pending = nil
		c.Approval = &round.Approval{Decision: round.DecisionNotNeeded, At: workflow.Now(ctx), Reason: "the round was cancelled before a decision"}
		c.done(round.StatusCancelled, "the round was cancelled while the call waited for confirmation; it did not run")
	}
}

// expire settles the waiting calls whose deadline has passed (T3).
func (r *run) expire(ctx workflow.Context, now time.Time) {
	for i := range r.calls {
		c := &r.calls[i]
		if !c.waitsForDecision() || now.Before(c.deadline) {
			continue
		}
		waited := c.deadline.Sub(c.pending.Since)
		r.metricApprovalDecided(ctx, c, gateEnd(false))
		r.notifyWait(c, c.pending, notify.TypeExpired, 0, "no decision within "+waited.String())
		c.pending = nil
		c.Approval = &round.Approval{Decision: round.DecisionExpired, At: now, Reason: "no decision within " + waited.String(), Limits: c.Limits}
		c.done(round.StatusExpired, ExpiredContent(waited))
		r.record(r.scope.ConfirmationAnswered(now, c.CallID, c.Tool, "expired: no decision within "+waited.String()))
	}
}

// ExpiredContent is the result of a call whose wait for a decision ended
// without one (T3).
func ExpiredContent(waited time.Duration) string {
	return "Not run: no decision arrived within " + waited.String() + ", so the call expired; it did not run."
}

// reminderPoints are the times of a wait's reminders: half and 90% of it.
func reminderPoints(since, deadline time.Time) [2]time.Time {
	wait := deadline.Sub(since)
	return [2]time.Time{since.Add(wait / 2), since.Add(wait / 10 * 9)}
}

// remindersDue counts the reminder points of a wait that have passed.
func remindersDue(since, deadline, now time.Time) int {
	n := 0
	for _, p := range reminderPoints(since, deadline) {
		if !now.Before(p) {
			n++
		}
	}
	return n
}

// remind records an approval_reminder for each waiting call that reached
// its next reminder point; it reports whether it recorded any.
func (r *run) remind(now time.Time) bool {
	sent := false
	for i := range r.calls {
		c := &r.calls[i]
		if !c.waitsForDecision() {
			continue
		}
		due := remindersDue(c.pending.Since, c.deadline, now)
		if due <= c.reminded {
			continue
		}
		c.reminded = due
		c.notedReminders++
		r.notifyWait(c, c.pending, notify.TypeReminder, c.notedReminders, "still waits for a decision; it expires in "+c.deadline.Sub(now).String())
		r.reminders++
		r.record(r.scope.ApprovalReminder(now, c.CallID, c.Tool, r.reminders,
			"still waits for a decision; it expires in "+c.deadline.Sub(now).String()+" (approval_id "+c.ApprovalID+")"))
		sent = true
	}
	return sent
}

// nextGateTime is the earliest deadline or reminder of the waiting calls,
// and whether any call waits.
func (r *run) nextGateTime() (time.Time, bool) {
	var next time.Time
	waiting := false
	for i := range r.calls {
		c := &r.calls[i]
		if !c.waitsForDecision() {
			continue
		}
		t := c.deadline
		if c.reminded < 2 {
			t = reminderPoints(c.pending.Since, c.deadline)[c.reminded]
		}
		if !waiting || t.Before(next) {
			next = t
		}
		waiting = true
	}
	return next, waiting
}

// checkConfirm is what the confirm update's validator and the signal agree
// on (T1): the call waits, the approval_id is the waiting call's, and
// edited arguments pass the tool's schema. Its errors carry the update's
// error types.
func (r *run) checkConfirm(s round.Confirm) (*Call, error) {
	if s.Nonce != "" && r.notes.nonces[s.Nonce] {
		return nil, temporal.NewNonRetryableApplicationError("the link has decided already: a link decides once", string(round.CodeLinkUsed), nil)
	}
	if s.Via == "link" && (s.Remember || s.Pattern != "" || s.AllowTurn || len(s.Args) > 0 || s.UpTo != 0 || s.Scope != "") {
		return nil, temporal.NewNonRetryableApplicationError("invalid decision: a link approves or denies only; it never remembers, patterns, allows the turn or edits", string(round.CodeInvalidDecision), nil)
	}
	i, known := r.index[s.CallID]
	if !known || !r.calls[i].waitsForDecision() {
		why := "no call with this id in the round"
		if known {
			why = "the call is not waiting for confirmation"
		}
		return nil, temporal.NewNonRetryableApplicationError(why, string(round.CodeNotWaiting), nil)
	}
	c := &r.calls[i]
	if s.ApprovalID != c.ApprovalID {
		return nil, temporal.NewNonRetryableApplicationError(
			"stale approval_id: the decision is not for the arguments that wait (read pending again); the call keeps waiting", string(round.CodeStaleApproval), nil)
	}
	if s.Scope != "" && (!s.Remember || !approval.ValidScope(s.Scope)) {
		why := "scope is a remembered rule's: it needs remember"
		if !approval.ValidScope(s.Scope) {
			why = fmt.Sprintf("scope %q: it is %q or %q", s.Scope, approval.ScopeReadOnly, approval.ScopeWrite)
		}
		return nil, temporal.NewNonRetryableApplicationError("invalid decision: "+why, string(round.CodeInvalidDecision), nil)
	}
	if r.snap.Features.RunLimits {
		if err := checkDecision(c, s); err != nil {
			return nil, err
		}
	}
	if s.Approve && len(s.Args) > 0 {
		args, ok := editedArgs(s.Args)
		if !ok {
			return nil, temporal.NewNonRetryableApplicationError("invalid arguments: args must be a JSON object or a JSON string holding one", string(round.CodeInvalidArgs), nil)
		}
		if v := tools.Validate(r.snap.Tools[c.Tool].Parameters, json.RawMessage(args)); len(v) > 0 {
			return nil, temporal.NewNonRetryableApplicationError("invalid arguments: "+strings.Join(v, "; "), string(round.CodeInvalidArgs), nil)
		}
	}
	return c, nil
}

// editedArgs reads an approver's arguments: a JSON object, or a JSON string
// holding one.
func editedArgs(raw json.RawMessage) (string, bool) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		raw = json.RawMessage(strings.TrimSpace(s))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return "", false
	}
	return string(raw), true
}

// onConfirm applies a decision (T1, T2, T4): one
// for a call that does not wait, for other arguments, or with edited
// arguments that fail the schema, is recorded as ignored and the call keeps
// waiting. via says how it came ("signal" or "update") when the decision
// does not say.
func (r *run) onConfirm(ctx workflow.Context, s round.Confirm, via string) {
	c, err := r.checkConfirm(s)
	if err != nil {
		r.ignore(ctx, names.SignalConfirm, s.CallID, err.Error())
		return
	}
	now := workflow.Now(ctx)
	if s.Nonce != "" {
		if r.notes.nonces == nil {
			r.notes.nonces = map[string]bool{}
		}
		r.notes.nonces[s.Nonce] = true
	}
	if s.Via == "" {
		s.Via = via
	}
	if via == "signal" {
		s.Verified = false // only an authenticating client, through the update, vouches for who decided
	}
	rec := &round.Approval{Decision: round.DecisionDenied, By: s.By, Via: s.Via, Verified: s.Verified, At: now, Reason: s.Reason}
	detail := "denied"
	if s.Approve {
		rec.Decision, detail = round.DecisionApproved, "approved"
		if len(s.Args) > 0 {
			args, _ := editedArgs(s.Args)
			if Canonical(args) != Canonical(c.Args) {
				rec.Edited, rec.OriginalArgs = true, c.Args
				c.Args, c.Key = args, tools.DedupeKey(c.Tool, []byte(args))
				r.refacts(ctx, c)
				detail += " with edited arguments"
			}
		}
		if len(c.Limits) > 0 {
			r.grow(c)
			rec.Limits = c.Limits
			detail += ", past " + strings.Join(c.Limits, ", ")
		}
		if s.Remember {
			var rules []approval.Rule
			var err error
			if a := r.snap.approvalOf(c); Version(ctx, changeRuleScope, 1) == 1 {
				rules, err = approval.RememberScoped(r.snap.Tables, a.Kind, c.Tool, Canonical(c.Args), s.Pattern, s.Scope, a.ReadOnly)
			} else {
				rules, err = approval.RememberAt(r.snap.Tables, a.Kind, c.Tool, Canonical(c.Args), s.Pattern)
			}
			if err != nil {
				detail += ", not remembered: " + err.Error()
			} else {
				for i := range rules {
					rules[i].UpTo = s.UpTo
					rules[i].Schema = r.schemaHash(c.Tool) // Y3: a user tool's rule keeps to its schema
				}
				r.remembered = append(r.remembered, rules...)
				detail += ", remembered " + describeRule(rules[0])
				if rules[0].Scope != "" {
					detail += ", scope " + rules[0].Scope
				}
			}
		}
		if s.AllowTurn {
			r.allowTurn, r.allowTurnBy = true, rec
			detail += ", allowed for the rest of the round"
		}
	} else if s.Reason != "" {
		detail += ": " + s.Reason
	}
	if s.By != "" {
		detail += " by " + s.By
	}
	if !s.Approve && len(c.Limits) > 0 {
		rec.Limits = c.Limits
	}
	r.decide(ctx, c, s.Approve, rec, detail+" via "+s.Via)
	if s.Approve {
		r.settleOthers(ctx, c.CallID)
	}
	r.gateTick++
}

// settleOthers approves the waiting calls that the round's allow_turn or a
// rule (one remembered just now included) approves; allow_turn never
// approves a call that always asks (a sensitive read, a secret sent).
func (r *run) settleOthers(ctx workflow.Context, by string) {
	all := append(append([]approval.Rule(nil), r.rules...), r.remembered...)
	for k := range r.calls {
		q := &r.calls[k]
		if !q.waitsForDecision() || len(q.Limits) > 0 {
			continue // B1: a limit takes an explicit decision on its call
		}
		pol := approval.Policy{Rules: r.schemaRules(r.usableRules(all)), Tables: r.snap.Tables, Untested: r.snap.Untested}
		now := workflow.Now(ctx)
		if r.allowTurn && !q.Always {
			rec := *r.allowTurnBy
			rec.At, rec.Reason, rec.Edited, rec.OriginalArgs = now, "allow_turn on call "+by, false, ""
			r.decide(ctx, q, true, &rec, "approved by "+by+" (allow_turn)")
			continue
		}
		if r.commandRulesOff(q) {
			continue // T12: no rule approves a command without a sandbox
		}
		if v := approval.Needs(r.approvalCall(q), pol); !v.Ask && v.Decision == approval.DecisionRule {
			rec := &round.Approval{Decision: round.DecisionRule, At: now, Rule: describeRules(v.Rules)}
			q.ruleScope = ruleScope(v.Rules)
			r.useRules(rec, v.Rules)
			r.decide(ctx, q, true, rec, "approved by rule "+describeRules(v.Rules))
		}
	}
}

// decide settles a call that waits at the gate and records the decision.
func (r *run) decide(ctx workflow.Context, c *Call, approve bool, rec *round.Approval, detail string) {
	r.metricApprovalDecided(ctx, c, decision(approve))
	r.notifyWait(c, c.pending, notify.TypeDecided, 0, detail)
	c.pending = nil
	c.Approval = rec
	Decide(c, approve, rec.Reason)
	r.record(r.scope.ConfirmationAnswered(workflow.Now(ctx), c.CallID, c.Tool, detail))
}

// refacts asks the catalog, in a side effect, about a call's edited
// arguments: their side-effect class decides retries and local activities.
func (r *run) refacts(ctx workflow.Context, c *Call) {
	req := SnapshotRequest{Provider: r.in.Provider, ClientTools: r.in.ClientTools, Calls: []Unwrapped{{Name: c.Tool, Args: c.Args, Via: c.Via}}}
	var s Snapshot
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return r.cat.Snapshot(req) }).Get(&s); err != nil || len(s.Calls) != 1 {
		return
	}
	f := s.Calls[0]
	if f.Effect == "" {
		f.Effect = r.snap.Tools[c.Tool].SideEffect
	}
	c.Facts = f
}

// onExtend adds to a waiting call's deadline (T3), at most 7 days after it
// started to wait; its reminders move with it. It answers what it added,
// which the cap may make less than e asks for.
func (r *run) onExtend(ctx workflow.Context, e round.Extend) round.Extended {
	if why := r.checkExtend(e); why != "" {
		r.ignore(ctx, names.SignalExtend, e.CallID, why)
		return round.Extended{CallID: e.CallID}
	}
	c := &r.calls[r.index[e.CallID]]
	before := c.deadline
	limit := c.pending.Since.Add(maxWait)
	add := time.Duration(min(e.Seconds, int64(maxWait/time.Second))) * time.Second
	c.deadline = c.deadline.Add(add)
	if c.deadline.After(limit) {
		c.deadline = limit
	}
	c.pending.Deadline = c.deadline
	c.reminded = remindersDue(c.pending.Since, c.deadline, workflow.Now(ctx))
	r.gateTick++
	added := max(c.deadline.Sub(before), 0)
	return round.Extended{CallID: e.CallID, AddedSeconds: int64(added / time.Second), Deadline: c.deadline}
}

// extendTooShort is checkExtend's answer to less than one second.
const extendTooShort = "seconds must be 1 or more"

// checkExtend says why e moves no deadline ("" when it does): the call is
// unknown, does not wait for a decision, or e adds less than a second.
func (r *run) checkExtend(e round.Extend) string {
	i, known := r.index[e.CallID]
	if !known {
		return "no call with this id in the round"
	}
	if !r.calls[i].waitsForDecision() {
		return "the call is not waiting for a decision"
	}
	if e.Seconds <= 0 {
		return extendTooShort
	}
	return ""
}

// recordNotNeeded gives every call without a decision record one: it was
// settled without asking anyone.
func (r *run) recordNotNeeded(now time.Time) {
	for i := range r.calls {
		if r.calls[i].Approval == nil {
			r.calls[i].Approval = &round.Approval{Decision: round.DecisionNotNeeded, At: now}
		}
	}
}

// checkDecision refuses what a decision carries that its wait does not
// take (B1, B2): a wait_id of another wait; remember, pattern, allow_turn,
// args or up_to on a call past a limit; up_to without remember or outside
// 1..10^9.
func checkDecision(c *Call, s round.Confirm) error {
	if s.WaitID != "" && s.WaitID != c.pending.WaitID {
		return temporal.NewNonRetryableApplicationError(
			"stale wait_id: the decision is for another wait of the call (read pending again); the call keeps waiting", string(round.CodeStaleWait), nil)
	}
	invalid := func(why string) error {
		return temporal.NewNonRetryableApplicationError("invalid decision: "+why, string(round.CodeInvalidDecision), nil)
	}
	if len(c.Limits) > 0 {
		var extra []string
		for _, f := range []struct {
			set  bool
			name string
		}{{s.Remember, "remember"}, {s.Pattern != "", "pattern"}, {s.AllowTurn, "allow_turn"}, {len(s.Args) > 0, "args"}, {s.UpTo != 0, "up_to"}} {
			if f.set {
				extra = append(extra, f.name)
			}
		}
		if len(extra) > 0 {
			return invalid("the call is past " + strings.Join(c.Limits, ", ") + " and takes only approve or deny with a reason, not " + strings.Join(extra, ", "))
		}
	}
	if s.UpTo != 0 {
		if !s.Remember {
			return invalid("up_to bounds a remembered rule: it needs remember")
		}
		if s.UpTo < 1 || s.UpTo > round.MaxLimit {
			return invalid(fmt.Sprintf("up_to is %d; it must be between 1 and %d", s.UpTo, round.MaxLimit))
		}
	}
	return nil
}
