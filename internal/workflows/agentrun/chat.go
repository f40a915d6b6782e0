package agentrun

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// Chatbots (G3). A chatbot is an agent run in persistent mode,
// agentrun/<session>/chat-<name>: after each answer it waits for the next
// message, which the update chat brings. Messages are answered one at a
// time, in the order they came; the update's result is that message's
// reply. The update id is the sending call's operation id, so a send
// retried after a lost attempt is answered by Temporal from the same
// update, and after a continue-as-new from the replies the run carries.
// The run continues as new only between messages, once every update
// handler has returned.

// chat is the persistent run's state of its messages.
type chat struct {
	on      bool
	inbox   []round.ChatMessage // waiting to be answered
	current string              // the message being answered
	// auto and exclude are the current message's sender's (ChatMessage).
	auto    bool
	exclude []string
	since   int               // the run's rounds before the current message
	replies []round.ChatReply // the last MaxChatReplies, oldest first
	closed  bool              // the run ended: no more answers
	// answered counts this execution's replies: one that answered none
	// does not continue as new, so that a small bound cannot loop.
	answered int
}

// startChat registers the chat update of a persistent run.
func (a *agent) startChat(ctx workflow.Context) error {
	a.chat.on = true
	return workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateChat,
		func(ctx workflow.Context, m round.ChatMessage) (round.ChatReply, error) {
			if r, ok := a.replyTo(m.MessageID); ok {
				return r, nil // sent again after a continue-as-new
			}
			if !a.chat.closed && a.chat.current != m.MessageID && !slices.ContainsFunc(a.chat.inbox, func(q round.ChatMessage) bool { return q.MessageID == m.MessageID }) {
				a.chat.inbox = append(a.chat.inbox, m)
			}
			if err := workflow.Await(ctx, func() bool {
				_, ok := a.replyTo(m.MessageID)
				return ok || a.chat.closed
			}); err != nil {
				return round.ChatReply{}, err
			}
			if r, ok := a.replyTo(m.MessageID); ok {
				return r, nil
			}
			return round.ChatReply{MessageID: m.MessageID, Status: a.status, Reason: a.endReason()}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, m round.ChatMessage) error {
			if err := m.Validate(); err != nil {
				return err
			}
			if a.chat.closed {
				return fmt.Errorf("the chatbot's run ended %s", a.status)
			}
			return nil
		}})
}

func (a *agent) endReason() string {
	if a.reason != "" {
		return a.reason
	}
	return "the chatbot's run ended " + a.status
}

func (a *agent) replyTo(id string) (round.ChatReply, bool) {
	for _, r := range a.chat.replies {
		if r.MessageID == id {
			return r, true
		}
	}
	return round.ChatReply{}, false
}

// reply answers the current message and keeps the run waiting for the next.
func (a *agent) reply(status, text, reason string) {
	a.chat.replies = append(a.chat.replies, round.ChatReply{MessageID: a.chat.current, Status: status, Text: text, Reason: reason})
	if n := len(a.chat.replies) - wire.MaxChatReplies; n > 0 {
		a.chat.replies = slices.Delete(a.chat.replies, 0, n)
	}
	a.chat.current = ""
	a.chat.answered++
}

// awaitMessage is step 0 of a persistent run's pass: between messages it
// waits for the next. The run ends cancelled when it was cancelled while
// it waited, and continues as new when nextMessage says so.
func (a *agent) awaitMessage(ctx workflow.Context) (next, error) {
	if !a.chat.on || a.chat.current != "" {
		return nextStep, nil
	}
	again, err := a.nextMessage(ctx)
	if err != nil || ctx.Err() != nil {
		return a.cancelled()
	}
	if again {
		return nextNew, a.continueAsNew(ctx)
	}
	return nextStep, nil
}

// nextMessage waits, between messages, for the next one and puts it into
// the conversation. It reports whether the run is to continue as new
// instead (past its history bounds, nothing waiting) and an error when
// the run was cancelled while it waited.
func (a *agent) nextMessage(ctx workflow.Context) (continueAsNew bool, err error) {
	for {
		if len(a.chat.inbox) > 0 {
			m := a.chat.inbox[0]
			a.chat.inbox = a.chat.inbox[1:]
			a.chat.current, a.chat.since, a.final = m.MessageID, a.round, ""
			a.chat.auto, a.chat.exclude = m.AutoApprove, m.Exclude
			a.conv = append(a.conv, round.AgentMessage{Role: "user", Content: m.Text})
			return false, nil
		}
		if a.chat.answered > 0 && a.pastBounds(ctx) {
			// Every handler has its reply; one that came meanwhile waits
			// in the inbox and is answered first.
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || len(a.chat.inbox) > 0 }); err != nil {
				return false, err
			}
			if len(a.chat.inbox) == 0 {
				return true, nil
			}
			continue
		}
		if err := workflow.Await(ctx, func() bool { return len(a.chat.inbox) > 0 }); err != nil {
			return false, err
		}
	}
}

// closeChat ends a persistent run: every message still waiting is answered
// with the run's status, and the run waits until each handler returned.
func (a *agent) closeChat(ctx workflow.Context) {
	if !a.chat.on {
		return
	}
	if a.chat.current != "" {
		reason := a.reason
		if reason == "" {
			reason = "the chatbot's run ended " + a.status
		}
		a.reply(a.status, a.final, reason)
	}
	a.chat.closed = true
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
}

// roundsOfMessage is how many rounds the current message took: a
// persistent run's max_rounds bounds each message.
func (a *agent) roundsOfMessage() int {
	if a.chat.on {
		return a.round - a.chat.since
	}
	return a.round
}

// autoApprove is whether the run's rounds auto-approve: a persistent run's
// only when the current message's sender does too.
func (a *agent) autoApprove() bool {
	if a.chat.on && a.chat.current != "task" {
		return a.in.AutoApprove && a.chat.auto
	}
	return a.in.AutoApprove
}

// exclude is the run's tools to leave out: a persistent run's and the
// current message's sender's.
func (a *agent) exclude() []string {
	if !a.chat.on || len(a.chat.exclude) == 0 {
		return a.in.Exclude
	}
	out := append(slices.Clone(a.in.Exclude), a.chat.exclude...)
	slices.Sort(out)
	return slices.Compact(out)
}

// failChat answers every message of a persistent run that fails (a model
// that refuses for good, a round that cannot start) with the failure, so
// that its senders get a reply instead of a send that starts the chatbot
// afresh. It returns err.
func (a *agent) failChat(ctx workflow.Context, err error) error {
	if a.chat.on {
		a.status, a.reason = ChatFailed, text.RootMessage(err)
		a.closeChat(ctx)
	}
	return err
}

// ChatFailed is the reply status of the messages of a persistent run that
// failed.
const ChatFailed = "failed"
