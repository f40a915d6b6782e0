package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// EnvAgentsConfig names the file of the worker's chatbots (G3).
const EnvAgentsConfig = "AGENTS_CONFIG"

// ChatbotTimeout bounds a send_to_chatbot call, approvals of the
// chatbot's own calls included.
const ChatbotTimeout = 24 * time.Hour

// LoadChatbots reads AGENTS_CONFIG: {"agents": [{"name", "description",
// "llm_api", "model", "system_prompt", "tools"}]}. Every mistake is an
// error that names the entry and the field.
func LoadChatbots(path string) ([]round.Chatbot, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Agents []round.Chatbot `json:"agents"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w (want {\"agents\": [{\"name\", \"description\", \"tools\", ...}]})", path, err)
	}
	if err := CheckChatbots(f.Agents); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Agents, nil
}

// CheckChatbots reports the first entry that cannot be a chatbot.
func CheckChatbots(bots []round.Chatbot) error {
	if len(bots) == 0 {
		return errors.New("no agents: list at least one, or unset AGENTS_CONFIG")
	}
	seen := map[string]bool{}
	for i, b := range bots {
		where := fmt.Sprintf("agents[%d]", i)
		if b.Name != "" {
			where += " (" + b.Name + ")"
		}
		if err := round.CheckChatbotName(b.Name); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if seen[b.Name] {
			return fmt.Errorf("%s: name %q is taken by an earlier agent", where, b.Name)
		}
		seen[b.Name] = true
		if strings.TrimSpace(b.Description) == "" {
			return fmt.Errorf("%s: description is empty: list_chatbot shows it to the model", where)
		}
		switch b.API {
		case "", "chat", "anthropic", "responses":
		default:
			return fmt.Errorf("%s: llm_api %q: want chat, anthropic or responses", where, b.API)
		}
		if len(b.SystemPrompt) > round.MaxTaskBytes {
			return fmt.Errorf("%s: system_prompt is more than %d bytes", where, round.MaxTaskBytes)
		}
		for j, t := range b.Tools {
			if strings.TrimSpace(t) == "" {
				return fmt.Errorf("%s: tools[%d] is empty", where, j)
			}
		}
	}
	return nil
}

// CheckChatbotTools reports a chatbot's tool that the registry does not
// have, or an llm_api that is not the worker's: checked once every tool
// is registered.
func CheckChatbotTools(bots []round.Chatbot, reg *tools.Registry, workerAPI string) error {
	for _, b := range bots {
		for _, t := range b.Tools {
			if _, ok := reg.Lookup(t); !ok {
				return fmt.Errorf("agent %s: tool %q is not a tool of this worker", b.Name, t)
			}
		}
		if b.API != "" && b.API != workerAPI {
			return fmt.Errorf("agent %s: llm_api %s, but the worker speaks LLM_API=%s: run it on a worker of its API", b.Name, b.API, workerAPI)
		}
	}
	return nil
}

// ListChatbot is G3's list of the worker's chatbots.
func ListChatbot(bots []round.Chatbot) tools.Definition {
	return tools.Definition{
		Name:        wire.ListChatbot,
		Description: "List the chatbots you can talk to with send_to_chatbot: each one's name, what it is for and its tools.",
		Parameters:  tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{})),
		Concurrent:  true, // C1
		SideEffect:  tools.ReadOnly,
		Confirm:     tools.ConfirmNever,
		Timeout:     10 * time.Second,
		Source:      tools.SourceBuiltin,
		Handler: func(context.Context, tools.Request) (tools.Result, error) {
			if len(bots) == 0 {
				return tools.Text("no chatbots are configured on this worker (AGENTS_CONFIG)"), nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d chatbots; talk to one with send_to_chatbot {\"name\", \"message\"}:\n", len(bots))
			for _, c := range bots {
				fmt.Fprintf(&b, "- %s: %s (tools: %s)\n", c.Name, c.Description, strings.Join(c.Tools, ", "))
			}
			return tools.Text(strings.TrimRight(b.String(), "\n")), nil
		},
	}
}

// SendToChatbot is G3's message to a chatbot. A round sends it to the
// chatbot's persistent run (tools.KindChatbot); the handler answers
// a call made anywhere else.
func SendToChatbot() tools.Definition {
	return tools.Definition{
		Name: wire.SendToChatbot,
		Description: "Send a message to one of the chatbots list_chatbot lists and get its reply. " +
			"A chatbot remembers what it was told before in this session; it answers one message at a time.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"name":    {Description: "the chatbot's name, as list_chatbot gives it", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(63), Type: "string"},
			"message": {Description: "what to tell or ask it", MinLength: tools.Ptr(1), MaxLength: tools.Ptr(round.MaxTaskBytes), Type: "string"},
		}, "name", "message")),
		Concurrent: true, // C1; calls to one chatbot share its key, limit 1
		SideEffect: tools.Idempotent,
		Confirm:    tools.ConfirmNever, // it never asks; the chatbot's calls do
		Timeout:    ChatbotTimeout,
		Source:     tools.SourceBuiltin,
		NoDedupe:   true, // G: a message is sent each time (P1.3)
		Kind:       tools.KindChatbot,
		ConcurrencyKey: func(args json.RawMessage) string {
			var a wire.ChatbotArgs
			_ = json.Unmarshal(args, &a)
			return wire.ChatbotKeyPrefix + a.Name
		},
		KeyLimit: 1,
		Handler: tools.Typed(func(context.Context, tools.Request, wire.ChatbotArgs) (tools.Result, error) {
			return tools.Result{}, errors.New("send_to_chatbot runs only in a round, which sends the message to the chatbot's run")
		}),
	}
}
