package agentrun

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// An agent run's limits (B1), for runs that recorded changeAgentLimits:
// every round takes the run's limits and counts its calls in the run
// state; the run counts its model tokens there and records its start; past
// max_seconds or max_model_tokens, or when a call's wait past a limit
// expired, it ends limit_reached with its conversation and state kept.

// startLimits asks for changeAgentLimits and records the worker's limits.
func (a *agent) startLimits(ctx workflow.Context, worker round.Limits) error {
	a.now = workflow.Now(ctx)
	if workflows.Version(ctx, workflows.ChangeAgentLimits, 1) < 1 {
		return nil
	}
	a.limited = true
	var w round.Limits
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return worker }).Get(&w); err != nil {
		return err
	}
	a.limits = a.in.Limits.Within(&w)
	if a.state == nil {
		a.state = &round.RunState{}
	}
	if a.state.Usage == nil {
		a.state.Usage = &round.Usage{}
	}
	if a.state.Usage.Started == nil {
		t := a.now
		a.state.Usage.Started = &t
		// A subagent whose share of a limit is 0 has it at 1 and starts 1
		// below it, so its first counted call waits (G1, T15).
		for _, name := range a.in.ZeroShare {
			if a.state.Usage.Grown == nil {
				a.state.Usage.Grown = map[string]int64{}
			}
			a.state.Usage.Grown[name]--
		}
	}
	return nil
}

// countTokens adds a model call's tokens to the run state.
func (a *agent) countTokens(n int64) {
	if !a.limited || n <= 0 {
		return
	}
	if a.state.Usage == nil {
		a.state.Usage = &round.Usage{}
	}
	a.state.Usage.ModelTokens += n
}

// pastLimit ends the run limit_reached when it is past max_seconds or
// max_model_tokens (each grown by what approvals in its rounds added).
func (a *agent) pastLimit(ctx workflow.Context) bool {
	a.now = workflow.Now(ctx)
	if !a.limited || a.state == nil {
		return false
	}
	u := a.state.Usage
	for _, name := range []string{round.LimitSeconds, round.LimitModelTokens} {
		l := a.limits.Get(name)
		if l == 0 {
			continue
		}
		if u != nil {
			l += u.Grown[name]
		}
		if n := u.Count(name, a.now); n > l {
			unit := "s since its start"
			if name == round.LimitModelTokens {
				unit = "model tokens"
			}
			a.status, a.reason = round.AgentLimitReached, fmt.Sprintf("past %s: the run is at %d %s (limit %d)", name, n, unit, l)
			return true
		}
	}
	return false
}

// limitWaitExpired ends the run limit_reached when a call of its round
// waited past a limit and nobody decided in time.
func (a *agent) limitWaitExpired(res round.Output) bool {
	if !a.limited {
		return false
	}
	for _, r := range res.Results {
		if r.Status == round.StatusExpired && r.Approval != nil && len(r.Approval.Limits) > 0 {
			a.status = round.AgentLimitReached
			a.reason = fmt.Sprintf("call %s waited past %s and nobody decided in time", r.CallID, r.Approval.Limits[0])
			return true
		}
	}
	return false
}
