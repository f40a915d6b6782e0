// Package names holds the names toolround registers with Temporal and the
// ids it gives its workflows: what a client that speaks to Temporal
// directly, in any language, needs besides the payloads of package round.
//
// They are stable strings, apart from Go identifiers, so renaming a function
// never orphans a running round; SPEC's interface contract lists the same
// names. The payload each one carries is in package round: a signal or an
// update named here takes the round type its comment names, a query answers
// with one.
package names

// Workflow types.
const (
	// WorkflowName is the round's workflow type (its input is round.Input,
	// its result round.Result).
	WorkflowName = "ToolRound"
	// AgentWorkflowName is the agent run's workflow type
	// (round.AgentInput).
	AgentWorkflowName = "AgentRun"
	// WorkflowToolCatalog asks a worker of the task queue for its tools
	// (its built-ins, MCP servers and TOOLS_CONFIG tools), for `starter
	// tools --worker`.
	WorkflowToolCatalog = "ToolCatalog"
	// WorkflowGateway owns one MCP gateway run's state (Z2): its id is
	// GatewayWorkflowID(session, run).
	WorkflowGateway = "MCPGateway"
	// WorkflowGatewayTools lists what the gateway may offer
	// (round.GatewayTool), as WorkflowToolCatalog does for a provider.
	WorkflowGatewayTools = "GatewayTools"
)

// Signals. A client sends the update of the same name where there is one,
// so that it learns whether the round took it; rounds still take the
// signals as they always did.
const (
	// SignalConfirm carries a human decision on a call (round.Confirm,
	// P1.6).
	SignalConfirm = "confirm"
	// SignalAnswer carries the answer to an ask_user call (round.Answer).
	SignalAnswer = "answer"
	// SignalToolResult carries the result of a client tool that the client
	// ran (round.ToolResult).
	SignalToolResult = "tool_result"
	// SignalExtend adds to a waiting call's deadline (round.Extend, T3).
	SignalExtend = "extend"
	// SignalUserMessage carries a round.UserMessage that joins an agent
	// run's conversation before its next model call (A3).
	SignalUserMessage = "user_message"
)

// Updates. Each validator refuses, before anything is recorded, with an
// application error whose type is a round.ErrorCode's string, so the
// caller learns that nothing moved.
const (
	// UpdateConfirm carries a round.Confirm. Its validator refuses a
	// decision for a call that does not wait, a stale approval_id, edited
	// arguments that fail the schema and the other refusals of T1, B1, B2
	// and N2 (round.CodeNotWaiting, round.CodeStaleApproval,
	// round.CodeInvalidArgs, round.CodeAlreadyDecided,
	// round.CodeStaleWait, round.CodeInvalidDecision,
	// round.CodeInvalidPattern, round.CodeLinkUsed).
	UpdateConfirm = "confirm"
	// UpdateExtend carries a round.Extend and answers with a
	// round.Extended; its validator refuses a call that does not wait for
	// a decision (round.CodeNotWaiting) and fewer than one second
	// (round.CodeBadRequest).
	UpdateExtend = "extend"
	// UpdateToolResult carries a client tool's result (round.ToolResult,
	// Y5); its validator refuses a call that does not wait for a tool
	// result (round.CodeNotWaiting) and another wait's wait_id
	// (round.CodeStaleWait).
	UpdateToolResult = "tool_result"
	// UpdateAnswer carries a person's answer to an elicitation
	// (round.ElicitAnswer, E1). Its validator refuses a call that does
	// not wait for one (round.CodeNotWaiting), a wait_id that is not the
	// current wait's (round.CodeStaleWait) and content that fails the
	// requested schema or an action that is none of accept, decline and
	// cancel (round.CodeInvalidAnswer). ask_user answers stay on
	// SignalAnswer.
	UpdateAnswer = "answer"
	// UpdateGatewayCall hands the gateway workflow one call
	// (round.GatewayCall); it answers with the round.GatewayTicket of
	// the round that runs it.
	UpdateGatewayCall = "call"
)

// Queries.
const (
	// QueryPending lists the calls that wait for a human or a client
	// (round.Pending).
	QueryPending = "pending"
	// QueryProgress tells which calls are queued, running, waiting or done
	// (round.Progress).
	QueryProgress = "progress"
	// QueryAgentStatus answers with an agent run's round.AgentStatus.
	QueryAgentStatus = "status"
)

// Search attributes that the round keeps current, so that an inbox lists the
// rounds that wait for a person from Temporal visibility (T7), and that name
// a subagent's parent.
const (
	SearchSession      = "ToolroundSession"      // Keyword
	SearchWaiting      = "ToolroundWaiting"      // Bool
	SearchWaitingCalls = "ToolroundWaitingCalls" // Int
	// SearchParent names a subagent's parent workflow.
	SearchParent = "ToolroundParent" // Keyword
)

// Memo fields.
const (
	// MemoWaitingSince is the memo field in which a round that waits for a
	// person keeps when the oldest of its waiting calls began to wait (the
	// earliest `since` of its pending decisions and answers), so that a
	// visibility listing tells how long approvals have waited without
	// asking each round. It is a memo, not a search attribute: nothing
	// filters on it, and a namespace needs nothing registered for it. It is
	// written only while calls wait; ToolroundWaiting says whether they
	// still do.
	MemoWaitingSince = "ToolroundWaitingSince"
	// MemoBuildID is the memo field of the build (WORKER_BUILD_ID) whose
	// worker started the round (V1).
	MemoBuildID = "ToolroundBuildID"
)
