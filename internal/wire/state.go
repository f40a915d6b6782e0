package wire

import (
	"github.com/toolround/toolround/round"
)

// Local activities that check and sign a run's allow rules with the
// workers' rule key (T4); the key stays on the workers, the answers enter
// history.
const (
	ActivityVerifyRules = "VerifyRules"
	ActivitySignRules   = "SignRules"
)

// RulesInput is the input of VerifyRules and SignRules.
type RulesInput struct {
	SessionID string            `json:"session_id"`
	RunID     string            `json:"run_id"`
	Rules     []round.AllowRule `json:"rules"`
}

// VerifyRulesOutput lists the indexes of the input's rules whose MAC is
// valid for the session and run, in order.
type VerifyRulesOutput struct {
	Verified []int `json:"verified"`
}

// SignRulesOutput holds the input's rules, signed, in order.
type SignRulesOutput struct {
	Rules []round.AllowRule `json:"rules"`
}

// Local activities that sign a run's usage with the workers' rule key and
// check it in the next round (B1), so that WORKER_LIMITS count what the run
// did whatever the client carries.
const (
	ActivityVerifyUsage = "VerifyUsage"
	ActivitySignUsage   = "SignUsage"
)

// UsageInput is the input of VerifyUsage and SignUsage. Bound: the MAC
// covers Usage.Round too (T15, approval.RoundUsageMAC); rounds recorded
// before T15 asked without it.
type UsageInput struct {
	SessionID string      `json:"session_id"`
	RunID     string      `json:"run_id"`
	Usage     round.Usage `json:"usage"`
	Bound     bool        `json:"bound,omitempty"`
}

// VerifyUsageOutput says whether the usage's MAC is valid for the session
// and run (and, Bound, for the round the usage names).
type VerifyUsageOutput struct {
	Verified bool `json:"verified"`
	// Unbound (asked Bound only): the MAC is not the round's but verifies
	// as a worker from before T15 signed it, for the session and run alone.
	Unbound bool `json:"unbound,omitempty"`
}

// SignUsageOutput holds the usage's MAC.
type SignUsageOutput struct {
	MAC string `json:"mac"`
}

// MaxDedupeEntries bounds the dedupe map of a run; the oldest entries go
// first. Its size is bounded too (workflows.StateBudget): the state travels
// in every round's input and result.
const MaxDedupeEntries = 1000
