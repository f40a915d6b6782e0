package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The APIs an agent run's model speaks (F4): chat completions, the
// Anthropic Messages API and the OpenAI Responses API.
const (
	APIChat      = "chat"
	APIAnthropic = "anthropic"
	APIResponses = "responses"
)

// Environment variables of the agent run's model beside the connection's.
const (
	EnvAPI            = "LLM_API"             // chat (default), anthropic or responses
	EnvMaxTokens      = "LLM_MAX_TOKENS"      // anthropic max_tokens, default 8192
	EnvThinkingBudget = "LLM_THINKING_BUDGET" // anthropic thinking budget_tokens; 0: no thinking
)

// DefaultMaxTokens is the Messages API's max_tokens when LLM_MAX_TOKENS is
// not set.
const DefaultMaxTokens = 8192

// AnthropicVersion is the anthropic-version header of every Messages API
// request.
const AnthropicVersion = "2023-06-01"

// Stop is why a turn ended, the same for every API.
type Stop string

const (
	StopAnswer    Stop = "answer"    // end_turn, stop_sequence, stop, a completed response without calls
	StopTools     Stop = "tool_use"  // tool_use, tool_calls: the calls run as a round
	StopPause     Stop = "pause"     // pause_turn: the turn goes back and the model is asked again
	StopTruncated Stop = "truncated" // max_tokens, model_context_window_exceeded, length, max_output_tokens
	StopRefused   Stop = "refused"   // refusal, content_filter
)

// ChatStop reads a chat completion's finish_reason.
func ChatStop(reason string, calls bool) Stop {
	switch reason {
	case "length":
		return StopTruncated
	case "content_filter":
		return StopRefused
	}
	if calls {
		return StopTools
	}
	return StopAnswer
}

// AnthropicStop reads a Messages API stop_reason.
func AnthropicStop(reason string, calls bool) Stop {
	switch reason {
	case "max_tokens", "model_context_window_exceeded":
		return StopTruncated
	case "refusal":
		return StopRefused
	case "pause_turn":
		return StopPause
	}
	if calls {
		return StopTools
	}
	return StopAnswer
}

// readAPIEnv reads LLM_API, LLM_MAX_TOKENS and LLM_THINKING_BUDGET into c.
func readAPIEnv(c *Config, getenv func(string) string) error {
	api := strings.ToLower(strings.TrimSpace(getenv(EnvAPI)))
	switch api {
	case "", APIChat:
		api = APIChat
	case APIAnthropic, APIResponses:
	default:
		return fmt.Errorf("llm: %s=%q: want chat, anthropic or responses", EnvAPI, api)
	}
	c.API = api
	for _, v := range []struct {
		name string
		to   *int
	}{{EnvMaxTokens, &c.MaxTokens}, {EnvThinkingBudget, &c.ThinkingBudget}} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 1<<24 {
			return fmt.Errorf("llm: %s=%q: want a whole number of tokens such as 8192", v.name, s)
		}
		*v.to = n
	}
	if c.ThinkingBudget > 0 && c.ThinkingBudget >= c.maxTokens() {
		return fmt.Errorf("llm: %s=%d must be below the max_tokens %d (%s)", EnvThinkingBudget, c.ThinkingBudget, c.maxTokens(), EnvMaxTokens)
	}
	return nil
}

func (c *Config) maxTokens() int {
	if c.MaxTokens > 0 {
		return c.MaxTokens
	}
	return DefaultMaxTokens
}

// API is the API the client speaks.
func (c *Client) API() string {
	if c.cfg.API == "" {
		return APIChat
	}
	return c.cfg.API
}

// TurnRequest is one call of an agent run in the Messages or Responses
// API: Input holds the messages (anthropic) or items (responses) in the
// API's own shape, Tools the tools array in it.
type TurnRequest struct {
	// Model replaces the configured model when set (a chatbot's, G3).
	Model  string
	System string
	Input  []json.RawMessage
	Tools  json.RawMessage
}

// Turn is a Messages or Responses API answer.
type Turn struct {
	// Raw is the turn as it goes back to the API: the Messages API
	// assistant message {"role": "assistant", "content": [...]}, or the
	// array of the response's output items.
	Raw json.RawMessage
	// Text is the answer's text (text blocks, output_text parts).
	Text string
	// Calls are the client tool calls in order.
	Calls []ToolCall
	// StopReason is the API's own (a stop_reason, a response status and
	// its incomplete reason); Stop reads it.
	StopReason string
	Stop       Stop
	// Tokens and InputTokens as in Response.
	Tokens, InputTokens int64
}

// StreamTurn asks the Messages or Responses API for the next turn,
// streamed, and calls onText with each text delta (thinking and
// reasoning are never passed on).
func (c *Client) StreamTurn(ctx context.Context, req TurnRequest, onText func(string)) (Turn, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	input := req.Input
	if input == nil {
		input = []json.RawMessage{}
	}
	model := c.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	body := map[string]any{"model": model, "stream": true}
	switch c.API() {
	case APIAnthropic:
		body["messages"] = input
		body["max_tokens"] = c.cfg.maxTokens()
		if req.System != "" {
			body["system"] = req.System
		}
		if c.cfg.ThinkingBudget > 0 {
			body["thinking"] = map[string]any{"type": "enabled", "budget_tokens": c.cfg.ThinkingBudget}
		}
	case APIResponses:
		body["input"] = input
		body["store"] = false
		body["include"] = []string{"reasoning.encrypted_content"}
		if req.System != "" {
			body["instructions"] = req.System
		}
	default:
		return Turn{}, fmt.Errorf("StreamTurn speaks the anthropic and responses APIs, not %s", c.API())
	}
	if len(req.Tools) > 0 && string(req.Tools) != "null" && string(req.Tools) != "[]" {
		body["tools"] = req.Tools
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return Turn{}, fmt.Errorf("encode request: %w", err)
	}
	resp, r, err := c.post(ctx, payload, func(h http.Header) {
		h.Set("Accept", "text/event-stream")
		switch {
		case c.API() == APIAnthropic:
			h.Set("anthropic-version", AnthropicVersion)
			if c.cfg.APIKey != "" {
				h.Set("x-api-key", c.cfg.APIKey)
			}
		case c.cfg.APIKey != "":
			h.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
	})
	if err != nil {
		return Turn{}, err
	}
	defer resp.Body.Close()
	var out Turn
	if c.API() == APIAnthropic {
		out, err = readAnthropicStream(r, onText)
	} else {
		out, err = readResponsesStream(r, onText)
	}
	if err != nil && c.cfg.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Turn{}, fmt.Errorf("no complete answer within %s", c.cfg.Timeout)
	}
	return out, err
}

// retryAfter reads a retry-after header: seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("retry-after-ms")), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	s := strings.TrimSpace(h.Get("Retry-After"))
	if s == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(s); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// sseData calls fn with the data of each server-sent event of r.
func sseData(r io.Reader, fn func(data []byte) (done bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReplyBytes)
	var data bytes.Buffer
	flush := func() (bool, error) {
		if data.Len() == 0 {
			return false, nil
		}
		b := bytes.Clone(data.Bytes())
		data.Reset()
		return fn(b)
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if done, err := flush(); done || err != nil {
				return err
			}
			continue
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(d, " "))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stream: %w", err)
	}
	_, err := flush()
	return err
}

// streamError is an error event of a stream: an overloaded_error (or an
// api_error) is worth asking again, as its HTTP status would be.
func streamError(kind, message string) error {
	se := &StatusError{Status: "stream error " + kind, Message: message}
	switch kind {
	case "overloaded_error":
		se.Code = 529
	case "api_error", "server_error", "rate_limit_error", "rate_limit_exceeded":
		se.Code = http.StatusServiceUnavailable
	case "invalid_request_error", "authentication_error", "permission_error", "not_found_error", "request_too_large":
		se.Code = http.StatusBadRequest
	default:
		// An error of no known kind: asked again, as any failed call.
		if kind == "" {
			return errors.New(message)
		}
		return fmt.Errorf("%s: %s", kind, message)
	}
	return se
}

type anthropicBlock struct {
	fields              map[string]json.RawMessage
	text, thinking, sig strings.Builder
	partial             strings.Builder
	hasPartial          bool
	hasThinking, hasSig bool
	hasText             bool
}

// readAnthropicStream assembles a Messages API stream.
func readAnthropicStream(r io.Reader, onText func(string)) (Turn, error) {
	var out Turn
	blocks := map[int]*anthropicBlock{}
	var u usage
	stopped := false
	err := sseData(r, func(data []byte) (bool, error) {
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				Usage *usage `json:"usage"`
			} `json:"message"`
			ContentBlock map[string]json.RawMessage `json:"content_block"`
			Delta        struct {
				Type        string  `json:"type"`
				Text        string  `json:"text"`
				PartialJSON string  `json:"partial_json"`
				Thinking    string  `json:"thinking"`
				Signature   string  `json:"signature"`
				StopReason  *string `json:"stop_reason"`
			} `json:"delta"`
			Usage *usage `json:"usage"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return false, fmt.Errorf("stream event is not a Messages API event: %w", err)
		}
		switch ev.Type {
		case "message_start":
			if ev.Message.Usage != nil {
				u = *ev.Message.Usage
			}
		case "content_block_start":
			if ev.ContentBlock == nil {
				ev.ContentBlock = map[string]json.RawMessage{}
			}
			blocks[ev.Index] = &anthropicBlock{fields: ev.ContentBlock}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return false, fmt.Errorf("stream event content_block_delta for block %d, which did not start", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
				b.hasText = true
				if onText != nil && ev.Delta.Text != "" {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				b.partial.WriteString(ev.Delta.PartialJSON)
				b.hasPartial = true
			case "thinking_delta":
				b.thinking.WriteString(ev.Delta.Thinking)
				b.hasThinking = true
			case "signature_delta":
				b.sig.WriteString(ev.Delta.Signature)
				b.hasSig = true
			}
		case "message_delta":
			if ev.Delta.StopReason != nil {
				out.StopReason = *ev.Delta.StopReason
			}
			if ev.Usage != nil {
				// message_delta's usage is cumulative.
				if ev.Usage.OutputTokens > 0 {
					u.OutputTokens = ev.Usage.OutputTokens
				}
				if ev.Usage.InputTokens > 0 {
					u.InputTokens = ev.Usage.InputTokens
				}
				if ev.Usage.CacheReadTokens > 0 {
					u.CacheReadTokens = ev.Usage.CacheReadTokens
				}
				if ev.Usage.CacheCreationTokens > 0 {
					u.CacheCreationTokens = ev.Usage.CacheCreationTokens
				}
			}
		case "message_stop":
			stopped = true
			return true, nil
		case "error":
			return false, streamError(ev.Error.Type, ev.Error.Message)
		}
		return false, nil
	})
	if err != nil {
		return Turn{}, err
	}
	if !stopped && out.StopReason == "" {
		return Turn{}, errors.New("the stream ended before the message did (no message_stop)")
	}
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	content := make([]json.RawMessage, 0, len(idx))
	var text strings.Builder
	for _, i := range idx {
		b := blocks[i]
		set := func(k string, v any) {
			raw, _ := json.Marshal(v)
			b.fields[k] = raw
		}
		if b.hasText {
			set("text", rawString(b.fields["text"])+b.text.String())
		}
		if b.hasThinking {
			set("thinking", rawString(b.fields["thinking"])+b.thinking.String())
		}
		if b.hasSig {
			set("signature", b.sig.String())
		}
		if b.hasPartial {
			in := strings.TrimSpace(b.partial.String())
			if in == "" {
				in = "{}"
			}
			if json.Valid([]byte(in)) {
				b.fields["input"] = json.RawMessage(in)
			} else {
				set("input", in) // a cut-off input: kept as its text
			}
		}
		typ := rawString(b.fields["type"])
		if typ == "text" {
			text.WriteString(rawString(b.fields["text"]))
		}
		if typ == "tool_use" {
			out.Calls = append(out.Calls, ToolCall{ID: rawString(b.fields["id"]), Type: "function",
				Function: Function{Name: rawString(b.fields["name"]), Arguments: string(b.fields["input"])}})
		}
		raw, err := json.Marshal(b.fields)
		if err != nil {
			return Turn{}, fmt.Errorf("content block %d: %w", i, err)
		}
		content = append(content, raw)
	}
	out.Raw, _ = json.Marshal(map[string]any{"role": "assistant", "content": content})
	out.Text = text.String()
	out.Stop = AnthropicStop(out.StopReason, len(out.Calls) > 0)
	out.Tokens, out.InputTokens = u.total(), u.input()
	return out, nil
}

func rawString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// readResponsesStream assembles a Responses API stream.
func readResponsesStream(r io.Reader, onText func(string)) (Turn, error) {
	var out Turn
	items := map[int]json.RawMessage{}
	var final []json.RawMessage
	ended := false
	var u usage
	err := sseData(r, func(data []byte) (bool, error) {
		if strings.TrimSpace(string(data)) == "[DONE]" {
			return true, nil
		}
		var ev struct {
			Type        string          `json:"type"`
			OutputIndex int             `json:"output_index"`
			Item        json.RawMessage `json:"item"`
			Delta       string          `json:"delta"`
			Code        string          `json:"code"`
			Message     string          `json:"message"`
			Response    struct {
				Status            string            `json:"status"`
				Output            []json.RawMessage `json:"output"`
				IncompleteDetails *struct {
					Reason string `json:"reason"`
				} `json:"incomplete_details"`
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
				Usage *usage `json:"usage"`
			} `json:"response"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return false, fmt.Errorf("stream event is not a Responses API event: %w", err)
		}
		switch ev.Type {
		case "response.output_item.added", "response.output_item.done":
			if len(ev.Item) > 0 {
				items[ev.OutputIndex] = ev.Item
			}
		case "response.output_text.delta":
			if onText != nil && ev.Delta != "" {
				onText(ev.Delta)
			}
		case "response.completed", "response.incomplete":
			ended = true
			out.StopReason = ev.Type
			if d := ev.Response.IncompleteDetails; d != nil && d.Reason != "" {
				out.StopReason += " " + d.Reason
			}
			final = ev.Response.Output
			if ev.Response.Usage != nil {
				u = *ev.Response.Usage
			}
			return true, nil
		case "response.failed":
			msg, code := "the response failed", ""
			if e := ev.Response.Error; e != nil {
				msg, code = e.Message, e.Code
			}
			return false, streamError(code, msg)
		case "error":
			return false, streamError(ev.Code, ev.Message)
		}
		return false, nil
	})
	if err != nil {
		return Turn{}, err
	}
	if !ended {
		return Turn{}, errors.New("the stream ended before the response did (no response.completed or response.incomplete)")
	}
	if final == nil {
		idx := make([]int, 0, len(items))
		for i := range items {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			final = append(final, items[i])
		}
	}
	if final == nil {
		final = []json.RawMessage{}
	}
	var text strings.Builder
	refused := false
	for _, raw := range final {
		var it struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "function_call":
			out.Calls = append(out.Calls, ToolCall{ID: it.CallID, Type: "function", Function: Function{Name: it.Name, Arguments: it.Arguments}})
		case "message":
			for _, p := range it.Content {
				switch p.Type {
				case "output_text":
					text.WriteString(p.Text)
				case "refusal":
					refused = true
				}
			}
		}
	}
	out.Raw, _ = json.Marshal(final)
	out.Text = text.String()
	switch {
	case strings.HasPrefix(out.StopReason, "response.incomplete") && strings.HasSuffix(out.StopReason, "content_filter"):
		out.Stop = StopRefused
	case strings.HasPrefix(out.StopReason, "response.incomplete"):
		out.Stop = StopTruncated
	case refused && len(out.Calls) == 0:
		out.Stop = StopRefused
	case len(out.Calls) > 0:
		out.Stop = StopTools
	default:
		out.Stop = StopAnswer
	}
	out.Tokens, out.InputTokens = u.total(), u.input()
	return out, nil
}
