package decision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolround/toolround/internal/llm"
)

// Chat filters through a model: an OpenAI-compatible chat-completions API,
// the Anthropic Messages API or the OpenAI Responses API (Config.API). It never
// fails: when the model cannot answer (down, slow, an error status, a reply
// that does not parse or is empty) it logs why and uses the extractive filter.
type Chat struct {
	cfg      Config
	model    *llm.Client
	fallback Extractive
}

const systemPrompt = `You filter documents for an agent that has a limited context.
You receive a query and a document (a web page as text, or a list of search results).
Return only the parts of the document that are relevant to the query: copy them verbatim where you can, keep numbers, names, code and the URLs of relevant links, and drop everything else (navigation, ads, unrelated sections).
Do not answer the query, add opinions or invent anything. Keep the document's order.
If nothing in the document is relevant, reply with one sentence saying so.
Your reply must be at most %d characters.`

const condensePrompt = `You condense documents for an agent that has a limited context.
You receive a document (a web page as text, or a list of search results).
Return its main content: copy it verbatim where you can, keep numbers, names, code and the URLs of important links, and drop navigation, ads and boilerplate.
Do not add opinions or invent anything. Keep the document's order.
Your reply must be at most %d characters.`

// chatRequest is what the decision model sends.
type chatRequest = llm.Request

// Filter asks the model for the relevant parts of content.
func (c *Chat) Filter(ctx context.Context, query, content string) (string, error) {
	content = strings.TrimSpace(content)
	query = strings.TrimSpace(query)
	if len(content) <= c.cfg.PassThroughChars || (query == "" && len(content) <= c.cfg.MaxChars) {
		return content, nil
	}
	out, err := c.ask(ctx, query, content)
	if err != nil {
		c.cfg.Logger.WarnContext(ctx, "decision: model filter failed; using the extractive filter",
			"model", c.cfg.Model, "endpoint", c.model.Endpoint(), "err", err)
		return c.fallback.filter(query, content), nil
	}
	return out, nil
}

func (c *Chat) ask(ctx context.Context, query, content string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	if len(content) > c.cfg.MaxInputChars {
		content = Extractive{MaxChars: c.cfg.MaxInputChars, PassThroughChars: c.cfg.MaxInputChars}.filter(query, content)
	}
	// The model's reply is asked to stay under the bound with room for the note.
	note := c.note(query)
	replyChars := max(c.cfg.MaxChars-len(note), 200)
	system := fmt.Sprintf(systemPrompt, replyChars)
	user := "Query: " + query + "\n\nDocument:\n" + content
	if query == "" {
		system = fmt.Sprintf(condensePrompt, replyChars)
		user = "Document:\n" + content
	}
	var out string
	switch c.model.API() {
	case llm.APIAnthropic, llm.APIResponses:
		reply, err := c.askTurn(ctx, system, user)
		if err != nil {
			return "", err
		}
		out = reply
	default:
		reply, err := c.askChat(ctx, system, user)
		if err != nil {
			return "", err
		}
		out = reply
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return "", errors.New("reply is empty")
	}
	if len(out) > replyChars {
		out = head(out, replyChars)
	}
	return note + out, nil
}

// askChat asks a chat-completions model.
func (c *Chat) askChat(ctx context.Context, system, user string) (string, error) {
	zero := 0.0 // a filter copies; it does not invent
	body := chatRequest{
		Messages:    []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Temperature: &zero,
	}
	if c.cfg.MaxTokens > 0 {
		body.MaxTokens = c.cfg.MaxTokens
	}
	reply, err := c.model.Complete(ctx, body)
	if err != nil {
		return "", err
	}
	if len(reply.ToolCalls) > 0 && reply.Content == "" {
		return "", errors.New("reply has no choices[0].message.content")
	}
	return reply.Content, nil
}

// askTurn asks a Messages or Responses API model, streamed as those APIs
// answer: one user message, the instructions as the request's system
// (Messages) or instructions (Responses). A refusal is a failure (the
// extractive filter answers); a reply cut at max_tokens keeps what came,
// which the caller bounds anyway.
func (c *Chat) askTurn(ctx context.Context, system, user string) (string, error) {
	msg, err := json.Marshal(map[string]string{"role": "user", "content": user})
	if err != nil {
		return "", err
	}
	turn, err := c.model.StreamTurn(ctx, llm.TurnRequest{System: system, Input: []json.RawMessage{msg}}, nil)
	if err != nil {
		return "", err
	}
	if turn.Stop == llm.StopRefused {
		return "", fmt.Errorf("the model refused (%s)", turn.StopReason)
	}
	if len(turn.Calls) > 0 && turn.Text == "" {
		return "", errors.New("reply is a tool call, not text")
	}
	return turn.Text, nil
}

func (c *Chat) note(query string) string {
	if query == "" {
		return "[condensed by the decision model]\n\n"
	}
	return fmt.Sprintf("[filtered for %q by the decision model]\n\n", query)
}
