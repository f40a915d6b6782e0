package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// ChatbotTimeout bounds one send_to_chatbot call: the chatbot's answer,
// its own rounds and their approvals included.
const ChatbotTimeout = 24 * time.Hour

// sendToChatbot sends call c's message to the chatbot it names (G3) with
// the SendToChatbot activity: update-with-start of the chatbot's
// persistent run in the round's session, the update's id the call's
// operation id. A chatbot has its configured tools that the round also
// has, no more auto_approve than the round, and the round's chain and
// depth one further; a chatbot already in the chain is a cycle. The future
// holds the call's wire.ExecuteOutput.
func (r *run) sendToChatbot(ctx workflow.Context, c *Call) workflow.Future {
	f, settable := workflow.NewFuture(ctx)
	fail := func(msg string) workflow.Future {
		settable.Set(wire.ExecuteOutput{IsError: true, Content: msg}, nil)
		return f
	}
	var a wire.ChatbotArgs
	if err := json.Unmarshal([]byte(c.Args), &a); err != nil {
		return fail(c.Tool + ": " + err.Error())
	}
	cb, ok := r.snap.Chatbots[a.Name]
	if !ok {
		return fail(fmt.Sprintf("no chatbot named %q on this worker: list_chatbot lists them", a.Name))
	}
	if wire.InChain(r.in.Chain, a.Name) {
		return fail(fmt.Sprintf("%s: chatbot %s is already in this conversation (%s): a message to it would wait for itself",
			round.Cycle, a.Name, strings.Join(append(slices.Clone(r.in.Chain), a.Name), " -> ")))
	}
	opID := round.OperationID(r.scope.WorkflowID, workflow.GetInfo(ctx).WorkflowExecution.RunID, c.CallID)
	msg := round.ChatMessage{MessageID: opID, Text: a.Message, AutoApprove: r.in.AutoApprove && !r.snap.DenyAutoApprove, Exclude: r.in.Exclude}
	in := wire.SendToChatbotInput{Start: r.chatbotInput(cb), Message: msg, Parent: r.scope.WorkflowID}
	if err := in.Start.ValidateStarted(); err != nil {
		return fail(err.Error())
	}
	if err := in.Message.Validate(); err != nil {
		return fail("message: " + err.Error())
	}
	id := names.AgentWorkflowID(in.Start.SessionID, in.Start.RunID)
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          "chatbot/" + c.CallID,
		StartToCloseTimeout: ChatbotTimeout,
		HeartbeatTimeout:    r.snap.HeartbeatTimeout,
		// A send again is answered from the same update: retrying is safe.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{round.ErrTypeInvalidInput, "NoClient"}},
		Summary: "message to chatbot " + a.Name,
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		var reply round.ChatReply
		err := workflow.ExecuteActivity(actx, wire.ActivitySendToChatbot, in).Get(ctx, &reply)
		switch {
		case temporal.IsCanceledError(err):
			settable.Set(nil, err)
		case err != nil:
			settable.Set(wire.ExecuteOutput{IsError: true, Content: "chatbot " + id + ": " + text.RootMessage(err)}, nil)
		case reply.Status == round.AgentCompleted:
			settable.Set(wire.ExecuteOutput{Content: reply.Text}, nil)
		default:
			msg := fmt.Sprintf("chatbot %s did not answer: %s", id, reply.Status)
			if reply.Reason != "" {
				msg += ": " + reply.Reason
			}
			if reply.Text != "" {
				msg += "; its last text: " + reply.Text
			}
			settable.Set(wire.ExecuteOutput{IsError: true, Content: msg}, nil)
		}
	})
	return f
}

// chatbotInput is the chatbot's persistent run as it starts when it is not
// running yet.
func (r *run) chatbotInput(cb ChatbotInfo) round.AgentInput {
	depth := r.in.Depth + 1
	most := r.snap.SubagentDepth
	if most <= 0 {
		most = round.DefaultSubagentDepth
	}
	exclude := slices.Clone(cb.Exclude) // the sender's own travel with each message

	if depth >= most {
		exclude = append(exclude, round.RecursiveTools...)
	}
	slices.Sort(exclude)
	exclude = slices.Compact(exclude)
	return round.AgentInput{
		SessionID: r.in.SessionID, RunID: names.ChatbotRunID(cb.Name), Provider: r.in.Provider,
		// The ceiling: each message's rounds auto-approve only when its
		// sender does too (ChatMessage.AutoApprove).
		AutoApprove:           !r.snap.DenyAutoApprove,
		ConfirmTimeoutSeconds: r.in.ConfirmTimeoutSeconds,
		SystemPrompt:          cb.SystemPrompt, Exclude: exclude, Depth: depth, Parent: r.scope.WorkflowID, Name: cb.Name,
		Persistent: true, Chain: append(slices.Clone(r.in.Chain), cb.Name), Model: cb.Model,
	}
}
