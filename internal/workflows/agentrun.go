package workflows

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/round"
)

// AgentWorkflow is the durable agent run (A1-A3): the model call as an
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
type AgentWorkflow struct {
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
	// AgentHistoryEvents: past this many events the run continues as new.
	// Temporal warns at 10,240 and stops a workflow at 51,200.
	AgentHistoryEvents = 2000
	// AgentHistoryBytes: past this history size the run continues as new.
	// Temporal warns at 10 MiB and stops a workflow at 50 MiB.
	AgentHistoryBytes = 8 << 20
	// AgentInlineContent is the largest message content the conversation
	// keeps inline; a larger one is kept in the blob store.
	AgentInlineContent = 16 << 10
	// AgentConversationBudget bounds the encoded conversation: the model
	// call's input and the continue-as-new input carry it, beside the run
	// state (StateBudget).
	AgentConversationBudget = 768 << 10
	// agentPreview is what stays inline of a content kept in the blob store.
	agentPreview = 1 << 10
)

// agent is one execution's working state.
type agent struct {
	in     round.AgentInput
	scope  round.AgentScope
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
	// chat: a persistent run's messages (G3, chatbot.go).
	chat chat
}

// Run is the workflow function.
func (w *AgentWorkflow) Run(ctx workflow.Context, in round.AgentInput) (round.AgentStatus, error) {
	if err := in.ValidateStarted(); err != nil {
		return round.AgentStatus{}, temporal.NewNonRetryableApplicationError("invalid agent input: "+err.Error(), round.ErrTypeInvalidInput, err)
	}
	in = in.WithDefaults()
	a := &agent{in: in, status: round.AgentRunning,
		scope: round.AgentScope{SessionID: in.SessionID, RunID: in.RunID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID}}
	if c := in.Carry; c != nil {
		a.conv, a.state, a.round, a.calls, a.execs = c.Conversation, c.State, c.Round, c.ModelCalls, c.Executions
		a.last = c.LastRequest
		a.chat.replies = c.Replies
		a.in.Carry = nil
	} else if in.Task != "" || !in.Persistent {
		a.conv = []round.AgentMessage{{Role: "user", Content: in.Task}}
	}
	if err := workflow.SetQueryHandler(ctx, round.QueryAgentStatus, func() (round.AgentStatus, error) {
		return a.snapshot(), nil
	}); err != nil {
		return round.AgentStatus{}, err
	}
	if in.Persistent {
		if err := a.startChat(ctx); err != nil {
			return round.AgentStatus{}, err
		}
		if len(a.conv) > 0 && in.Carry == nil {
			a.chat.current = "task" // the task is answered first, as a message
		}
	}
	userMessages := workflow.GetSignalChannel(ctx, round.SignalUserMessage)
	var hb time.Duration
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return w.heartbeat() }).Get(&hb); err != nil {
		return round.AgentStatus{}, err
	}
	if err := a.startLimits(ctx, w.Limits); err != nil {
		return round.AgentStatus{}, err
	}
	a.apis = version(ctx, changeAgentAPIs, 1) >= 1
	budgetVersion := version(ctx, changeAgentBudget, 2)
	a.budget, a.refresh = budgetVersion >= 1, budgetVersion >= 2

	for {
		// 0. A persistent run between messages waits for the next (G3).
		if a.chat.on && a.chat.current == "" {
			again, err := a.nextMessage(ctx)
			if err != nil || ctx.Err() != nil {
				a.status = round.AgentCancelled
				break
			}
			if again {
				return round.AgentStatus{}, a.continueAsNew(ctx)
			}
		}
		// 1. User messages.
		a.takeUserMessages(userMessages)
		if ctx.Err() != nil {
			a.status = round.AgentCancelled
			break
		}
		// 2. Large contents out of the conversation.
		a.fit(ctx)
		// 3. Continue as new past the bounds.
		if !a.chat.on && a.pastBounds(ctx) { // a persistent run continues as new between messages only
			// Messages that arrived while fit stored contents go along.
			a.takeUserMessages(userMessages)
			return round.AgentStatus{}, a.continueAsNew(ctx)
		}
		// B1: past max_seconds or max_model_tokens, no more model calls.
		if a.pastLimit(ctx) {
			break
		}
		// 4. The model call.
		crashpoint.Step(ctx, "agent.model.before")
		out, err := a.callModel(ctx, hb, w.modelTimeout())
		crashpoint.Step(ctx, "agent.model.after")
		if err != nil {
			if isCancel(ctx, err) {
				a.status = round.AgentCancelled
				break
			}
			return a.snapshot(), a.failChat(ctx, err)
		}
		a.calls++
		if a.budget && a.takeBudget(out) {
			break
		}
		if out.Request != nil {
			a.last = out.Request
		}
		a.conv = append(a.conv, out.Message)
		a.countTokens(out.Tokens)
		// 5. The answer or the next round: a turn cut off or refused is
		// never the answer (F4); a paused turn goes back as it is.
		if a.apis && a.stopped(out) {
			break
		}
		if a.apis && out.Stop == round.StopPause {
			a.takeUserMessages(userMessages)
			continue
		}
		if len(out.Message.ToolCalls) == 0 {
			a.final = out.Message.Content
			if a.takeUserMessages(userMessages) {
				continue // the person said more while the model answered
			}
			if a.chat.on {
				a.reply(round.AgentCompleted, a.final, "") // and wait for the next message
				continue
			}
			a.status = round.AgentCompleted
			break
		}
		if a.roundsOfMessage() >= a.in.MaxRounds {
			if a.chat.on {
				// The turn's calls do not run: the conversation keeps its
				// text only, so that the next message follows an answer.
				last := &a.conv[len(a.conv)-1]
				last.ToolCalls, last.ArgRefs, last.Raw, last.RawRef, last.Format = nil, nil, nil, "", ""
				a.reply(round.AgentRoundLimit, out.Message.Content, fmt.Sprintf("the message took more than max_rounds (%d) rounds", a.in.MaxRounds))
				continue
			}
			a.status = round.AgentRoundLimit
			break
		}
		if a.pastLimit(ctx) {
			break // the tool calls of a reply past the limit do not run
		}
		a.round++
		crashpoint.Step(ctx, "agent.round.before")
		res, err := a.runRound(ctx, out.Message)
		crashpoint.Step(ctx, "agent.round.after")
		if err != nil {
			if isCancel(ctx, err) {
				a.status = round.AgentCancelled
				break
			}
			return a.snapshot(), a.failChat(ctx, err)
		}
		a.appendResults(ctx, res)
		if ctx.Err() != nil {
			a.status = round.AgentCancelled
			break
		}
		if a.limitWaitExpired(res) {
			break
		}
	}
	if a.status == round.AgentCancelled {
		a.cancelChildren(ctx)
	}
	a.closeChat(ctx)
	a.finish(ctx)
	return a.snapshot(), nil
}

// cancelChildren asks the run's background subagents to stop (G2); each
// still gives its own calls a result. A run without any asks nothing, so
// runs recorded before background subagents replay as they ran.
func (a *agent) cancelChildren(ctx workflow.Context) {
	if a.state == nil || len(a.state.Children) == 0 {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var fs []workflow.Future
	for _, id := range a.state.Children {
		fs = append(fs, workflow.RequestCancelExternalWorkflow(dctx, id, ""))
	}
	for i, f := range fs {
		if err := f.Get(dctx, nil); err != nil {
			workflow.GetLogger(ctx).Info("a background subagent was not cancelled (it may have ended)", "subagent", a.state.Children[i], "error", err)
		}
	}
}

// takeBudget puts the tool results the call's budget shortened into the
// conversation, and their references into the run state, the only ones
// read_result reads (B3). It reports whether the run ends
// context_exceeded.
func (a *agent) takeBudget(out round.ModelOutput) bool {
	for _, b := range out.Budgeted {
		if b.Msg < 0 || b.Msg >= len(a.conv) || b.Ref == "" {
			continue
		}
		m := &a.conv[b.Msg]
		m.Content, m.ContentRef, m.Budgeted = b.Content, b.Ref, true
		if a.state == nil || !slices.Contains(a.state.ResultRefs, b.Ref) {
			st := a.state.Clone() // a new state: the old one may be a round's input still
			st.ResultRefs = append(st.ResultRefs, b.Ref)
			a.state = st
		}
	}
	if !out.ContextExceeded {
		return false
	}
	a.status = round.AgentContextExceeded
	a.reason = "the system message, the user messages and the last two rounds alone pass the context budget (LLM_CONTEXT_TOKENS)"
	return true
}

// stopped reports whether the turn ends the run truncated or refused.
func (a *agent) stopped(out round.ModelOutput) bool {
	switch out.Stop {
	case round.StopTruncated:
		a.status = round.AgentTruncated
		a.reason = fmt.Sprintf("the model's turn was cut off (%s); its tool calls did not run", out.FinishReason)
	case round.StopRefused:
		a.status = round.AgentRefused
		a.reason = fmt.Sprintf("the model refused (%s)", out.FinishReason)
	default:
		return false
	}
	return true
}

func (w *AgentWorkflow) heartbeat() time.Duration {
	if w.HeartbeatTimeout > 0 {
		return w.HeartbeatTimeout
	}
	return 10 * time.Second
}

func (w *AgentWorkflow) modelTimeout() time.Duration {
	if w.ModelTimeout > 0 {
		return w.ModelTimeout
	}
	return 10 * time.Minute
}

func isCancel(ctx workflow.Context, err error) bool {
	var ce *temporal.CanceledError
	return ctx.Err() != nil || errors.As(err, &ce)
}

// takeUserMessages appends the user messages that arrived; it reports
// whether there were any.
func (a *agent) takeUserMessages(ch workflow.ReceiveChannel) bool {
	took := false
	for {
		var m round.UserMessage
		if !ch.ReceiveAsync(&m) {
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
		st.Limits = round.LimitCounts(&a.limits, a.state.Usage, a.now)
	}
	if a.in.Parent != "" && a.state != nil {
		st.Usage = a.state.Usage.Counts() // for the round that started it (G1)
	}
	return st
}

func (a *agent) pastBounds(ctx workflow.Context) bool {
	events, size := a.in.HistoryEvents, a.in.HistoryBytes
	if events <= 0 {
		events = AgentHistoryEvents
	}
	if size <= 0 {
		size = AgentHistoryBytes
	}
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() >= events || info.GetCurrentHistorySize() >= size
}

func (a *agent) continueAsNew(ctx workflow.Context) error {
	if a.refresh {
		a.refreshRefs(ctx)
	}
	next := a.in
	next.Carry = &round.AgentCarry{Conversation: a.conv, State: a.state, Round: a.round, ModelCalls: a.calls, Executions: a.execs + 1, LastRequest: a.last,
		Replies: a.chat.replies}
	return workflow.NewContinueAsNewError(ctx, round.AgentWorkflowName, next)
}

// refreshRefs gives every blob reference the next execution carries (the
// results the budget replaced, the contents and arguments fit stored, the
// run state's) the store's whole TTL again, so that a live run's
// references outlive it (B3). A store that fails costs only a warning:
// the run goes on, and the next continue-as-new asks again.
func (a *agent) refreshRefs(ctx workflow.Context) {
	refs := carriedRefs(a.conv, a.state)
	if len(refs) == 0 {
		return
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "refresh stored contents",
	})
	var out round.RefreshContentsOutput
	if err := workflow.ExecuteLocalActivity(lctx, round.ActivityRefreshContents, round.RefreshContentsInput{Refs: refs}).Get(lctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("refreshing the run's stored contents failed", "refs", len(refs), "error", err)
	}
}

// carriedRefs are the blob references of a conversation and a run state,
// each once, sorted.
func carriedRefs(conv []round.AgentMessage, st *round.RunState) []string {
	var refs []string
	for _, m := range conv {
		refs = append(refs, m.ContentRef)
		refs = append(refs, m.ArgRefs...)
	}
	if st != nil {
		refs = append(refs, st.ResultRefs...)
		for _, k := range sortedDedupeKeys(st.Dedupe) {
			refs = append(refs, st.Dedupe[k].ContentRef)
		}
	}
	refs = slices.DeleteFunc(refs, func(r string) bool { return r == "" })
	slices.Sort(refs)
	return slices.Compact(refs)
}

func (a *agent) callModel(ctx workflow.Context, hb, timeout time.Duration) (round.ModelOutput, error) {
	n := a.calls + 1
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("model/%d", n),
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 8,
			NonRetryableErrorTypes: []string{"ModelRejected", "NoModel"},
		},
		Summary: fmt.Sprintf("model call %d", n),
	})
	in := round.ModelInput{
		SessionID: a.in.SessionID, RunID: a.in.RunID, WorkflowID: a.scope.WorkflowID, Call: n, Round: a.round + 1,
		Provider: a.in.Provider, ClientTools: a.in.ClientTools, Messages: a.conv, Budget: a.budget, Last: a.last,
		SystemPrompt: a.in.SystemPrompt, Exclude: a.exclude(), // a subagent's (G1), a chatbot's and its sender's (G3)
		Model:  a.in.Model,  // a chatbot's (G3)
		Script: a.in.Script, // a scripted model's turns (docs/scripted-model.md)
	}
	var out round.ModelOutput
	err := workflow.ExecuteActivity(actx, round.ActivityModelCall, in).Get(actx, &out)
	return out, err
}

func (a *agent) runRound(ctx workflow.Context, msg round.AgentMessage) (round.Output, error) {
	in := round.Input{
		SessionID: a.in.SessionID, RunID: a.in.RunID, Round: a.round, Provider: a.in.Provider, AutoApprove: a.autoApprove(),
		Assistant:   round.Message{Role: "assistant", Content: msg.Content, ToolCalls: msg.ToolCalls},
		ClientTools: a.in.ClientTools, State: a.state, ConfirmTimeoutSeconds: a.in.ConfirmTimeoutSeconds,
		Exclude: a.exclude(), Depth: a.in.Depth, // a subagent's (G1), a chatbot's and its sender's (G3)
		Chain: a.in.Chain, // a chatbot's, or a run started under one (G3)
	}
	if a.limited {
		in.Limits = a.in.Limits
	}
	if a.apis && len(msg.Raw) > 0 {
		// The turn as the API gave it, so the round reads its calls in its
		// format and its messages come back in it (F1, F2).
		in.Format, in.Assistant = msg.Format.Name(), round.Message{}
		if in.Format == round.FormatAnthropic {
			in.Turn = msg.Raw
		} else {
			in.Output = msg.Raw
		}
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: in.WorkflowID(),
		// A round id names one execution for good: a closed round is never
		// run again under its id (R). The run carries every finished
		// round's result, so it never asks for one twice.
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// A run that is terminated still lets its round give every call a
		// result; a cancelled run waits for that.
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		StaticSummary:       fmt.Sprintf("round %d of agent run %s (%d calls)", a.round, a.in.RunID, len(msg.ToolCalls)),
	})
	var out round.Output
	err := workflow.ExecuteChildWorkflow(cctx, round.WorkflowName, in).Get(cctx, &out)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		// Only a round started outside this run (starter round with the
		// same session and run id) can hold the id: it is never run again.
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"round %s was already started outside this agent run; round ids are never reused: start the agent under another run id", in.WorkflowID()),
			"RoundIDTaken", err)
	}
	return out, err
}

// appendResults adds a round's tool messages, in call order, and takes its
// run state.
func (a *agent) appendResults(ctx workflow.Context, res round.Output) {
	notes := version(ctx, changeAgentRepeatNotes, 1) >= 1
	for _, r := range res.Results {
		m := round.AgentMessage{Role: "tool", ToolCallID: r.CallID, Content: round.MessageContent(r.Tool, r.Content)}
		if notes {
			m.Note = r.Repeat.Note()
			m.Content = round.NotedContent(r.Tool, m.Note, r.Content)
		}
		if r.ContentRef != "" {
			m.ContentRef, m.Tool = r.ContentRef, r.Tool
		}
		if a.apis {
			m.IsError = round.IsError(r.Status)
		}
		a.conv = append(a.conv, m)
	}
	if res.State != nil {
		a.state = res.State
	}
}

// fit moves the texts planConversation picks (message contents and
// tool-call arguments) to the blob store (the round's StoreContents local
// activity); what stays is a preview and the reference, which the model
// call reads back.
func (a *agent) fit(ctx workflow.Context) {
	picked := planConversation(a.conv, AgentInlineContent, AgentConversationBudget)
	if len(picked) == 0 {
		return
	}
	contents := make([]string, len(picked))
	for i, p := range picked {
		contents[i] = p.text(a.conv)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "store large messages",
	})
	var out round.StoreContentsOutput
	err := workflow.ExecuteLocalActivity(lctx, round.ActivityStoreContents, round.StoreContentsInput{Contents: contents, Preview: agentPreview}).Get(lctx, &out)
	if err != nil || len(out.Stored) != len(picked) {
		workflow.GetLogger(ctx).Warn("storing large messages failed; the conversation keeps them", "error", err)
		return
	}
	for i, p := range picked {
		if out.Stored[i].Ref == "" {
			continue // no blob store: the text stays whole
		}
		m := &a.conv[p.msg]
		if p.call < 0 {
			// The stored text is the whole message content, so Tool is
			// cleared: it is read back as it is.
			m.Content, m.ContentRef, m.Tool = out.Stored[i].Content, out.Stored[i].Ref, ""
			continue
		}
		if len(m.ArgRefs) < len(m.ToolCalls) {
			m.ArgRefs = append(m.ArgRefs, make([]string, len(m.ToolCalls)-len(m.ArgRefs))...)
		}
		m.ToolCalls[p.call].Function.Arguments = round.Arguments(out.Stored[i].Content)
		m.ArgRefs[p.call] = out.Stored[i].Ref
	}
}

// piece is one text of a conversation that may move to the blob store: the
// content of message msg (call -1) or the arguments of its tool call call.
type piece struct{ msg, call, size int }

func (p piece) text(conv []round.AgentMessage) string {
	if p.call < 0 {
		return conv[p.msg].Content
	}
	return string(conv[p.msg].ToolCalls[p.call].Function.Arguments)
}

// planConversation picks the texts that go to the blob store: every inline
// content or tool-call arguments above inline bytes, then the largest
// others until the encoded conversation fits budget. It is pure.
func planConversation(conv []round.AgentMessage, inline, budget int) []piece {
	size := encodedLen(conv)
	var picked, rest []piece
	consider := func(p piece) {
		if p.size <= agentPreview+200 {
			return // a preview would save nothing
		}
		if p.size > inline {
			picked = append(picked, p)
			size -= p.size - agentPreview - noteBytes - refBytes
		} else {
			rest = append(rest, p)
		}
	}
	for i, m := range conv {
		if m.ContentRef == "" {
			consider(piece{msg: i, call: -1, size: len(m.Content)})
		}
		for j, c := range m.ToolCalls {
			if j >= len(m.ArgRefs) || m.ArgRefs[j] == "" {
				consider(piece{msg: i, call: j, size: len(c.Function.Arguments)})
			}
		}
	}
	sort.SliceStable(rest, func(x, y int) bool { return rest[x].size > rest[y].size })
	for _, p := range rest {
		if size <= budget {
			break
		}
		picked = append(picked, p)
		size -= p.size - agentPreview - noteBytes - refBytes
	}
	sort.SliceStable(picked, func(x, y int) bool {
		if picked[x].msg != picked[y].msg {
			return picked[x].msg < picked[y].msg
		}
		return picked[x].call < picked[y].call
	})
	return picked
}

// finish publishes the run's last event; a cancelled run publishes it too.
func (a *agent) finish(ctx workflow.Context) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2, InitialInterval: 100 * time.Millisecond},
		Summary:             "publish the run's end",
	})
	e := a.scope.AgentFinished(a.round, a.status)
	e.Time = workflow.Now(ctx)
	in := round.PublishInput{SessionID: a.in.SessionID, RunID: a.in.RunID, WorkflowID: a.scope.WorkflowID, Events: []round.Event{e}}
	if err := workflow.ExecuteLocalActivity(lctx, round.ActivityPublishRound, in).Get(lctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("publishing the run's end failed", "error", err)
	}
}
