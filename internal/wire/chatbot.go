package wire

import "github.com/toolround/toolround/round"

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
