package round

import (
	"fmt"
	"regexp"
)

// Chatbots (G3): the named agents of AGENTS_CONFIG. A chatbot runs as a
// persistent agent run, agentrun/<session>/chat-<name>, in the caller's
// session and workspace: it answers one message at a time through the
// update wire.UpdateChat and then waits for the next.
const (
	// Cycle starts the answer for a message to a chatbot already in the
	// caller's chain.
	Cycle = "cycle"
)

// chatbotName is the shape of a chatbot's name: it becomes part of a run id.
var chatbotName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// CheckChatbotName reports a name that cannot name a chatbot.
func CheckChatbotName(name string) error {
	if !chatbotName.MatchString(name) {
		return fmt.Errorf("name %q: want 1 to 63 of a-z, 0-9, _ and -, starting with a letter or digit", truncateID(name))
	}
	return nil
}

// Chatbot is one named agent of AGENTS_CONFIG.
type Chatbot struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// API is the LLM_API it speaks (the worker's when empty); Model the
	// model it asks (LLM_MODEL when empty).
	API          string   `json:"llm_api,omitempty"`
	Model        string   `json:"model,omitempty"`
	SystemPrompt string   `json:"system_prompt,omitempty"`
	Tools        []string `json:"tools"`
}

// ChatMessage is the payload of wire.UpdateChat. MessageID is the sending
// call's operation id, which is also the update's id: a retried send is
// answered once.
type ChatMessage struct {
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	// AutoApprove and Exclude are the sender's: the rounds that answer the
	// message auto-approve only when the sender does, and have none of the
	// tools the sender lacks, whoever started the chatbot.
	AutoApprove bool     `json:"auto_approve,omitempty"`
	Exclude     []string `json:"exclude,omitempty"`
}

// Validate reports a message a chatbot does not take.
func (m ChatMessage) Validate() error {
	if m.MessageID == "" || len(m.MessageID) > 600 {
		return fmt.Errorf("message_id must be 1 to 600 bytes")
	}
	if m.Text == "" {
		return fmt.Errorf("text is empty")
	}
	if len(m.Text) > MaxTaskBytes {
		return fmt.Errorf("text is %d bytes; at most %d are accepted", len(m.Text), MaxTaskBytes)
	}
	return checkExclude(m.Exclude)
}

// ChatReply is the result of wire.UpdateChat: the chatbot's answer to the
// message, or, when Status is not completed, why there is none.
type ChatReply struct {
	MessageID string `json:"message_id"`
	Status    string `json:"status"`
	Text      string `json:"text,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// checkChain refuses a chain of chatbots that is not one.
func checkChain(chain []string) error {
	if len(chain) > 64 {
		return fmt.Errorf("chain names %d chatbots; at most 64 are accepted", len(chain))
	}
	for _, n := range chain {
		if err := CheckChatbotName(n); err != nil {
			return fmt.Errorf("chain: %w", err)
		}
	}
	return nil
}
