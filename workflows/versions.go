package workflows

import "go.temporal.io/sdk/workflow"

// Behaviour changes of the round are made behind workflow.GetVersion, so that
// a round recorded before a change replays as it ran. Each GetVersion that a
// new execution passes writes a marker event, and the Go SDK also updates the
// TemporalChangeVersion search attribute with it: a round that passed five
// change ids paid five markers and five search attribute updates, which the
// server writes to history and to visibility, for nothing but the record that
// it took the newest code.
//
// versionBaseline folds the changes listed in baseline into one marker. An
// execution that starts on this code records versionBaseline once and takes
// every listed change at the version given there without asking again; an
// execution recorded before it has no such marker, so versionBaseline is
// DefaultVersion on replay and each change is asked for as it was when the
// execution ran.
//
// The list is closed: a change made after this one calls version with an id
// not in baseline (it gets a marker of its own), or starts a new baseline
// that lists it. Never add to or change this list, since executions already
// recorded with versionBaseline would then replay with different behaviour.
const versionBaseline = "baseline-2026-11-30"

// versionRuleLockdown tells the tool that a rule, not a person, approved a
// call (round.ExecuteInput.RuleApproved), so that commands run git locked
// down (T4). It is asked only for calls that a rule approved.
const versionRuleLockdown = "rule-command-lockdown"

// baseline is every change of the round up to versionBaseline, at the
// version a new execution takes.
var baseline = map[string]workflow.Version{
	searchChange:        1,
	sinceChange:         1,
	approvalsChange:     approvalsVersion,
	changeHonestRepeats: 1,
	versionOperationIDs: 1,
	versionKeyLimits:    1,
	versionReconcile:    1,
	versionLostAgain:    1,
}

// versionBaseline2 is the next baseline: every change of baseline and those
// after it, still one marker for a new execution. The same rule holds: never
// add to or change baseline2; a later change gets a marker of its own or a
// newer baseline.
const versionBaseline2 = "baseline-2026-12-01"

// versionCallFinished: pass 3 publishes call_finished for the calls whose end
// only the workflow knows (U7).
const versionCallFinished = "call-finished"

// versionHelpfulHints: a failure's next: hint only where it helps (P3.2,
// Features.HelpfulHints).
const versionHelpfulHints = "helpful-hints"

// baseline2 is baseline and the changes after it.
var baseline2 = func() map[string]workflow.Version {
	m := map[string]workflow.Version{versionCallFinished: 1, versionHelpfulHints: 1}
	for k, v := range baseline {
		m[k] = v
	}
	return m
}()

type baselineKey struct{}

// withBaseline asks for the newest baseline once, at the start of the round,
// and returns the context whose descendants answer version from it. An
// execution recorded before versionBaseline2 has no marker of it and asks for
// versionBaseline as it did.
func withBaseline(ctx workflow.Context) workflow.Context {
	if workflow.GetVersion(ctx, versionBaseline2, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline2)
	}
	if workflow.GetVersion(ctx, versionBaseline, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline)
	}
	return ctx
}

// version is workflow.GetVersion(ctx, change, DefaultVersion, max), except
// that an execution started with a baseline takes a listed change at its
// baseline version without a marker of its own.
func version(ctx workflow.Context, change string, max workflow.Version) workflow.Version {
	if b, _ := ctx.Value(baselineKey{}).(map[string]workflow.Version); b != nil {
		if v, ok := b[change]; ok {
			return v
		}
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, max)
}
