// Package scripted is a model that plays a script, for agent runs without
// a model server: it answers in each API an agent run speaks (F4), streamed
// with that API's own events, in process (Client) or on loopback (Serve).
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/round"
)

// Call is one tool call of a turn; Args is its arguments' JSON.
type Call struct {
	ID, Name, Args string
}

// Turn is one answer of the model: its thinking, its text, then its
// calls. A turn without calls is a final answer.
type Turn struct {
	// Thinking, when set, opens the turn: a thinking block signed with
	// Signature on the Messages API, a reasoning item whose encrypted
	// content is Signature on the Responses API; chat completions have
	// none.
	Thinking, Signature string
	Text                string
	Calls               []Call
	// Stop is the API's own reason the turn ended (finish_reason,
	// stop_reason, or the Responses API's incomplete reason); by default
	// the one for a turn with or without calls.
	Stop string
	// Usage is the tokens the answer reports; by default 50 in, 20 out.
	Usage *Usage
}

// Usage is the tokens an answer reports.
type Usage struct {
	Input, Output int
}

// Message is a message of a request's conversation, read the same way
// from each API: a tool result is a message of role "tool" whose CallID
// is the call it answers, whichever API carried it.
type Message struct {
	Role, Content, CallID string
}

// Request is what a script sees of a model request.
type Request struct {
	// Step is the number of assistant turns in the conversation plus one,
	// so the same conversation always gets the same turn.
	Step int
	// Task is the conversation's first user message; Last is the content
	// of its last tool result.
	Task, Last string
	// API is the API the request came on (llm.APIChat, APIAnthropic,
	// APIResponses); Stream says whether it asked for a stream.
	API    string
	Stream bool
	// Messages is the conversation, system message first when there is
	// one; Tools the names of the tools offered.
	Messages []Message
	Tools    []string
	// Body is the request as it came.
	Body []byte
	// Context ends when the caller goes away.
	Context context.Context
}

// Results is the request's tool results, in order.
func (r Request) Results() []Message {
	var out []Message
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// StatusError is a script's answer with an HTTP status of its choice: Body
// goes out as it is.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Body) }

// A Script gives the model's turn for a request; its error is the model's
// answer with status 400, which a run does not retry, or a StatusError's.
type Script interface {
	Turn(Request) (Turn, error)
}

// Func is a Script of one function.
type Func func(Request) (Turn, error)

// Turn calls f.
func (f Func) Turn(r Request) (Turn, error) { return f(r) }

// FromModelScript plays a round.ModelScript: turn Step for each request.
func FromModelScript(s *round.ModelScript) Script {
	return Func(func(r Request) (Turn, error) {
		m, err := s.Turn(r.Step)
		if err != nil {
			return Turn{}, err
		}
		t := Turn{Text: m.Content}
		for _, c := range m.ToolCalls {
			t.Calls = append(t.Calls, Call{ID: c.ID, Name: c.Function.Name, Args: string(c.Function.Arguments)})
		}
		return t, nil
	})
}

// API is the API (llm.APIChat, APIAnthropic, APIResponses) whose answers
// hold turns of format f.
func API(f round.Format) string {
	switch f.Name() {
	case round.FormatAnthropic:
		return llm.APIAnthropic
	case round.FormatResponses:
		return llm.APIResponses
	}
	return llm.APIChat
}

// Client is a model client that plays s in process, in the API of s's
// format, with no network: an agent run's model call uses it in place of
// the worker's model when the run has a script.
func Client(s *round.ModelScript) (*llm.Client, error) {
	h := Handler(FromModelScript(s), Options{})
	return llm.New(llm.Config{BaseURL: "http://scripted.invalid/v1", Model: "scripted", API: API(s.Format),
		HTTPClient: &http.Client{Transport: inProcess{h}}}, "the script")
}

// inProcess answers a request with a handler, without a connection.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &recorder{header: http.Header{}, code: http.StatusOK}
	t.h.ServeHTTP(w, req)
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: w.code, Status: fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)),
		Header: w.header, Body: io.NopCloser(&w.body), Request: req, ContentLength: int64(w.body.Len())}, nil
}

// recorder is the http.ResponseWriter of inProcess.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

// Options shape how a Handler writes its answers.
type Options struct {
	// Typing is the pause after each word of text, as a model types.
	Typing time.Duration
	// Split streams each call's arguments in two pieces, as models do.
	Split bool
}

// Serve serves s on loopback and returns its base URL (LLM_BASE_URL) and
// the function that stops it.
func Serve(s Script, o Options) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: Handler(s, o), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// Handler answers POST /v1/chat/completions, /v1/messages and
// /v1/responses with s's turn for the request: streamed with the API's
// events when the request asks for a stream, one JSON answer when not.
func Handler(s Script, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(s, o, w, r)
	})
}

func fail(w http.ResponseWriter, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}

func serve(s Script, o Options, w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool              `json:"stream"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
		Input    []json.RawMessage `json:"input"`
		Tools    []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	api := map[string]string{"/v1/chat/completions": llm.APIChat, "/v1/messages": llm.APIAnthropic, "/v1/responses": llm.APIResponses}[r.URL.Path]
	body, err := io.ReadAll(r.Body)
	if api == "" || r.Method != http.MethodPost || err != nil || json.Unmarshal(body, &req) != nil {
		fail(w, "the scripted model answers POST /v1/chat/completions, /v1/messages and /v1/responses")
		return
	}
	conv := append(req.Messages, req.Input...)
	in := Request{Step: 1, Task: firstUser(conv), API: api, Stream: req.Stream,
		Messages: readMessages(req.System, conv), Body: body, Context: r.Context()}
	// The step is the number of assistant turns plus one; Last, the
	// content of the last tool result.
	for _, m := range in.Messages {
		switch m.Role {
		case "assistant":
			in.Step++
		case "tool":
			in.Last = m.Content
		}
	}
	for _, t := range req.Tools {
		in.Tools = append(in.Tools, t.Name+t.Function.Name)
	}
	t, err := s.Turn(in)
	var se *StatusError
	switch {
	case errors.As(err, &se):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(se.Code)
		_, _ = w.Write([]byte(se.Body))
		return
	case err != nil:
		fail(w, "scripted model: "+err.Error())
		return
	}
	e := &encoder{w: w, o: o, step: in.Step, stream: req.Stream}
	if e.stream {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	switch api {
	case llm.APIChat:
		e.chat(t)
	case llm.APIAnthropic:
		e.anthropic(t)
	case llm.APIResponses:
		e.responses(t)
	}
}

// encoder writes one turn as an API's answer: a stream of server-sent
// events, or when the request asked for none, the one JSON object those
// events add up to.
type encoder struct {
	w      http.ResponseWriter
	o      Options
	step   int
	seq    int
	stream bool
}

func (e *encoder) send(event string, v any) {
	if !e.stream {
		return
	}
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// whole writes the answer of a request that asked for no stream.
func (e *encoder) whole(v any) {
	if e.stream {
		return
	}
	e.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(e.w).Encode(v)
}

// words calls fn with each word of text, as a model types them.
func (e *encoder) words(text string, fn func(word string)) {
	if text == "" || !e.stream {
		return
	}
	for _, word := range strings.SplitAfter(text, " ") {
		fn(word)
		if e.o.Typing > 0 {
			time.Sleep(e.o.Typing)
		}
	}
}

// pieces is a call's arguments as they are streamed: whole, or in two
// halves when the options split them.
func (e *encoder) pieces(args string) []string {
	if !e.o.Split || len(args) < 2 {
		return []string{args}
	}
	return []string{args[:len(args)/2], args[len(args)/2:]}
}

func usage(t Turn) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	return Usage{Input: 50, Output: 20}
}

func (e *encoder) chat(t Turn) {
	chunk := func(v any) { e.send("", map[string]any{"choices": []any{v}}) }
	e.words(t.Text, func(word string) {
		chunk(map[string]any{"index": 0, "delta": map[string]any{"content": word}})
	})
	var calls []any
	for i, c := range t.Calls {
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
		for j, piece := range e.pieces(c.Args) {
			call := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if j == 0 {
				call["id"], call["type"], call["function"] = c.ID, "function", map[string]any{"name": c.Name, "arguments": piece}
			}
			chunk(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{call}}})
		}
	}
	finish := t.Stop
	if finish == "" {
		finish = "stop"
		if len(t.Calls) > 0 {
			finish = "tool_calls"
		}
	}
	u := usage(t)
	counts := map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
	chunk(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish})
	e.send("", map[string]any{"choices": []any{}, "usage": counts})
	if e.stream {
		fmt.Fprint(e.w, "data: [DONE]\n\n")
	}
	msg := map[string]any{"role": "assistant", "content": t.Text}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	e.whole(map[string]any{"id": fmt.Sprintf("chatcmpl_%d", e.step), "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": counts})
}

func (e *encoder) anthropic(t Turn) {
	ev := func(v map[string]any) { e.send(v["type"].(string), v) }
	u := usage(t)
	ev(map[string]any{"type": "message_start", "message": map[string]any{"id": fmt.Sprintf("msg_%d", e.step), "type": "message", "role": "assistant",
		"model": "scripted", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": u.Input, "output_tokens": 1}}})
	var content []any
	if t.Thinking != "" {
		i := len(content)
		ev(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		ev(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": t.Thinking}})
		ev(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": t.Signature}})
		ev(map[string]any{"type": "content_block_stop", "index": i})
		content = append(content, map[string]any{"type": "thinking", "thinking": t.Thinking, "signature": t.Signature})
	}
	// A text block only when there is text, or nothing else: the API
	// refuses an empty one sent back.
	if t.Text != "" || len(t.Calls) == 0 {
		i := len(content)
		ev(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		e.words(t.Text, func(word string) {
			ev(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": word}})
		})
		ev(map[string]any{"type": "content_block_stop", "index": i})
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range t.Calls {
		i := len(content)
		ev(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, piece := range e.pieces(c.Args) {
			ev(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		ev(map[string]any{"type": "content_block_stop", "index": i})
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
	}
	stop := t.Stop
	if stop == "" {
		stop = "end_turn"
		if len(t.Calls) > 0 {
			stop = "tool_use"
		}
	}
	ev(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
	ev(map[string]any{"type": "message_stop"})
	e.whole(map[string]any{"id": fmt.Sprintf("msg_%d", e.step), "type": "message", "role": "assistant", "model": "scripted", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output}})
}

func (e *encoder) responses(t Turn) {
	ev := func(v map[string]any) { v["sequence_number"] = e.seq; e.seq++; e.send(v["type"].(string), v) }
	msgID, respID := fmt.Sprintf("msg_%d", e.step), fmt.Sprintf("resp_%d", e.step)
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress", "output": []any{}}})
	var output []any
	if t.Thinking != "" {
		id := fmt.Sprintf("rs_%d", e.step)
		item := map[string]any{"id": id, "type": "reasoning", "summary": []any{}, "encrypted_content": t.Signature}
		ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
		ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		output = append(output, item)
	}
	// The message item is there even without text: the next request sends
	// it back, and the conversation's assistant turns are counted by it.
	mi := len(output)
	ev(map[string]any{"type": "response.output_item.added", "output_index": mi, "item": map[string]any{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	e.words(t.Text, func(word string) {
		ev(map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": mi, "content_index": 0, "delta": word})
	})
	message := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	ev(map[string]any{"type": "response.output_item.done", "output_index": mi, "item": message})
	output = append(output, message)
	for _, c := range t.Calls {
		id := "fc_" + c.ID
		i := len(output)
		ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}})
		for _, piece := range e.pieces(c.Args) {
			ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": i, "delta": piece})
		}
		ev(map[string]any{"type": "response.function_call_arguments.done", "item_id": id, "output_index": i, "arguments": c.Args})
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": c.Args}
		ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
		output = append(output, item)
	}
	u := usage(t)
	resp := map[string]any{"id": respID, "object": "response", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Input + u.Output}}
	done := "response.completed"
	if t.Stop != "" {
		resp["status"], resp["incomplete_details"] = "incomplete", map[string]any{"reason": t.Stop}
		done = "response.incomplete"
	}
	ev(map[string]any{"type": done, "response": resp})
	e.whole(resp)
}

// readMessages reads a conversation, in any of the three APIs' shapes, as
// Messages: system first when the Messages API gave one apart.
func readMessages(system json.RawMessage, conversation []json.RawMessage) []Message {
	var out []Message
	if s := text(system); s != "" {
		out = append(out, Message{Role: "system", Content: s})
	}
	for _, raw := range conversation {
		var m struct {
			Role       string          `json:"role"`
			Type       string          `json:"type"`
			Content    json.RawMessage `json:"content"`
			Output     json.RawMessage `json:"output"`
			ToolCallID string          `json:"tool_call_id"`
			CallID     string          `json:"call_id"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		switch {
		case m.Type == "function_call_output": // responses
			out = append(out, Message{Role: "tool", Content: text(m.Output), CallID: m.CallID})
		case m.Role == "tool": // chat
			out = append(out, Message{Role: "tool", Content: text(m.Content), CallID: m.ToolCallID})
		case m.Role != "":
			// A Messages API user turn may carry tool_result blocks: each is a
			// tool message, and the rest of the turn is the user's.
			var blocks []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			rest := m.Role != "user"
			if json.Unmarshal(m.Content, &blocks) == nil {
				for _, b := range blocks {
					if b.Type == "tool_result" {
						out = append(out, Message{Role: "tool", Content: text(b.Content), CallID: b.ToolUseID})
					} else {
						rest = true
					}
				}
			} else {
				rest = true
			}
			if rest {
				out = append(out, Message{Role: m.Role, Content: text(m.Content)})
			}
		}
	}
	return out
}

// text is a content's text: a string, or the text of its parts joined.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// firstUser is the first user message of a conversation when its content
// is a string: the run's task.
func firstUser(conversation []json.RawMessage) string {
	for _, raw := range conversation {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Role == "user" {
			s, _ := m.Content.(string)
			return s
		}
	}
	return ""
}
