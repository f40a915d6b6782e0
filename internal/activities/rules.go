package activities

import (
	"context"
	"errors"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// errNoRuleKey: a worker without a rule key neither verifies nor signs.
var errNoRuleKey = errors.New("the worker has no rule key (TOOLROUND_RULE_KEY)")

// ruleKeys are the keys a MAC may verify with: the rule key, then, during
// a rotation, the previous one (TOOLROUND_RULE_KEY_PREVIOUS). Only the
// rule key signs.
func (a *Activities) ruleKeys() [][]byte {
	if len(a.RuleKey) == 0 {
		return nil
	}
	if len(a.RuleKeyPrevious) == 0 {
		return [][]byte{a.RuleKey}
	}
	return [][]byte{a.RuleKey, a.RuleKeyPrevious}
}

// VerifyRules checks the MACs of a run state's rules with the worker's rule
// key, or the previous one during a rotation (T4). The round calls it once; its answer is in history, so a replay
// gives the same answer and the key never enters history. Without a key,
// no rule verifies.
func (a *Activities) VerifyRules(_ context.Context, in wire.RulesInput) (wire.VerifyRulesOutput, error) {
	out := wire.VerifyRulesOutput{Verified: []int{}}
	if len(a.RuleKey) == 0 {
		return out, nil
	}
	for i, r := range in.Rules {
		for _, key := range a.ruleKeys() {
			if approval.Verify(key, in.SessionID, in.RunID, approval.Rule(r)) {
				out.Verified = append(out.Verified, i)
				break
			}
		}
	}
	return out, nil
}

// SignRules signs the rules a round remembered with the worker's rule key
// (approval.Sign): the MAC enters history, the key does not.
func (a *Activities) SignRules(_ context.Context, in wire.RulesInput) (wire.SignRulesOutput, error) {
	if len(a.RuleKey) == 0 {
		return wire.SignRulesOutput{}, errNoRuleKey
	}
	out := wire.SignRulesOutput{Rules: make([]round.AllowRule, len(in.Rules))}
	for i, r := range in.Rules {
		out.Rules[i] = round.AllowRule(approval.Sign(a.RuleKey, in.SessionID, in.RunID, approval.Rule(r)))
	}
	return out, nil
}

// VerifyUsage checks the MAC of a run state's usage with the worker's rule
// key (B1), once per round, as VerifyRules does for rules (the previous
// key too, during a rotation). Without a key, no usage verifies.
func (a *Activities) VerifyUsage(_ context.Context, in wire.UsageInput) (wire.VerifyUsageOutput, error) {
	usage := in.Usage.Canonical()
	bound := func(key []byte) bool {
		return approval.VerifyRoundUsage(key, in.SessionID, in.RunID, in.Usage.Round, usage, in.Usage.MAC)
	}
	unbound := func(key []byte) bool {
		return approval.VerifyUsage(key, in.SessionID, in.RunID, usage, in.Usage.MAC)
	}
	either := func(verify func([]byte) bool) bool {
		for _, key := range a.ruleKeys() {
			if verify(key) {
				return true
			}
		}
		return false
	}
	if in.Bound {
		ok := either(bound)
		return wire.VerifyUsageOutput{Verified: ok, Unbound: !ok && either(unbound)}, nil
	}
	return wire.VerifyUsageOutput{Verified: either(unbound)}, nil
}

// SignUsage signs the usage a round hands on with the worker's rule key;
// Bound, for the round Usage.Round names (T15).
func (a *Activities) SignUsage(_ context.Context, in wire.UsageInput) (wire.SignUsageOutput, error) {
	if len(a.RuleKey) == 0 {
		return wire.SignUsageOutput{}, errNoRuleKey
	}
	if in.Bound {
		return wire.SignUsageOutput{MAC: approval.RoundUsageMAC(a.RuleKey, in.SessionID, in.RunID, in.Usage.Round, in.Usage.Canonical())}, nil
	}
	return wire.SignUsageOutput{MAC: approval.UsageMAC(a.RuleKey, in.SessionID, in.RunID, in.Usage.Canonical())}, nil
}
