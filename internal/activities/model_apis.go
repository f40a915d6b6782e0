package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

// The model call in the Messages and Responses APIs (F4): the conversation
// goes in the API's own shape, the assistant turns as the API gave them,
// the tool messages as one user message of tool_result blocks (anthropic)
// or function_call_output items (responses), as a round gives them (F2).

func apiFormat(api string) round.Format {
	if api == llm.APIAnthropic {
		return round.FormatAnthropic
	}
	return round.FormatResponses
}

// ErrTypeMixedAPIs is a conversation that holds turns of another API than
// the worker's LLM_API.
const ErrTypeMixedAPIs = "MixedAPIs"

func (m *Model) turnRequest(ctx context.Context, in wire.ModelInput, api string) (llm.TurnRequest, error) {
	f := apiFormat(api)
	req := llm.TurnRequest{System: systemPrompt(in), Model: in.Model}
	if m.Registry != nil {
		ts, err := m.Registry.ToolsFor(in.Provider, in.ClientTools).Without(in.Exclude).In(f)
		if err != nil {
			return llm.TurnRequest{}, err
		}
		if ts.TurnContext != "" {
			req.System += "\n\n" + ts.TurnContext
		}
		if req.Tools, err = json.Marshal(ts.Tools); err != nil {
			return llm.TurnRequest{}, fmt.Errorf("encode tools: %w", err)
		}
	}
	type toolResult struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	}
	var results []toolResult // anthropic tool messages not yet sent
	add := func(v any) {
		b, _ := json.Marshal(v)
		req.Input = append(req.Input, b)
	}
	flush := func() {
		if len(results) > 0 {
			add(map[string]any{"role": "user", "content": results})
			results = nil
		}
	}
	for i, am := range in.Messages {
		switch {
		case am.Role == "tool":
			content := m.fullContent(ctx, am)
			if f == round.FormatAnthropic {
				results = append(results, toolResult{Type: "tool_result", ToolUseID: am.ToolCallID, Content: content, IsError: am.IsError})
			} else {
				add(map[string]any{"type": "function_call_output", "call_id": am.ToolCallID, "output": content})
			}
			continue
		case am.Role == "assistant" && len(am.Raw) > 0:
			if am.Format.Name() != f {
				return llm.TurnRequest{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"message %d of the conversation is a %s turn, but the worker speaks LLM_API=%s: run it on a worker of its API", i, am.Format.Name(), api), ErrTypeMixedAPIs, nil)
			}
			flush()
			raw, err := m.openThoughts(f, m.rawTurn(ctx, am))
			if err != nil {
				return llm.TurnRequest{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("message %d: %v", i, err), ErrTypeModelRejected, err)
			}
			if f == round.FormatAnthropic {
				req.Input = append(req.Input, raw)
			} else {
				var items []json.RawMessage
				if err := json.Unmarshal(raw, &items); err != nil {
					return llm.TurnRequest{}, fmt.Errorf("message %d: the stored output items: %w", i, err)
				}
				req.Input = append(req.Input, items...)
			}
			continue
		case am.Role == "assistant" && len(am.ToolCalls) > 0:
			return llm.TurnRequest{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"message %d of the conversation is a chat-completions turn, but the worker speaks LLM_API=%s", i, api), ErrTypeMixedAPIs, nil)
		}
		flush()
		add(map[string]any{"role": am.Role, "content": m.fullContent(ctx, am)})
	}
	flush()
	return req, nil
}

// storeRaw keeps a raw turn above MaxRaw in the blob store: msg.RawRef
// names it and msg.Raw becomes its ShortTurn. Without a blob store, or when
// it fails, the turn stays in history whole.
func (m *Model) storeRaw(ctx context.Context, msg *round.AgentMessage) {
	limit := m.MaxRaw
	if limit <= 0 {
		limit = DefaultLargeResult
	}
	if len(msg.Raw) <= limit || m.Blobs == nil {
		return
	}
	short, err := round.ShortTurn(msg.Format, msg.Raw)
	if err != nil {
		m.logger().Warn("a large turn could not be shortened; it stays in history", "error", err)
		return
	}
	ref, err := m.Blobs.Put(ctx, string(msg.Raw))
	if err != nil {
		m.logger().Warn("storing a large turn failed; it stays in history", "error", err)
		return
	}
	msg.Raw, msg.RawRef = short, ref
}

// rawTurn is the turn that goes back to the model: the whole turn from the
// blob store when history keeps its short form. When the blob cannot be
// read, the short form goes (the turn's calls, without its text and
// thoughts), and a warning says so.
func (m *Model) rawTurn(ctx context.Context, am round.AgentMessage) json.RawMessage {
	if am.RawRef == "" || m.Blobs == nil {
		return am.Raw
	}
	full, err := m.Blobs.Get(ctx, am.RawRef)
	if err != nil || !json.Valid([]byte(full)) {
		m.logger().Warn("a stored turn could not be read; the model gets its calls only", "ref", am.RawRef, "error", err)
		return am.Raw
	}
	return json.RawMessage(full)
}

// openThoughts gives back a stored turn with the thoughts that turnOutput
// sealed opened, as the model wrote them (F2).
func (m *Model) openThoughts(f round.Format, raw json.RawMessage) (json.RawMessage, error) {
	if !strings.Contains(string(raw), `"sealed"`) || m.SecretKey == nil {
		return raw, nil
	}
	key, err := m.SecretKey()
	if err != nil {
		return nil, fmt.Errorf("model: the key that opens sealed thoughts: %w", err)
	}
	ri := round.Input{Format: f}
	if f == round.FormatAnthropic {
		ri.Turn = raw
	} else {
		ri.Output = raw
	}
	if err := ri.OpenThoughts(func(s string) (string, error) { return secrets.Open(key, s) }); err != nil {
		return nil, err
	}
	return ri.TurnJSON(), nil
}

// fullContent is a message's whole content, read back from the blob store
// when it is kept there.
func (m *Model) fullContent(ctx context.Context, am round.AgentMessage) string {
	if am.ContentRef == "" || m.Blobs == nil || am.Budgeted {
		return am.Content
	}
	full, err := m.Blobs.Get(ctx, am.ContentRef)
	if err != nil {
		m.logger().Warn("a stored message content could not be read; the model gets its preview", "ref", am.ContentRef, "error", err)
		return am.Content
	}
	if am.Tool != "" {
		return round.NotedContent(am.Tool, am.Note, full)
	}
	return full
}

// SecretValues are the sessions' stored secrets (secrets.Store).
type SecretValues interface {
	Names(ctx context.Context, sessionID string) ([]string, error)
	Get(ctx context.Context, sessionID, name string) (string, error)
}

// storedValues are the values the session has stored (Model.Secrets). A
// store that does not answer fails the attempt, which is retried: a thought
// never enters history unsealed.
func (m *Model) storedValues(ctx context.Context, sessionID string) ([]string, error) {
	if m.Secrets == nil {
		return nil, nil
	}
	names, err := m.Secrets.Names(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("model: the session's stored secrets, to seal a thought that holds one: %w", err)
	}
	var out []string
	for _, name := range names {
		v, err := m.Secrets.Get(ctx, sessionID, name)
		if errors.Is(err, secrets.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("model: the session's stored secrets, to seal a thought that holds one: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// turnOutput is what enters history of a Messages or Responses turn: the
// turn with its store_secret values sealed, its text and its calls. A
// thought that holds one of the turn's values, or one the session stored
// in an earlier turn, is sealed whole (F2).
func (m *Model) turnOutput(ctx context.Context, sessionID, api string, turn llm.Turn) (wire.ModelOutput, error) {
	f := apiFormat(api)
	ri := round.Input{Format: f}
	if f == round.FormatAnthropic {
		ri.Turn = turn.Raw
	} else {
		ri.Output = turn.Raw
	}
	thoughts := m.SecretKey != nil && m.Secrets != nil && ri.HasThoughts()
	if m.SecretKey != nil && (len(turn.Calls) > 0 || thoughts) {
		key, err := m.SecretKey()
		if err != nil {
			return wire.ModelOutput{}, fmt.Errorf("model: the key that seals secrets: %w", err)
		}
		var values []string
		if thoughts {
			if values, err = m.storedValues(ctx, sessionID); err != nil {
				return wire.ModelOutput{}, err
			}
		}
		err = ri.MapArguments(func(c round.TurnCall) (round.Arguments, error) {
			values = append(values, secrets.ToolCallValues(key, c.Function.Name, string(c.Function.Arguments))...)
			sealed, err := secrets.SealToolCall(key, c.Function.Name, string(c.Function.Arguments))
			if err != nil {
				return round.Arguments(`"arguments withheld: they looked like a store_secret value but could not be read as JSON"`), nil
			}
			return round.Arguments(sealed), nil
		})
		if err != nil {
			return wire.ModelOutput{}, temporal.NewNonRetryableApplicationError("model: the turn's calls: "+err.Error(), ErrTypeModelRejected, err)
		}
		// A thought that holds a value is kept sealed (F2); turnRequest
		// opens it to send the turn back.
		if holds := secrets.Holds(values); holds != nil {
			if err := ri.SealThoughts(holds, func(s string) (string, error) { return secrets.Seal(key, s) }); err != nil {
				return wire.ModelOutput{}, fmt.Errorf("model: seal a thought that holds a store_secret value: %w", err)
			}
		}
	}
	msg := round.AgentMessage{Role: "assistant", Content: turn.Text, Format: f, Raw: ri.TurnJSON()}
	m.storeRaw(ctx, &msg)
	if len(turn.Calls) > 0 {
		calls, err := ri.TurnCalls()
		if err != nil {
			return wire.ModelOutput{}, temporal.NewNonRetryableApplicationError("model: the turn's calls: "+err.Error(), ErrTypeModelRejected, err)
		}
		for _, c := range calls {
			msg.ToolCalls = append(msg.ToolCalls, c.ToolCall)
		}
	}
	return wire.ModelOutput{Message: msg, FinishReason: turn.StopReason, Stop: string(turn.Stop), Tokens: turn.Tokens}, nil
}
