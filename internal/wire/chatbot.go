package wire

import (
	"slices"

	"github.com/toolround/toolround/round"
)

const (
	// UpdateChat carries a ChatMessage to a persistent agent run; its
	// result is the ChatReply to that message.
	UpdateChat = "chat"
	// ActivitySendToChatbot starts the chatbot's run if it is not running
	// and sends it the message (update-with-start), waiting for the reply.
	ActivitySendToChatbot = "SendToChatbot"
)

// SendToChatbotInput is the input of ActivitySendToChatbot: the chatbot's
// run as it starts when it is not running, and the message.
type SendToChatbotInput struct {
	Start   round.AgentInput  `json:"start"`
	Message round.ChatMessage `json:"message"`
	// Parent is the round that sends, for the run's memo when it starts.
	Parent string `json:"parent"`
}

const (
	// ListChatbot and SendToChatbot are G3's tools.
	ListChatbot   = "list_chatbot"
	SendToChatbot = "send_to_chatbot"
	// ChatbotKeyPrefix starts the concurrency key of the calls to one
	// chatbot, whose limit is 1 (R).
	ChatbotKeyPrefix = "chatbot:"
	// MaxChatReplies is how many replies a chatbot run keeps by message
	// id, to answer a send retried after a continue-as-new once.
	MaxChatReplies = 64
)

// ChatbotArgs are the arguments of a send_to_chatbot call.
type ChatbotArgs struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// InChain reports whether a chatbot name is in a caller's chain.
func InChain(chain []string, name string) bool { return slices.Contains(chain, name) }
