// Package llm is the one OpenAI-compatible chat-completions client of the
// module: the decision model (tools/decision) and the agent run's model
// activity (activities.Model) both call a model through it, with or without
// streaming.
package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/text"
)

// Environment variables of the agent run's model (ConfigFromEnv).
const (
	EnvBaseURL = "LLM_BASE_URL"
	EnvModel   = "LLM_MODEL"
	EnvAPIKey  = "LLM_API_KEY"
	EnvTimeout = "LLM_TIMEOUT" // a Go duration, such as 2m
)

// Config locates a model.
type Config struct {
	// BaseURL of an OpenAI-compatible API, up to and including the version
	// segment (https://api.openai.com/v1, http://127.0.0.1:11434/v1); the
	// client posts to BaseURL + "/chat/completions".
	BaseURL string
	// Model names the chat model. Required.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout bounds one call, the whole stream included. Zero: no bound of
	// the client's own (the caller's context applies).
	Timeout time.Duration
	// HTTPClient makes the calls. Default: a client with no timeout of its own.
	HTTPClient *http.Client
	// API is the API spoken (F4): APIChat (empty too), APIAnthropic or
	// APIResponses; the client posts to BaseURL + /chat/completions,
	// /messages or /responses.
	API string
	// MaxTokens is the Messages API's max_tokens (default DefaultMaxTokens);
	// ThinkingBudget > 0 turns its extended thinking on.
	MaxTokens, ThinkingBudget int
}

// ConfigFromEnv reads LLM_BASE_URL, LLM_MODEL, LLM_API_KEY, LLM_TIMEOUT,
// LLM_API, LLM_MAX_TOKENS and LLM_THINKING_BUDGET through getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c, err := Vars{BaseURL: EnvBaseURL, Model: EnvModel, APIKey: EnvAPIKey, Timeout: EnvTimeout, Errors: "llm", TimeoutExample: "2m"}.Read(getenv)
	if err != nil {
		return Config{}, err
	}
	if err := readAPIEnv(&c, getenv); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Vars names the environment variables of one model's connection, for
// the users of this client that read their own (the decision model's).
type Vars struct {
	BaseURL, Model, APIKey, Timeout string
	// Errors starts the error of a bad timeout; TimeoutExample is the
	// duration it suggests.
	Errors, TimeoutExample string
}

// Read reads the variables through getenv; unset ones stay zero.
func (v Vars) Read(getenv func(string) string) (Config, error) {
	c := Config{
		BaseURL: strings.TrimSpace(getenv(v.BaseURL)),
		Model:   strings.TrimSpace(getenv(v.Model)),
		APIKey:  strings.TrimSpace(getenv(v.APIKey)),
	}
	if s := strings.TrimSpace(getenv(v.Timeout)); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s: %s=%q: want a positive duration such as %s", v.Errors, v.Timeout, s, v.TimeoutExample)
		}
		c.Timeout = d
	}
	return c, nil
}

// Client calls one model.
type Client struct {
	cfg      Config
	endpoint string
}

// New checks cfg and returns its client. modelEnv names the variable that
// sets the model, for the error when it is missing.
func New(cfg Config, modelEnv string) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: want an absolute http or https URL such as https://api.openai.com/v1", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("base URL %s is set but no model is: set %s", cfg.BaseURL, modelEnv)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	path := "/chat/completions"
	switch cfg.API {
	case "", APIChat:
	case APIAnthropic:
		path = "/messages"
	case APIResponses:
		path = "/responses"
	default:
		return nil, fmt.Errorf("API %q: want chat, anthropic or responses", cfg.API)
	}
	return &Client{cfg: cfg, endpoint: strings.TrimRight(cfg.BaseURL, "/") + path}, nil
}

// Model is the model the client asks.
func (c *Client) Model() string { return c.cfg.Model }

// Endpoint is the URL the client posts to.
func (c *Client) Endpoint() string { return c.endpoint }

// Message is a chat message on the wire.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is one entry of an assistant message's tool_calls.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a tool call's function part; Arguments is a JSON text.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is a chat-completions request. Model is filled in from Config
// when empty.
type Request struct {
	Model    string          `json:"model"`
	Messages []Message       `json:"messages"`
	Tools    json.RawMessage `json:"tools,omitempty"`
	// Temperature is left out when nil: some models accept only their own.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Stream      bool     `json:"stream,omitempty"`
	// StreamOptions asks a streamed answer for its usage in the last chunk.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
}

// StreamOptions of a streamed request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Response is the model's answer: the assistant message's content and tool
// calls, and why it stopped.
type Response struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	// Tokens are the tokens the API reports for the call: input and
	// output, cache reads and writes included where it reports them apart
	// (B1's max_model_tokens). Zero when it reports none.
	Tokens int64
	// InputTokens are the request's input tokens as the API reports them,
	// cache reads and writes included (B3's estimate). Zero when it
	// reports none.
	InputTokens int64
}

// usage is the usage object of a completion or of a stream's last chunk:
// OpenAI's fields, and the cache fields of the APIs that report cache
// reads and writes beside the input tokens.
type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheReadTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationTokens int64 `json:"cache_creation_input_tokens"`
}

func (u *usage) total() int64 {
	if u == nil {
		return 0
	}
	return max(u.PromptTokens, u.InputTokens) + max(u.CompletionTokens, u.OutputTokens) + u.CacheReadTokens + u.CacheCreationTokens
}

// input is the request's input tokens: cache reads and writes are in
// prompt_tokens (chat) and input_tokens (Responses), apart on the Messages
// API, which the others do not report.
func (u *usage) input() int64 {
	if u == nil {
		return 0
	}
	return max(u.PromptTokens, u.InputTokens) + u.CacheReadTokens + u.CacheCreationTokens
}

// maxReplyBytes bounds how much of a reply is read.
const maxReplyBytes = 16 << 20

// Complete asks the model and waits for its whole answer.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	req.Stream, req.StreamOptions = false, nil
	return c.do(ctx, req, nil)
}

// Stream asks the model for a streamed answer (server-sent events) and calls
// onContent with each piece of content as it arrives; tool-call deltas are
// assembled, never passed on. A server that answers without streaming is
// read as a whole answer.
func (c *Client) Stream(ctx context.Context, req Request, onContent func(string)) (Response, error) {
	req.Stream = true
	req.StreamOptions = &StreamOptions{IncludeUsage: true}
	return c.do(ctx, req, onContent)
}

func (c *Client) do(ctx context.Context, req Request, onContent func(string)) (Response, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	if req.Model == "" {
		req.Model = c.cfg.Model
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode request: %w", err)
	}
	accept := "application/json"
	if req.Stream {
		accept = "text/event-stream, application/json"
	}
	resp, body, err := c.post(ctx, payload, func(h http.Header) {
		h.Set("Accept", accept)
		if c.cfg.APIKey != "" {
			h.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
	})
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); req.Stream && mt == "text/event-stream" {
		out, err := readStream(body, onContent)
		if err != nil && c.cfg.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Response{}, fmt.Errorf("no complete answer within %s", c.cfg.Timeout)
		}
		return out, err
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return Response{}, fmt.Errorf("read reply: %w", err)
	}
	out, err := parseCompletion(raw)
	if err == nil && onContent != nil && out.Content != "" {
		onContent(out.Content)
	}
	return out, err
}

// post sends payload to the endpoint with the headers that header sets,
// and returns the reply and its body, read at most maxReplyBytes; the
// caller closes resp.Body. A reply other than 200 is a *StatusError, with
// the reply's retry-after; a request that ran out of c's timeout says so.
func (c *Client) post(ctx context.Context, payload []byte, header func(http.Header)) (*http.Response, io.Reader, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, nil, fmt.Errorf("build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	header(hreq.Header)
	resp, err := c.cfg.HTTPClient.Do(hreq)
	if err != nil {
		if c.cfg.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("no answer within %s", c.cfg.Timeout)
		}
		return nil, nil, err
	}
	body := io.LimitReader(resp.Body, maxReplyBytes)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(body)
		resp.Body.Close()
		return nil, nil, &StatusError{Code: resp.StatusCode, Status: resp.Status, Message: errorMessage(raw), RetryAfter: retryAfter(resp.Header)}
	}
	return resp, body, nil
}

// StatusError is a reply with a status other than 200.
type StatusError struct {
	Code    int
	Status  string
	Message string
	// RetryAfter is the reply's retry-after (or retry-after-ms); zero
	// when it gave none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %s: %s", e.Status, e.Message) }

// Retryable reports whether asking again may help: rate limits and server
// errors.
func (e *StatusError) Retryable() bool {
	return e.Code == http.StatusTooManyRequests || e.Code == http.StatusRequestTimeout || e.Code >= 500
}

func errorMessage(raw []byte) string {
	var parsed struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &parsed) == nil && parsed.Error != nil && parsed.Error.Message != "" {
		return parsed.Error.Message
	}
	return strings.TrimSpace(text.Cut(string(raw), 300))
}

type completion struct {
	Choices []struct {
		Message struct {
			Content   *string    `json:"content"`
			ToolCalls []ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

func parseCompletion(raw []byte) (Response, error) {
	var parsed completion
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return Response{}, fmt.Errorf("reply is not a chat completion: %w", err)
	}
	if len(parsed.Choices) == 0 {
		return Response{}, errors.New("reply has no choices[0].message.content")
	}
	ch := parsed.Choices[0]
	if ch.Message.Content == nil && len(ch.Message.ToolCalls) == 0 {
		return Response{}, errors.New("reply has no choices[0].message.content")
	}
	out := Response{ToolCalls: ch.Message.ToolCalls, FinishReason: ch.FinishReason, Tokens: parsed.Usage.total(), InputTokens: parsed.Usage.input()}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	return out, nil
}

type chunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *usage `json:"usage"`
}

// readStream assembles a streamed answer from its server-sent events.
func readStream(r io.Reader, onContent func(string)) (Response, error) {
	var out Response
	var content strings.Builder
	calls := map[int]*ToolCall{}
	var order []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReplyBytes)
	done := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments, event names, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch chunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return Response{}, fmt.Errorf("stream event is not a chat completion chunk: %w", err)
		}
		if ch.Error != nil {
			return Response{}, fmt.Errorf("the stream reported an error: %w", streamError(ch.Error.Type, ch.Error.Message))
		}
		if ch.Usage != nil {
			out.Tokens, out.InputTokens = ch.Usage.total(), ch.Usage.input()
		}
		if len(ch.Choices) == 0 {
			continue
		}
		c := ch.Choices[0]
		if c.Delta.Content != nil && *c.Delta.Content != "" {
			content.WriteString(*c.Delta.Content)
			if onContent != nil {
				onContent(*c.Delta.Content)
			}
		}
		for _, d := range c.Delta.ToolCalls {
			tc := calls[d.Index]
			if tc == nil {
				tc = &ToolCall{Type: "function"}
				calls[d.Index] = tc
				order = append(order, d.Index)
			}
			if d.ID != "" {
				tc.ID = d.ID
			}
			if d.Type != "" {
				tc.Type = d.Type
			}
			tc.Function.Name += d.Function.Name
			tc.Function.Arguments += d.Function.Arguments
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			out.FinishReason = *c.FinishReason
		}
	}
	if err := sc.Err(); err != nil {
		return Response{}, fmt.Errorf("read stream: %w", err)
	}
	if !done && out.FinishReason == "" {
		return Response{}, errors.New("the stream ended before the answer did (no finish_reason, no [DONE])")
	}
	out.Content = content.String()
	sort.Ints(order)
	for _, i := range order {
		out.ToolCalls = append(out.ToolCalls, *calls[i])
	}
	return out, nil
}
