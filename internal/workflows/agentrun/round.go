package agentrun

import (
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// answerOrRound is step 5. A turn cut off or refused is never the answer
// (F4), and a paused turn goes back as it is; a turn without tool calls is
// the answer; past max_rounds the run ends round_limit; else the child
// round toolround/<session>/<run>/<n> runs the turn's calls.
func (a *agent) answerOrRound(ctx workflow.Context, out wire.ModelOutput) (next, error) {
	if a.apis && a.stopped(out) {
		return nextEnd, nil
	}
	if a.apis && out.Stop == round.StopPause {
		a.takeUserMessages()
		return nextStep, nil
	}
	if len(out.Message.ToolCalls) == 0 {
		return a.answer(out.Message.Content), nil
	}
	if a.roundsOfMessage() >= a.in.MaxRounds {
		return a.roundLimit(out.Message.Content), nil
	}
	if a.pastLimit(ctx) {
		return nextEnd, nil // the tool calls of a reply past the limit do not run
	}
	return a.nextRound(ctx, out.Message)
}

// answer takes the text of a turn without tool calls as the answer. The
// run completes with it, unless the person said more while the model
// answered; a persistent run replies with it and waits for the next
// message (G3).
func (a *agent) answer(text string) next {
	a.final = text
	if a.takeUserMessages() {
		return nextStep // the person said more while the model answered
	}
	if a.chat.on {
		a.reply(round.AgentCompleted, a.final, "") // and wait for the next message
		return nextStep
	}
	a.status = round.AgentCompleted
	return nextEnd
}

// roundLimit ends a run whose turn would pass max_rounds round_limit; a
// persistent run instead replies so with the turn's text to the current
// message (G3) and waits for the next.
func (a *agent) roundLimit(text string) next {
	if a.chat.on {
		// The turn's calls do not run: the conversation keeps its
		// text only, so that the next message follows an answer.
		last := &a.conv[len(a.conv)-1]
		last.ToolCalls, last.ArgRefs, last.Raw, last.RawRef, last.Format = nil, nil, nil, "", ""
		a.reply(round.AgentRoundLimit, text, fmt.Sprintf("the message took more than max_rounds (%d) rounds", a.in.MaxRounds))
		return nextStep
	}
	a.status = round.AgentRoundLimit
	return nextEnd
}

// nextRound runs the turn's tool calls as the run's next round; their
// tool messages join the conversation. A call whose wait past a limit
// expired ends the run limit_reached (B1).
func (a *agent) nextRound(ctx workflow.Context, msg round.AgentMessage) (next, error) {
	a.round++
	crashpoint.Step(ctx, "agent.round.before")
	res, err := a.runRound(ctx, msg)
	crashpoint.Step(ctx, "agent.round.after")
	if err != nil {
		return a.stopOn(ctx, err)
	}
	a.appendResults(ctx, res)
	if ctx.Err() != nil {
		return a.cancelled()
	}
	if a.limitWaitExpired(res) {
		return nextEnd, nil
	}
	return nextStep, nil
}

// stopped reports whether the turn ends the run truncated or refused.
func (a *agent) stopped(out wire.ModelOutput) bool {
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

// runRound runs the child round of a turn's tool calls, with the
// round's usual id, and returns its output.
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
	err := workflow.ExecuteChildWorkflow(cctx, names.WorkflowName, in).Get(cctx, &out)
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
	notes := workflows.Version(ctx, workflows.ChangeAgentRepeatNotes, 1) >= 1
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
