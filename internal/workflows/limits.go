package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Run limits (B1) and counted rules (B2), for rounds that recorded
// changeRunLimits (Features.RunLimits). The run state carries the run's
// limits, what it did and what approvals added to each limit; the
// worker's WORKER_LIMITS, recorded in the snapshot, bounds them whatever
// the input says. A call past a limit waits for a person (kind limit), and
// only an explicit decision on that call answers it.

// startLimits is the start of pass 1: the round's limits join the run
// state's, and a run's first round records when the run started.
func (r *run) startLimits(now time.Time) {
	if !r.snap.Features.RunLimits {
		return
	}
	if r.in.Limits != nil && !r.in.Limits.Empty() {
		l := r.st.Limits.Over(r.in.Limits)
		r.st.Limits = &l
	}
	if r.st.Usage == nil {
		r.st.Usage = &round.Usage{}
	}
	if r.st.Usage.Started == nil {
		t := now
		r.st.Usage.Started = &t
	}
}

// verifyUsage is the start of pass 1 for a round not started by an agent
// run (whose rounds are its children: their state never left the
// workers). Since changeBoundUsage the usage is checked with or without
// WORKER_LIMITS (verifyBoundUsage); before it only on a worker with
// WORKER_LIMITS (changeSignedUsage): the usage the run state carries must
// carry its MAC for this session and run, and a round after the run's
// first must carry usage; otherwise the counts are unknown and every call
// of the round asks (LimitUnverified).
func (r *run) verifyUsage(ctx workflow.Context) {
	if !r.snap.Features.RunLimits || workflow.GetInfo(ctx).ParentWorkflowExecution != nil {
		return
	}
	if Version(ctx, changeBoundUsage, 1) >= 1 {
		r.verifyBoundUsage(ctx)
		return
	}
	if r.snap.WorkerLimits.Empty() || Version(ctx, changeSignedUsage, 1) < 1 {
		return
	}
	r.signsUsage = true
	u := r.st.Usage
	switch {
	case u == nil:
		r.unverified = r.in.Round > 1
		return
	case u.MAC == "":
		r.unverified = true
		return
	}
	in := wire.UsageInput{SessionID: r.in.SessionID, RunID: r.in.RunID, Usage: *u}
	var out wire.VerifyUsageOutput
	if err := workflow.ExecuteLocalActivity(KeyOptions(ctx, "verify the run's usage"), wire.ActivityVerifyUsage, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("checking the run's usage failed; every call of this round asks", "error", err)
	}
	r.unverified = !out.Verified
}

// verifyBoundUsage is T15: the usage in the run state is taken only when
// it carries its MAC for this session and run and was signed by the run's
// previous round; a usage that does not verify, or another round's, fails
// the round as an input error that says why. A usage a worker from before
// T15 signed for the session and run alone has its counts taken as reached
// (exhaust), so that runs in flight across the upgrade go on asking. A
// usage without a MAC (none at all, or one from a round recorded before
// T15, which without WORKER_LIMITS handed on the MAC it got and no round)
// resets no count: on a worker with WORKER_LIMITS it is an input error
// after the run's first round; without, its counts are the client's
// brake, but not the counts of its counted rules. Then every counted rule
// of the state that the usage does not count is used up, so that neither
// deleting the usage nor dropping a rule and adding it back later
// re-enables it.
func (r *run) verifyBoundUsage(ctx workflow.Context) {
	r.signsUsage, r.boundUsage = true, true
	u := r.st.Usage
	next := fmt.Sprintf("round %d of a run takes the state its round %d returned (T15)", r.in.Round, r.in.Round-1)
	if r.in.Round <= 1 {
		next = "a run's first round takes no signed usage (T15)"
	}
	bounded, signed := !r.snap.WorkerLimits.Empty(), u != nil && u.MAC != ""
	var out wire.VerifyUsageOutput
	if signed {
		in := wire.UsageInput{SessionID: r.in.SessionID, RunID: r.in.RunID, Usage: *u, Bound: true}
		if err := workflow.ExecuteLocalActivity(KeyOptions(ctx, "verify the run's usage"), wire.ActivityVerifyUsage, in).Get(ctx, &out); err != nil {
			r.badInput = temporal.NewApplicationError("checking the run's usage failed: "+err.Error(), "UsageUnchecked", err)
			return
		}
	}
	switch {
	case signed && out.Verified && u.Round != r.in.Round-1:
		r.badInput = invalidInput(fmt.Sprintf("the run state's usage was signed by round %d of this run: %s", u.Round, next))
		return
	case signed && out.Verified:
	case signed && out.Unbound:
		r.exhaust() // a round from before T15 signed it: any earlier round's
	case signed && (bounded || u.Round != 0):
		r.badInput = invalidInput("the run state's usage does not verify: its counts were changed, or it is another run's: " + next)
		return
	case bounded && (u != nil || r.in.Round > 1):
		r.badInput = invalidInput("the run state's usage is missing or unsigned, and this worker's WORKER_LIMITS count every run: " + next)
		return
	case u != nil:
		// Unsigned, or handed on by a round from before T15 without
		// WORKER_LIMITS, which kept the MAC it was given and no round:
		// the client's brake, but no rule's count.
		u.Rules, u.Reserved, u.MAC = nil, nil, ""
	}
	if r.st.Usage == nil {
		r.st.Usage = &round.Usage{}
	}
	u = r.st.Usage
	for _, rule := range r.st.Allow {
		k := ruleCountKey(approval.Rule(rule))
		if _, counted := u.Rules[k]; rule.UpTo > 0 && !counted {
			if u.Rules == nil {
				u.Rules = map[string]int64{}
			}
			u.Rules[k] = rule.UpTo
		}
	}
}

// exhaust takes the counts of a usage that a worker from before T15 signed
// for the session and run but for no round as reached (T15, V1): it is
// the run's, so its start and what approvals grew hold, but it may be any
// earlier round's, so each counted limit is at least reached and every
// counted rule used up. The run goes on across the upgrade, and each call
// past a limit asks.
func (r *run) exhaust() {
	u := r.st.Usage
	l := r.st.Limits.Over(r.in.Limits)
	l = l.Within(r.snap.WorkerLimits)
	at := func(n *int64, name string) {
		if v := l.Get(name); v != 0 {
			*n = max(*n, v+u.Grown[name])
		}
	}
	at(&u.Calls, round.LimitCalls)
	at(&u.Commands, round.LimitCommands)
	at(&u.Writes, round.LimitWrites)
	at(&u.ModelTokens, round.LimitModelTokens)
	u.Rules, u.Reserved = nil, nil
}

// invalidInput fails the round as an input error (T15).
func invalidInput(why string) error {
	return temporal.NewNonRetryableApplicationError("invalid round input: "+why, round.ErrTypeInvalidInput, nil)
}

// signUsage is the end of pass 3 of a round that checked its usage: the
// usage the round hands on gets its MAC, since changeBoundUsage for this
// round, with a count of 0 for each counted rule the round remembered.
// Without a rule key it stays unsigned, and the run's next round refuses
// it (on a worker with WORKER_LIMITS) or uses up its counted rules.
func (r *run) signUsage(ctx workflow.Context, st *round.RunState) {
	if !r.signsUsage || st == nil || st.Usage == nil {
		return
	}
	if r.boundUsage {
		for _, rule := range r.remembered {
			k := ruleCountKey(rule)
			if _, counted := st.Usage.Rules[k]; rule.UpTo > 0 && !counted {
				if st.Usage.Rules == nil {
					st.Usage.Rules = map[string]int64{}
				}
				st.Usage.Rules[k] = 0
			}
		}
		st.Usage.Round = r.in.Round
	}
	in := wire.UsageInput{SessionID: r.in.SessionID, RunID: r.in.RunID, Usage: *st.Usage, Bound: r.boundUsage}
	var out wire.SignUsageOutput
	if err := workflow.ExecuteLocalActivity(KeyOptions(ctx, "sign the run's usage"), wire.ActivitySignUsage, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("signing the run's usage failed; the next round refuses it or asks for every call", "error", err)
		st.Usage.MAC = ""
		return
	}
	st.Usage.MAC = out.MAC
}

// limits are the run's limits for this round, before approvals grew them:
// the run state's, within the worker's.
func (r *run) limits() round.Limits {
	return r.st.Limits.Within(r.snap.WorkerLimits)
}

// isCommand: the tool runs commands (max_commands).
func isCommand(tool string) bool {
	return tool == "run_command" || tool == "background_command" || strings.HasPrefix(tool, "script_")
}

// counts is what a call that reaches pass 2 adds to the run's usage.
func counts(c *Call) (command, write bool) {
	return isCommand(c.Tool), c.Facts.Effect != tools.ReadOnly
}

// projection is the usage of the run with the calls of this round so far
// that will reach pass 2.
type projection struct{ calls, commands, writes int64 }

// pastLimits adds call c to p and returns the limits it is past, each with
// its reason.
func (r *run) pastLimits(p *projection, c *Call, now time.Time) (names, reasons []string) {
	l := r.limits()
	u := r.st.Usage
	command, write := counts(c)
	p.calls++
	if command {
		p.commands++
	}
	if write {
		p.writes++
	}
	max := func(name string) int64 { return l.Get(name) + u.Grown[name] }
	check := func(name string, n int64, what string) {
		if l.Get(name) == 0 || n <= max(name) {
			return
		}
		names = append(names, name)
		reasons = append(reasons, fmt.Sprintf("past %s: this would be %s %d of the run (limit %d)", name, what, n, max(name)))
	}
	check(round.LimitCalls, u.Calls+p.calls, "call")
	if command {
		check(round.LimitCommands, u.Commands+p.commands, "command")
	}
	if write {
		check(round.LimitWrites, u.Writes+p.writes, "call with side effects")
	}
	if l.MaxSeconds != 0 {
		if s := u.Count(round.LimitSeconds, now); s > max(round.LimitSeconds) {
			names = append(names, round.LimitSeconds)
			reasons = append(reasons, fmt.Sprintf("past %s: the run has run %d s since its first round (limit %d)", round.LimitSeconds, s, max(round.LimitSeconds)))
		}
	}
	if l.MaxModelTokens != 0 && u.ModelTokens > max(round.LimitModelTokens) {
		names = append(names, round.LimitModelTokens)
		reasons = append(reasons, fmt.Sprintf("past %s: the run has used %d model tokens (limit %d)", round.LimitModelTokens, u.ModelTokens, max(round.LimitModelTokens)))
	}
	if r.unverified {
		names = append(names, round.LimitUnverified)
		reasons = append(reasons, "WORKER_LIMITS: the run's counts could not be verified (the usage in its state is missing, unsigned, changed or another run's), so every call of this round asks")
	}
	return names, reasons
}

// grow applies an approval of a call past limits: each limit grows by its
// first value, once per round however many of its calls are approved.
func (r *run) grow(c *Call) {
	l := r.limits()
	for _, name := range c.Limits {
		if name == round.LimitUnverified || r.grown[name] {
			continue
		}
		if r.grown == nil {
			r.grown = map[string]bool{}
		}
		r.grown[name] = true
		if r.st.Usage.Grown == nil {
			r.st.Usage.Grown = map[string]int64{}
		}
		r.st.Usage.Grown[name] += l.Get(name)
	}
}

// limitCounts are the run's limits and counts, for pending.
func (r *run) limitCounts(now time.Time) []round.LimitCount {
	l := r.limits()
	return wire.LimitCounts(&l, r.st.Usage, now)
}

// countUsage is pass 3's part of B1: every call that reached pass 2 (ran
// or was reconciled) counts, by the tool it ran.
func countUsage(st *round.RunState, calls []Call) {
	if st.Usage == nil {
		st.Usage = &round.Usage{}
	}
	for i := range calls {
		c := &calls[i]
		if c.Outcome == nil {
			continue
		}
		command, write := counts(c)
		st.Usage.Add(c.Outcome.Usage) // what a subagent did (G1), or a background one's share (G2, T15)
		st.Usage.Calls++
		if command {
			st.Usage.Commands++
		}
		if write {
			st.Usage.Writes++
		}
	}
}

// ruleCountKey names a counted rule in Usage.Rules: a digest of what the
// MAC covers but the MAC, so that a rule remembered in this round, not yet
// signed, is counted under the name it keeps once signed.
func ruleCountKey(rule approval.Rule) string {
	h := sha256.New()
	for _, f := range []string{rule.Tool, rule.Pattern, rule.Args, rule.Secret, strconv.FormatInt(rule.UpTo, 10)} {
		h.Write([]byte(strconv.Itoa(len(f)) + ":" + f))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// usableRules are rules without those counted rules that approved all the
// calls they may (B2).
func (r *run) usableRules(rules []approval.Rule) []approval.Rule {
	if !r.snap.Features.RunLimits {
		return rules
	}
	var out []approval.Rule
	for _, rule := range rules {
		if rule.UpTo > 0 && r.st.Usage.Rules[ruleCountKey(rule)] >= rule.UpTo {
			continue
		}
		out = append(out, rule)
	}
	return out
}

// useRules counts a call that rules approved against their bounds and
// records the count of the first counted one in the call's record.
func (r *run) useRules(rec *round.Approval, rules []approval.Rule) {
	if !r.snap.Features.RunLimits {
		return
	}
	for _, rule := range rules {
		if rule.UpTo <= 0 {
			continue
		}
		if r.st.Usage.Rules == nil {
			r.st.Usage.Rules = map[string]int64{}
		}
		k := ruleCountKey(rule)
		r.st.Usage.Rules[k]++
		if rec.UpTo == 0 {
			rec.Uses, rec.UpTo = r.st.Usage.Rules[k], rule.UpTo
		}
	}
}
