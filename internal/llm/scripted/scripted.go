// Package scripted is a model that plays a script, for agent runs without
// a model server: it answers in each API an agent run speaks (F4), streamed
// with that API's own events, in process (Client) or on loopback (Serve).
package scripted

import (
	"bytes"
	"encoding/json"
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

// Turn is one answer of the model: its text, then its calls. A turn
// without calls is a final answer.
type Turn struct {
	Text  string
	Calls []Call
}

// Request is what a script sees of a model request.
type Request struct {
	// Step is the number of assistant turns in the conversation plus one,
	// so the same conversation always gets the same turn.
	Step int
	// Task is the conversation's first user message; Last is the content
	// of its last tool result.
	Task, Last string
}

// A Script gives the model's turn for a request; its error is the model's
// answer with status 400, which a run does not retry.
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
	h := Handler(FromModelScript(s), 0)
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

// Serve serves s on loopback and returns its base URL (LLM_BASE_URL) and
// the function that stops it.
func Serve(s Script, typing time.Duration) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: Handler(s, typing), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// Handler answers POST /v1/chat/completions, /v1/messages and
// /v1/responses with s's turn for the request, streamed with the API's
// events, a word of text each typing.
func Handler(s Script, typing time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(s, typing, w, r)
	})
}

func fail(w http.ResponseWriter, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}

func serve(s Script, typing time.Duration, w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Input    []json.RawMessage `json:"input"`
	}
	api := map[string]string{"/v1/chat/completions": llm.APIChat, "/v1/messages": llm.APIAnthropic, "/v1/responses": llm.APIResponses}[r.URL.Path]
	if api == "" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		fail(w, "the scripted model answers POST /v1/chat/completions, /v1/messages and /v1/responses")
		return
	}
	conv := append(req.Messages, req.Input...)
	step, last := readConversation(conv)
	t, err := s.Turn(Request{Step: step, Task: firstUser(conv), Last: last})
	if err != nil {
		fail(w, "scripted model: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	e := &encoder{w: w, typing: typing, step: step}
	switch api {
	case llm.APIChat:
		e.chat(t)
	case llm.APIAnthropic:
		e.anthropic(t)
	case llm.APIResponses:
		e.responses(t)
	}
}

// encoder writes one turn as an API's stream of server-sent events.
type encoder struct {
	w      http.ResponseWriter
	typing time.Duration
	step   int
	seq    int
}

func (e *encoder) send(event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// words calls fn with each word of text, as a model types them.
func (e *encoder) words(text string, fn func(word string)) {
	if text == "" {
		return
	}
	for _, word := range strings.SplitAfter(text, " ") {
		fn(word)
		if e.typing > 0 {
			time.Sleep(e.typing)
		}
	}
}

func (e *encoder) chat(t Turn) {
	chunk := func(v any) { e.send("", map[string]any{"choices": []any{v}}) }
	e.words(t.Text, func(word string) {
		chunk(map[string]any{"index": 0, "delta": map[string]any{"content": word}})
	})
	for i, c := range t.Calls {
		chunk(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}}}}})
	}
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish})
	fmt.Fprint(e.w, "data: [DONE]\n\n")
}

func (e *encoder) anthropic(t Turn) {
	ev := func(v map[string]any) { e.send(v["type"].(string), v) }
	ev(map[string]any{"type": "message_start", "message": map[string]any{"id": fmt.Sprintf("msg_%d", e.step), "type": "message", "role": "assistant",
		"model": "scripted", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 50, "output_tokens": 1}}})
	ev(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	e.words(t.Text, func(word string) {
		ev(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": word}})
	})
	ev(map[string]any{"type": "content_block_stop", "index": 0})
	for i, c := range t.Calls {
		ev(map[string]any{"type": "content_block_start", "index": i + 1, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		ev(map[string]any{"type": "content_block_delta", "index": i + 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.Args}})
		ev(map[string]any{"type": "content_block_stop", "index": i + 1})
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	ev(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	ev(map[string]any{"type": "message_stop"})
}

func (e *encoder) responses(t Turn) {
	ev := func(v map[string]any) { v["sequence_number"] = e.seq; e.seq++; e.send(v["type"].(string), v) }
	msgID, respID := fmt.Sprintf("msg_%d", e.step), fmt.Sprintf("resp_%d", e.step)
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress", "output": []any{}}})
	// The message item is there even without text: the next request sends
	// it back, and the conversation's assistant turns are counted by it.
	ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	e.words(t.Text, func(word string) {
		ev(map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": 0, "content_index": 0, "delta": word})
	})
	message := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": message})
	output := []any{message}
	for _, c := range t.Calls {
		id := "fc_" + c.ID
		i := len(output)
		ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}})
		ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": i, "delta": c.Args})
		ev(map[string]any{"type": "response.function_call_arguments.done", "item_id": id, "output_index": i, "arguments": c.Args})
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": c.Args}
		ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
		output = append(output, item)
	}
	ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID, "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 50, "output_tokens": 20, "total_tokens": 70}}})
}

// readConversation reads a request's conversation, in any of the three
// APIs' shapes: the step is the number of assistant turns plus one, and
// last is the content of the last tool result.
func readConversation(conversation []json.RawMessage) (step int, last string) {
	step = 1
	for _, raw := range conversation {
		var m struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m.Role == "assistant" {
			step++
		}
		switch {
		case m.Role == "tool": // chat
			_ = json.Unmarshal(m.Content, &last)
		case m.Type == "function_call_output": // responses
			_ = json.Unmarshal(m.Output, &last)
		case m.Role == "user": // anthropic: tool_result blocks
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) == nil {
				for _, b := range blocks {
					if b.Type == "tool_result" && json.Unmarshal(b.Content, &last) != nil {
						var parts []struct{ Text string }
						if json.Unmarshal(b.Content, &parts) == nil && len(parts) > 0 {
							last = parts[len(parts)-1].Text
						}
					}
				}
			}
		}
	}
	return step, last
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
