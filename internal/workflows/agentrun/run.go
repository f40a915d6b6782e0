// Package agentrun is the agent run's workflow, agentrun/<session>/<run>
// (A1-A3): a loop of model calls, each answer's tool calls a child round
// of internal/workflows; subagents are agent runs of their own, and a
// chatbot is one in persistent mode (G1-G3). Its change ids are asked
// through the versions table of internal/workflows.
package agentrun

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// Workflow is the durable agent run (A1-A3): the model call as an
// activity, each round of tool calls as a child round workflow with the
// round's usual id, the conversation and the run state in the workflow.
// The loop:
//
//  1. user messages that arrived join the conversation (signal user_message);
//  2. large contents move to the blob store, so every payload stays far
//     below Temporal's 2 MiB;
//  3. past the history bounds, the run continues as new, carrying the
//     conversation, the run state and its counters;
//  4. the model call (activities.Model): its answer is in history once it
//     completed, so a crash never repeats it (A2);
//  5. no tool calls: the final answer; else, past max_rounds: round_limit;
//     else the child round toolround/<session>/<run>/<n>, whose tool
//     messages join the conversation.
//
// Cancelling the run cancels the running model call or round; a round
// still gives every call a result, which joins the conversation.
//
// Run and pass (this file) list the steps; each has a file of its own:
//
//	start.go        the input, the state carried over, the handlers,
//	                the versions the run asks once
//	chat.go      0. a persistent run between messages waits for the next
//	             1. user messages (takeUserMessages, this file)
//	fit.go       2. large contents out of the conversation
//	continue.go  3. continue-as-new past the history bounds
//	limits.go       B1: the run's limits, checked before each model
//	                call and each round
//	model.go     4. the model call and what its answer brings
//	round.go     5. the answer, or the child round of its tool calls
//	end.go          cancelling background subagents, closing the
//	                chat, publishing the run's end
type Workflow struct {
	// HeartbeatTimeout of the model call: a dead worker is noticed this
	// soon. Zero: 10 seconds.
	HeartbeatTimeout time.Duration
	// ModelTimeout bounds one attempt of a model call. Zero: 10 minutes.
	ModelTimeout time.Duration
	// Limits are the worker's WORKER_LIMITS (B1): the run's max_seconds and
	// max_model_tokens are within them whatever its input says.
	Limits round.Limits
}

// Bounds of an agent run's history and payloads. A round costs the run
// about 15 history events (measured over 200 rounds: the model call's three,
// the child's three, two or three workflow tasks) and the size of one
// conversation (the model call's input); see BENCHMARKS.md ("Agent runs").
const (
	// HistoryEvents: past this many events the run continues as new.
	// Temporal warns at 10,240 and stops a workflow at 51,200.
	HistoryEvents = 2000
	// HistoryBytes: past this history size the run continues as new.
	// Temporal warns at 10 MiB and stops a workflow at 50 MiB.
	HistoryBytes = 8 << 20
	// InlineContent is the largest message content the conversation
	// keeps inline; a larger one is kept in the blob store.
	InlineContent = 16 << 10
	// ConversationBudget bounds the encoded conversation: the model
	// call's input and the continue-as-new input carry it, beside the run
	// state (StateBudget).
	ConversationBudget = 768 << 10
	// agentPreview is what stays inline of a content kept in the blob store.
	agentPreview = 1 << 10
)

// agent is one execution's working state.
type agent struct {
	in     round.AgentInput
	scope  wire.AgentScope
	status string
	conv   []round.AgentMessage
	state  *round.RunState
	round  int // rounds run so far
	calls  int // model calls made so far
	execs  int // executions before this one
	final  string
	// limited: the run takes its limits (changeAgentLimits); limits are
	// its input's within the worker's; now is the time of the loop's last
	// step, for the status query; reason says why it ended limit_reached.
	limited bool
	limits  round.Limits
	now     time.Time
	reason  string
	// apis: the run reads its turns' stops and runs turns of the Messages
	// and Responses APIs in their format (changeAgentAPIs).
	apis bool
	// budget: its model requests keep within the context budget (B3,
	// changeAgentBudget); last is the size of its last request, which
	// the next one is estimated from.
	budget bool
	last   *round.RequestSize
	// refresh: at continue-as-new its blob references get the store's
	// TTL again (B3, changeAgentBudget version 2).
	refresh bool
	// chat: a persistent run's messages (G3, chat.go).
	chat chat
	// seen is the history at pastBounds' last look.
	seen boundsSeen
	// userMessages is the signal channel of user_message; hb and timeout
	// are the model call's heartbeat timeout (recorded once) and its
	// timeout.
	userMessages workflow.ReceiveChannel
	hb, timeout  time.Duration
}

// Run is the workflow function: the run's start, the passes of its loop
// until one ends it, and its end.
func (w *Workflow) Run(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
	a, err := w.start(ctx, in) // start.go
	if err != nil {
		return round.AgentStatus{}, err
	}
	for {
		switch n, err := a.pass(ctx); n {
		case nextNew:
			return round.AgentStatus{}, err // the ContinueAsNewError
		case nextFail:
			return a.snapshot(), a.failChat(ctx, err) // chat.go
		case nextEnd:
			a.end(ctx) // end.go
			return a.snapshot(), nil
		}
	}
}

// next is what a step of the loop leaves the run to do.
type next int

const (
	// nextStep: the pass goes on with its next step; after its last, the
	// loop makes its next pass.
	nextStep next = iota
	// nextEnd: the loop ends; the run ends with its status.
	nextEnd
	// nextNew: the run continues as new; the error is the
	// ContinueAsNewError.
	nextNew
	// nextFail: the run fails with the error.
	nextFail
)

// pass is one pass of the run's loop: its steps, in order.
func (a *agent) pass(ctx workflow.Context) (next, error) {
	// 0. A persistent run between messages waits for the next (G3).
	if n, err := a.awaitMessage(ctx); n != nextStep {
		return n, err
	}
	// 1. User messages.
	a.takeUserMessages()
	if ctx.Err() != nil {
		return a.cancelled()
	}
	// 2. Large contents out of the conversation.
	a.fit(ctx)
	// 3. Continue as new past the bounds; a persistent run continues as
	// new between messages only.
	if !a.chat.on && a.pastBounds(ctx) {
		a.takeUserMessages() // messages that arrived while fit stored contents go along
		return nextNew, a.continueAsNew(ctx)
	}
	// B1: past max_seconds or max_model_tokens, no more model calls.
	if a.pastLimit(ctx) {
		return nextEnd, nil
	}
	// 4. The model call.
	out, n, err := a.model(ctx)
	if n != nextStep {
		return n, err
	}
	// 5. The answer, or the round of its tool calls.
	return a.answerOrRound(ctx, out)
}

// cancelled ends the run cancelled.
func (a *agent) cancelled() (next, error) {
	a.status = round.AgentCancelled
	return nextEnd, nil
}

// stopOn is what an error of the model call or of a round leaves the run
// to do: a cancelled run ends cancelled, any other error fails it.
func (a *agent) stopOn(ctx workflow.Context, err error) (next, error) {
	if isCancel(ctx, err) {
		return a.cancelled()
	}
	return nextFail, err
}

func isCancel(ctx workflow.Context, err error) bool {
	var ce *temporal.CanceledError
	return ctx.Err() != nil || errors.As(err, &ce)
}

// takeUserMessages appends the user messages that arrived; it reports
// whether there were any.
func (a *agent) takeUserMessages() bool {
	took := false
	for {
		var m round.UserMessage
		if !a.userMessages.ReceiveAsync(&m) {
			return took
		}
		a.conv = append(a.conv, round.AgentMessage{Role: "user", Content: m.Text})
		took = true
	}
}

func (a *agent) snapshot() round.AgentStatus {
	st := round.AgentStatus{
		WorkflowID: a.scope.WorkflowID, Status: a.status, Round: a.round, ModelCalls: a.calls,
		Executions: a.execs + 1, Conversation: append([]round.AgentMessage(nil), a.conv...), Final: a.final, Reason: a.reason,
	}
	if a.limited && a.state != nil {
		st.Limits = wire.LimitCounts(&a.limits, a.state.Usage, a.now)
	}
	if a.in.Parent != "" && a.state != nil {
		st.Usage = a.state.Usage.Counts() // for the round that started it (G1)
	}
	return st
}
