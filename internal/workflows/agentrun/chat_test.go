package agentrun_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// chatModel answers the last user message with "reply to: <it>", after
// one calculate round when the message asks for a tool.
func chatModel(in wire.ModelInput) wire.ModelOutput {
	last := in.Messages[len(in.Messages)-1]
	if last.Role == "user" && strings.Contains(last.Content, "tool") {
		return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{
			ID: fmt.Sprintf("c%d", in.Call), Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"1+1"}`}}}}}
	}
	var user string
	for _, m := range in.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "reply to: " + user}}
}

// chatLog collects the replies of chat updates.
type chatLog struct {
	mu      sync.Mutex
	replies map[string]round.ChatReply
	errs    map[string]error
}

func newChatLog() *chatLog {
	return &chatLog{replies: map[string]round.ChatReply{}, errs: map[string]error{}}
}

func (l *chatLog) send(h *agentHarness, updateID string, m round.ChatMessage) {
	h.env.UpdateWorkflow(wire.UpdateChat, updateID, &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.errs[updateID] = err
		},
		OnComplete: func(v any, err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if err != nil {
				l.errs[updateID] = err
				return
			}
			l.replies[updateID] = v.(round.ChatReply)
		},
	}, m)
}

// TestPersistentRunAnswersChatMessagesOneAtATime (G3): a persistent run
// waits for messages, answers each through its update in order, keeps the
// conversation between them, answers a message sent again with the same
// reply, refuses an empty one, and waits until it is cancelled.
func TestPersistentRunAnswersChatMessagesOneAtATime(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = chatModel
	log := newChatLog()
	h.env.RegisterDelayedCallback(func() {
		log.send(h, "op-1", round.ChatMessage{MessageID: "op-1", Text: "hello"})
		log.send(h, "op-2", round.ChatMessage{MessageID: "op-2", Text: "use a tool, then answer", Exclude: []string{"run_command"}})
		log.send(h, "bad", round.ChatMessage{MessageID: "bad", Text: ""})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() {
		log.send(h, "op-1-again", round.ChatMessage{MessageID: "op-1", Text: "hello"})
	}, 2*time.Second)
	h.env.RegisterDelayedCallback(func() { h.env.CancelWorkflow() }, time.Hour)

	in := round.AgentInput{SessionID: "s1", RunID: names.ChatbotRunID("helper"), Provider: "openai", Persistent: true, Name: "helper", Chain: []string{"helper"},
		AutoApprove: true, Exclude: []string{"edit_file"}}
	h.execute(t, in)
	var st round.AgentStatus
	require.NoError(t, h.env.GetWorkflowResult(&st))

	require.Equal(t, round.AgentCancelled, st.Status, "a persistent run waits for messages until it is stopped")
	require.Equal(t, round.ChatReply{MessageID: "op-1", Status: round.AgentCompleted, Text: "reply to: hello"}, log.replies["op-1"])
	require.Equal(t, round.ChatReply{MessageID: "op-2", Status: round.AgentCompleted, Text: "reply to: use a tool, then answer"}, log.replies["op-2"])
	require.Equal(t, log.replies["op-1"], log.replies["op-1-again"], "a message sent again gets its reply, not a second answer")
	require.ErrorContains(t, log.errs["bad"], "text is empty")
	require.Equal(t, "user,assistant,user,assistant,tool,assistant", roles(st.Conversation), "one conversation across messages, answered in order")
	require.Equal(t, 3, st.ModelCalls, "the message sent again cost no model call")
	require.Len(t, h.rounds, 1)
	require.Equal(t, []string{"helper"}, h.rounds[0].Chain, "the chatbot's rounds carry its chain")
	require.False(t, h.rounds[0].AutoApprove, "a message whose sender does not auto-approve is answered by rounds that ask")
	require.Equal(t, []string{"edit_file", "run_command"}, h.rounds[0].Exclude, "without the tools its sender lacks")
	require.Equal(t, []string{"edit_file", "run_command"}, h.inputs[1].Exclude, "nor in the model's tools array")
}

// A persistent run continues as new between messages, and the replies it
// carries answer a message sent again to the next execution, which asks
// the model nothing for it.
func TestPersistentRunCarriesItsRepliesAcrossContinueAsNew(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		h.env.SetCurrentHistoryLength(5000) // past the bound once it answered
		return chatModel(in)
	}
	log := newChatLog()
	h.env.RegisterDelayedCallback(func() {
		log.send(h, "op-1", round.ChatMessage{MessageID: "op-1", Text: "hello"})
	}, time.Second)
	in := round.AgentInput{SessionID: "s1", RunID: names.ChatbotRunID("helper"), Provider: "openai", Persistent: true}
	h.execute(t, in)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &can, "past its history bound, between messages, it continues as new")
	require.Equal(t, "reply to: hello", log.replies["op-1"].Text, "the message was answered first")
	var next round.AgentInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.True(t, next.Persistent)
	require.Equal(t, []round.ChatReply{log.replies["op-1"]}, next.Carry.Replies)

	h2 := newAgentHarness(t)
	h2.reply = chatModel
	log2 := newChatLog()
	h2.env.RegisterDelayedCallback(func() {
		log2.send(h2, "op-1", round.ChatMessage{MessageID: "op-1", Text: "hello"})
	}, time.Second)
	h2.env.RegisterDelayedCallback(func() { h2.env.CancelWorkflow() }, time.Minute)
	require.Equal(t, names.AgentWorkflowID(in.SessionID, in.RunID), names.AgentWorkflowID(next.SessionID, next.RunID), "it continues under its id")
	h2.execute(t, next)
	require.Equal(t, log.replies["op-1"], log2.replies["op-1"], "the send again is answered from the carried replies")
	require.Empty(t, h2.inputs, "and costs no model call")
}

// A persistent run whose model refuses for good answers the message, and
// those waiting behind it, with the failure: the senders get a reply, not
// a send that would start the chatbot afresh.
func TestPersistentRunThatFailsAnswersItsMessages(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = chatModel
	h.fail = func(in wire.ModelInput) error {
		return temporal.NewNonRetryableApplicationError("model: 401 unauthorized", "ModelRejected", nil)
	}
	log := newChatLog()
	h.env.RegisterDelayedCallback(func() {
		log.send(h, "op-1", round.ChatMessage{MessageID: "op-1", Text: "hello"})
		log.send(h, "op-2", round.ChatMessage{MessageID: "op-2", Text: "and this"})
	}, time.Second)
	in := round.AgentInput{SessionID: "s1", RunID: names.ChatbotRunID("helper"), Provider: "openai", Persistent: true}
	h.execute(t, in)
	require.ErrorContains(t, h.env.GetWorkflowError(), "401 unauthorized")
	for _, id := range []string{"op-1", "op-2"} {
		r := log.replies[id]
		require.Equal(t, agentrun.ChatFailed, r.Status, id)
		require.Contains(t, r.Reason, "401 unauthorized", id)
	}
}

// TestWorkerLimitsBoundAChatbot (B1, T15): WORKER_LIMITS bound a chatbot's
// persistent run as every run: past the worker's max_model_tokens it ends
// limit_reached, and the message that took it there says so.
func TestWorkerLimitsBoundAChatbot(t *testing.T) {
	h := newAgentHarnessOf(t, &agentrun.Workflow{HeartbeatTimeout: time.Second, Limits: round.Limits{MaxModelTokens: 500}})
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		out := chatModel(in)
		out.Tokens = 400
		return out
	}
	log := newChatLog()
	h.env.RegisterDelayedCallback(func() {
		log.send(h, "op-1", round.ChatMessage{MessageID: "op-1", Text: "hello"})
		log.send(h, "op-2", round.ChatMessage{MessageID: "op-2", Text: "use a tool, then answer"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() { h.env.CancelWorkflow() }, time.Hour)

	in := round.AgentInput{SessionID: "s1", RunID: names.ChatbotRunID("helper"), Provider: "openai", Persistent: true, Name: "helper", Chain: []string{"helper"}}
	h.execute(t, in)
	var st round.AgentStatus
	require.NoError(t, h.env.GetWorkflowResult(&st))

	require.Equal(t, round.AgentCompleted, log.replies["op-1"].Status, "400 tokens: within the worker's 500")
	require.Equal(t, round.AgentLimitReached, st.Status, "800 tokens: past the worker's limit, whatever the input says")
	require.Contains(t, st.Reason, "max_model_tokens")
}
