package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// The run state's allow rules are signed with the workers' rule key (T4).
// The key never enters history: a local activity checks the MACs once per
// round (its answer is in history, so a replay gives the same answer) and
// another signs what the round remembered.

// KeyOptions are the options of the local activities that use the rule
// key (verifying and signing rules and usage), here and in the gateway's
// run, with summary.
func KeyOptions(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 100 * time.Millisecond},
		Summary:             summary,
	})
}

// verifyRules keeps the run state's rules whose MAC is valid for this
// session and run; the others (forged, unsigned, from another run) are
// ignored. A round whose state has no rules asks nothing.
func (r *run) verifyRules(ctx workflow.Context) {
	if len(r.st.Allow) == 0 {
		return
	}
	in := wire.RulesInput{SessionID: r.in.SessionID, RunID: r.in.RunID, Rules: r.st.Allow}
	var out wire.VerifyRulesOutput
	if err := workflow.ExecuteLocalActivity(KeyOptions(ctx, "verify allow rules"), wire.ActivityVerifyRules, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("checking the run's allow rules failed; none applies in this round", "error", err)
		return
	}
	for _, i := range out.Verified {
		if i >= 0 && i < len(r.st.Allow) {
			r.rules = append(r.rules, approval.Rule(r.st.Allow[i]))
		}
	}
}

// signRemembered signs the rules this round's decisions remembered and adds
// them to the run state. Without a rule key they are dropped, and the
// worker log says why.
func (r *run) signRemembered(ctx workflow.Context) {
	if len(r.remembered) == 0 {
		return
	}
	in := wire.RulesInput{SessionID: r.in.SessionID, RunID: r.in.RunID}
	for _, rule := range r.remembered {
		in.Rules = append(in.Rules, round.AllowRule(rule))
	}
	var out wire.SignRulesOutput
	if err := workflow.ExecuteLocalActivity(KeyOptions(ctx, "sign allow rules"), wire.ActivitySignRules, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("signing the remembered allow rules failed; they are not kept", "error", err)
		return
	}
	for _, rule := range out.Rules {
		r.st.AddRule(rule)
	}
}

// describeRules names the rules that approved a call, for its record.
func describeRules(rules []approval.Rule) string {
	s := ""
	for i, rule := range rules {
		if i > 0 {
			s += "; "
		}
		s += describeRule(rule)
	}
	return s
}

func describeRule(rule approval.Rule) string {
	d := rule.Tool
	switch {
	case rule.Pattern != "":
		d += " " + rule.Pattern
	default:
		d += " " + rule.Args
	}
	if rule.Secret != "" {
		d += " (secret " + rule.Secret + ")"
	}
	return d
}

// ruleScope is the scope a call the rules approved runs with (T12): the
// widest EffectiveScope of the pattern rules among them, since each of them
// approves the call; empty when an exact rule approved it, which is a
// person's approval of these very arguments.
func ruleScope(rules []approval.Rule) string {
	scope := ""
	for _, rule := range rules {
		if rule.Secret != "" {
			continue
		}
		if rule.Pattern == "" {
			return ""
		}
		if s := rule.EffectiveScope(); scope == "" || s == approval.ScopeWrite {
			scope = s
		}
	}
	return scope
}

// ReasonNoSandbox is why a command call asks on a worker without a sandbox,
// whatever rules the run remembered (T12).
const ReasonNoSandbox = "no sandbox: rules for commands are off"

// commandRulesOff reports whether no rule may approve c: the worker that
// took the round's snapshot runs commands without a sandbox, and c runs a
// command (run_command, background_command, a script_* tool), which only
// the sandbox contains to its rule's scope (T12).
func (r *run) commandRulesOff(c *Call) bool {
	if !r.snap.NoSandbox {
		return false
	}
	return r.snap.approvalOf(c).Kind == approval.KindCommand || strings.HasPrefix(c.Tool, "script_")
}
