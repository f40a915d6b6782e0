package workflows

import "go.temporal.io/sdk/workflow"

// Behaviour changes of the round are made behind workflow.GetVersion, so that
// a round recorded before a change replays as it ran. These are all of them,
// one line each: what the change gates, and where. The strings are in
// recorded histories: never change one. A new change gets a line here, a
// recorded history in testdata/ beside the old ones, and is asked through
// version, below. What the round still does only to replay executions from
// before a change is in legacy.go; for the changes not named there, the old
// behaviour is the absence of the new one, the one if that asks for it.
const (
	changeSearch           = "inbox-search-attributes" // T7: the inbox's search attributes (search.go)
	changeSince            = "waiting-since-memo"      // T7: the memo names.MemoWaitingSince (search.go)
	changeApprovals        = "approvals-t1-t5"         // T1-T5: the approvals of gate.go; without it, legacy.go
	changeHonestRepeats    = "honest-repeats"          // U3, U4: Features.HonestRepeats (repeat.go)
	changeOperationIDs     = "operation-ids"           // R: results of calls run as activities carry their operation id (execute.go)
	changeKeyLimits        = "key-limits"              // R: calls that share a concurrency key run within its limit (execute.go)
	changeReconcile        = "reconcile-lost-attempts" // R: a lost attempt of an at-most-once call is reconciled (reconcile.go)
	changeLostAgain        = "reconcile-lost-again"    // R: a run once more that is lost too says so (reconcile.go)
	changeCallFinished     = "call-finished"           // U7: pass 3 publishes call_finished for the calls only the workflow saw end (round.go)
	changeHelpfulHints     = "helpful-hints"           // P3.2: Features.HelpfulHints, a next: hint only where it helps (commit.go)
	changeRuleLockdown     = "rule-command-lockdown"   // T4: round.ExecuteInput.RuleApproved, asked only for calls a rule approved (execute.go)
	ChangeAgentRepeatNotes = "agent-repeat-notes"      // U3: an agent run's tool messages name what a repeat repeats (agentrun/round.go; asked directly, the agent run has no baseline)
	changeLiveDecisions    = "live-decisions"          // T2: the gate publishes each decision as it lands while other calls wait (gate.go)
	changeFormats          = "wire-formats"            // F1: a turn in format anthropic or responses is read in it (round.go; asked only by such rounds, so openai rounds pay no marker; without it, legacyFormat)
	changeRunLimits        = "run-limits"              // B1, B2: Features.RunLimits, run limits and counted rules (limits.go)
	ChangeAgentLimits      = "agent-limits"            // B1: an agent run's limits, its model tokens counted, limit_reached (agentrun/limits.go; asked directly)
	changeSignedUsage      = "signed-usage"            // B1: on a worker with WORKER_LIMITS the round signs the usage it hands on and asks for every call when the usage it got does not verify (limits.go; asked only by such rounds, not by an agent run's)
	ChangeAgentAPIs        = "agent-apis"              // F4: an agent run's turns of the Messages and Responses APIs run as rounds in their format, and its stops (pause, truncated, refused) are read (agentrun/start.go; asked directly)
	ChangeAgentBudget      = "agent-budget"            // B3: an agent run's model requests keep within LLM_CONTEXT_TOKENS, shortened results listed in the run state, context_exceeded; version 2: its blob references are refreshed at continue-as-new (agentrun/start.go; asked directly)
	changeNotify           = "notify-webhooks"         // N1, N2: a round whose snapshot has NotifySettings starts notification workflows and records used link nonces (notify.go; asked only by such rounds)
	changeLeanOutput       = "lean-output"             // H3: the round's output leaves out the turn, which the caller rebuilds from the input (round.go)
	changeBuildMemo        = "build-memo"              // V1: the round keeps the build that started it in its memo, names.MemoBuildID (round.go)
	changeUpgradeProbe     = "upgrade-probe"           // V1: asked only by a worker built with the tag upgradeprobe, the new build of the rolling-upgrade test (probe_on.go)
	changeImages           = "tool-images"             // F2: the images of a call's output reach its result, and a repeat of it in the round (execute.go, commit.go; asked only when an output has images, so other rounds pay no marker)
	changeErrorCode        = "error-code"              // W3: a tool failure's code reaches the call's result as error_code (execute.go; asked only by calls whose failure has one)
	changeSubagents        = "subagents"               // G1: a subagents call runs as a child agent run, which adds what it did to the round's counts (subagent.go; asked only by rounds with such a call)
	changeChatbots         = "chatbots"                // G3: a send_to_chatbot call sends its message to the chatbot's persistent run (chatbot_round.go; asked only by rounds with such a call)
	changeTestTool         = "test-tool"               // G4: a test_tool call runs the script_* tool it names, checked, asked and counted as that tool's call (preflight.go; asked only by rounds with such a call)
	changeElicitation      = "mcp-elicitation"         // E1: a call whose MCP server asks for input waits as kind elicitation (elicit.go; asked only when a call's activity sends such a request)
	changeInputRounds      = "mcp-input-rounds"        // E1: an MCP call whose 2026-07-28 server answers input_required waits for a person and runs again with the answers (elicit.go; asked only by rounds with an MCP call)
	changeMCPTasks         = "mcp-tasks"               // E2: an MCP call whose server answers with a task polls it in activities that may be retried (elicit.go; asked only when a call's activity returns a task)
	changePlacement        = "workspace-placement"     // W4, W5: the round binds its workspace and runs its workspace calls on the bound host's queue, workspace_unavailable (placement.go; asked only by rounds of a worker with WORKSPACE_PLACEMENT=host that have a workspace call)
	changeBoundUsage       = "round-bound-usage"       // T15: a round not started by an agent run signs the usage it hands on for its round, with or without WORKER_LIMITS, and takes only the usage its run's previous round signed (else an input error); a counted rule the usage does not count is used up (limits.go; asked by every such round)
	changeFloorShares      = "floor-shares"            // T15: a subagent's share of each limit is floor(remaining/n) after the round's own calls, may be 0 (round.AgentInput.ZeroShare), is taken from WORKER_LIMITS too, and a background subagent's is reserved when it starts (subagent.go; asked only by rounds with a subagents call)
	changeRuleScope        = "rule-scope"              // T12: a remembered rule carries its scope (gate.go), and a call a pattern rule approved runs with it, round.ExecuteInput.RuleScope (execute.go; asked only when a rule is remembered or a pattern rule approved a call)
	ChangeAgentBounds      = "agent-bounds-forecast"   // L2: an agent run continues as new when its next pass would pass the history bounds (agentrun/continue.go; asked directly, only where the forecast alone says stop)
	changeToolSecrets      = "user-tool-secrets"       // Y3, T9: a user tool's call that sends {{secret:NAME}} gets the values sealed for its queue, and its sealed answer is opened and redacted (remote.go; asked only by such calls)
	changeFailedAttempts   = "failed-attempts"         // P2.4: a call whose attempts all failed reports how many it made, where it reported 1 (execute.go; asked only by such calls with more than one)
	changeBaseline1        = "baseline-2026-11-30"     // one marker for every change of baseline1
	changeBaseline2        = "baseline-2026-12-01"     // one marker for every change of baseline2
	changeBaseline3        = "baseline-2026-12-02"     // one marker for every change of baseline3
	changeBaseline4        = "baseline-2026-12-02b"    // one marker for every change of baseline4
)

// Each GetVersion that a new execution passes writes a marker event, and the
// Go SDK also updates the TemporalChangeVersion search attribute with it: a
// round that passed five change ids paid five markers and five search
// attribute updates, which the server writes to history and to visibility,
// for nothing but the record that it took the newest code.
//
// A baseline folds the changes it lists into one marker. An execution that
// starts on this code records changeBaseline4 once and takes every listed
// change at the version given there without asking again; an execution
// recorded before a baseline has no marker of it, so the baseline is
// DefaultVersion on replay and each change is asked for as it was when the
// execution ran.
//
// A baseline's list is closed (TestBaselineIsClosed): a change made after it
// calls version with an id not in it (it gets a marker of its own), or
// starts a new baseline that lists it. Never add to or change a list, since
// executions already recorded with its marker would then replay with
// different behaviour.

// baseline1 is every change of the round up to changeBaseline1, at the
// version a new execution takes.
var baseline1 = map[string]workflow.Version{
	changeSearch:        1,
	changeSince:         1,
	changeApprovals:     1,
	changeHonestRepeats: 1,
	changeOperationIDs:  1,
	changeKeyLimits:     1,
	changeReconcile:     1,
	changeLostAgain:     1,
}

// baseline2 is baseline1 and the changes after it, up to changeBaseline2.
var baseline2 = func() map[string]workflow.Version {
	m := map[string]workflow.Version{changeCallFinished: 1, changeHelpfulHints: 1}
	for k, v := range baseline1 {
		m[k] = v
	}
	return m
}()

// baseline3 is baseline2 and the changes after it, up to changeBaseline3.
// wire-formats is not in it: only rounds in another format ask for it.
var baseline3 = func() map[string]workflow.Version {
	m := map[string]workflow.Version{changeRunLimits: 1, changeLiveDecisions: 1}
	for k, v := range baseline2 {
		m[k] = v
	}
	return m
}()

// baseline4 is baseline3 and the changes after it, up to changeBaseline4.
var baseline4 = func() map[string]workflow.Version {
	m := map[string]workflow.Version{changeLeanOutput: 1, changeBuildMemo: 1}
	for k, v := range baseline3 {
		m[k] = v
	}
	return m
}()

type baselineKey struct{}

// withBaseline asks for the newest baseline once, at the start of the round,
// and returns the context whose descendants answer version from it. An
// execution recorded before changeBaseline4 has no marker of it and asks for
// changeBaseline3 as it did, one recorded before that changeBaseline2, and
// so on.
func withBaseline(ctx workflow.Context) workflow.Context {
	if workflow.GetVersion(ctx, changeBaseline4, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline4)
	}
	if workflow.GetVersion(ctx, changeBaseline3, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline3)
	}
	if workflow.GetVersion(ctx, changeBaseline2, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline2)
	}
	if workflow.GetVersion(ctx, changeBaseline1, workflow.DefaultVersion, 1) >= 1 {
		return workflow.WithValue(ctx, baselineKey{}, baseline1)
	}
	return ctx
}

// Version is workflow.GetVersion(ctx, change, DefaultVersion, max), except
// that an execution started with a baseline takes a listed change at its
// baseline version without a marker of its own.
func Version(ctx workflow.Context, change string, max workflow.Version) workflow.Version {
	if b, _ := ctx.Value(baselineKey{}).(map[string]workflow.Version); b != nil {
		if v, ok := b[change]; ok {
			return v
		}
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, max)
}
