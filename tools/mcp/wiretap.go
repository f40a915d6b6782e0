package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The wire tap (E2): the SDK knows nothing of MCP tasks, so the worker
// reads and adds what they need on the wire, below the SDK. On the way out
// it asks for a task in each tools/call where the server may make one
// (params.task on 2025-11-25, where the tool's execution.taskSupport
// allows it; the tasks extension in the request's client capabilities on
// 2026-07-28). On the way in it reads each tool's taskSupport from the
// tools/list results, and the task a tools/call result carries instead of
// a result. It also sends the task requests themselves (tasks/get,
// tasks/update, tasks/result): over a stdio server's pipe beside the
// SDK's own requests (tapConn), or as HTTP requests of their own in the
// session (httpCall).

const (
	tasksExtension = "io.modelcontextprotocol/tasks"
	// protocolTaskExtension is the first protocol version whose tasks are
	// the extension's, not the core's.
	protocolTaskExtension = "2026-07-28"
	// maxTapped bounds what the tap keeps of one HTTP response line or
	// body while it looks for a message: a task handle is small.
	maxTapped = 8 << 20
)

// taskSlot is a call that may become a task: once its tools/call has
// its answer, the task the server made, if it made one.
type taskSlot struct {
	mu   sync.Mutex
	task *wireTask
	conn string
}

func (s *taskSlot) set(t *wireTask, conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.task, s.conn = t, conn
}

func (s *taskSlot) get() (*wireTask, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.task, s.conn
}

type slotKey struct{}

// withTaskSlot marks ctx's tools/call as one that may become a task.
func withTaskSlot(ctx context.Context, slot *taskSlot) context.Context {
	return context.WithValue(ctx, slotKey{}, slot)
}

// wireTask is a task as either protocol version sends it.
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// TTL and PollInterval are 2025-11-25's names, TTLMs and
	// PollIntervalMs 2026-07-28's.
	TTL            *int64 `json:"ttl,omitempty"`
	TTLMs          *int64 `json:"ttlMs,omitempty"`
	PollInterval   *int64 `json:"pollInterval,omitempty"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
	// A 2026-07-28 tasks/get carries these inline.
	InputRequests json.RawMessage `json:"inputRequests,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         *jsonrpc.Error  `json:"error,omitempty"`
	// extension: the task came as 2026-07-28's (resultType "task").
	extension bool
}

func (t *wireTask) pollMS() int64 {
	switch {
	case t.PollIntervalMs != nil:
		return *t.PollIntervalMs
	case t.PollInterval != nil:
		return *t.PollInterval
	}
	return 0
}

func (t *wireTask) ttlMS() int64 {
	switch {
	case t.TTLMs != nil:
		return *t.TTLMs
	case t.TTL != nil:
		return *t.TTL
	}
	return 0
}

// taskOf reads a tools/call result: the task it stands for, or nil for a
// result.
func taskOf(result json.RawMessage) *wireTask {
	var r struct {
		ResultType string    `json:"resultType"`
		Task       *wireTask `json:"task"` // 2025-11-25's CreateTaskResult
		TaskID     string    `json:"taskId"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	if r.ResultType == "task" && r.TaskID != "" {
		var t wireTask
		if json.Unmarshal(result, &t) != nil {
			return nil
		}
		t.extension = true
		return &t
	}
	if r.Task != nil && r.Task.TaskID != "" {
		return r.Task
	}
	return nil
}

// tap is what one connection's messages pass through.
type tap struct {
	s *server
	// conn names a stdio connection (round.MCPTask.Conn); empty over HTTP.
	conn string

	mu      sync.Mutex
	pending map[string]tapped // over a stdio pipe: request id → what to read of its response
}

// tapped is what the tap reads of a response: the tools of a tools/list,
// or the task of a tools/call.
type tapped struct {
	method string
	slot   *taskSlot
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// out looks at a request about to leave: the request to send instead and
// what to read of its response (method "" for nothing).
func (t *tap) out(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Request, tapped) {
	if !req.IsCall() {
		return req, tapped{}
	}
	switch req.Method {
	case "tools/list":
		return req, tapped{method: req.Method}
	case "tools/call":
		slot, _ := ctx.Value(slotKey{}).(*taskSlot)
		if slot == nil {
			return req, tapped{}
		}
		params, ok := t.s.askForTask(req.Params)
		if !ok {
			return req, tapped{}
		}
		r := *req
		r.Params = params
		return &r, tapped{method: req.Method, slot: slot}
	}
	return req, tapped{}
}

// in reads a response as w says.
func (t *tap) in(w tapped, resp *jsonrpc.Response) {
	if resp.Error != nil {
		return
	}
	switch w.method {
	case "tools/list":
		t.s.noteTaskSupport(resp.Result)
		t.s.noteList(resp.Result)
	case "tools/call":
		if task := taskOf(resp.Result); task != nil {
			w.slot.set(task, t.conn)
		}
	}
}

// askForTask adds to a tools/call's params what asks the server for a
// task, where it may make one: ok is false when it may not.
func (s *server) askForTask(raw json.RawMessage) (json.RawMessage, bool) {
	var params map[string]any
	if json.Unmarshal(raw, &params) != nil {
		return nil, false
	}
	meta, _ := params["_meta"].(map[string]any)
	if v, _ := meta[sdk.MetaKeyProtocolVersion].(string); v >= protocolTaskExtension {
		// 2026-07-28: the client declares the extension on the request,
		// and the server decides.
		caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
		if caps == nil {
			caps = map[string]any{}
			meta[sdk.MetaKeyClientCapabilities] = caps
		}
		ext, _ := caps["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
			caps["extensions"] = ext
		}
		ext[tasksExtension] = map[string]any{}
	} else {
		name, _ := params["name"].(string)
		support, _ := s.taskSupport.Load(name)
		if support != "optional" && support != "required" {
			return nil, false
		}
		params["task"] = map[string]any{"ttl": requestedTaskTTL.Milliseconds()}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, false
	}
	return b, true
}

// noteTaskSupport keeps each listed tool's execution.taskSupport
// (2025-11-25), which the SDK does not keep.
func (s *server) noteTaskSupport(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		if t.Execution != nil && t.Execution.TaskSupport != "" {
			s.taskSupport.Store(t.Name, t.Execution.TaskSupport)
		} else {
			s.taskSupport.Delete(t.Name)
		}
	}
}

// tapConn is a stdio server's connection through the tap; it also carries
// the worker's own task requests (call).
type tapConn struct {
	sdk.Connection
	tap  *tap
	next atomic.Int64

	mu   sync.Mutex
	own  map[string]chan *jsonrpc.Response
	done chan struct{}
	once sync.Once
}

func newTapConn(s *server, conn string) *tapConn {
	return &tapConn{tap: &tap{s: s, conn: conn, pending: map[string]tapped{}}, own: map[string]chan *jsonrpc.Response{}, done: make(chan struct{})}
}

func (c *tapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		var w tapped
		msg, w = c.tap.out(ctx, req)
		if w.method != "" {
			c.tap.mu.Lock()
			c.tap.pending[idKey(req.ID)] = w
			c.tap.mu.Unlock()
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			return msg, nil
		}
		key := idKey(resp.ID)
		c.mu.Lock()
		ch, mine := c.own[key]
		delete(c.own, key)
		c.mu.Unlock()
		if mine {
			ch <- resp
			continue
		}
		c.tap.mu.Lock()
		w, tapped := c.tap.pending[key]
		delete(c.tap.pending, key)
		c.tap.mu.Unlock()
		if tapped {
			c.tap.in(w, resp)
		}
		return msg, nil
	}
}

func (c *tapConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Connection.Close()
}

// call sends a request of the worker's own over the pipe and waits for
// its response.
func (c *tapConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(fmt.Sprintf("toolround-%d", c.next.Add(1)))
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	key := idKey(id)
	c.mu.Lock()
	c.own[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.own, key)
		c.mu.Unlock()
	}()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: b}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, resp.Error)
		}
		return resp.Result, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", method, sdk.ErrConnectionClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tapHTTP runs an HTTP request of the SDK's through the tap: a JSON-RPC
// request in its body may be rewritten, and its response is read as it
// streams to the SDK.
func (t *tap) tapHTTP(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil {
		return send(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	var w tapped
	if msg, derr := jsonrpc.DecodeMessage(body); derr == nil {
		if r, ok := msg.(*jsonrpc.Request); ok {
			var out *jsonrpc.Request
			if out, w = t.out(req.Context(), r); out != r {
				if b, eerr := jsonrpc.EncodeMessage(out); eerr == nil {
					body = b
				}
			}
		}
	}
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := send(req)
	if err != nil || w.method == "" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	resp.Body = &tapBody{ReadCloser: resp.Body, sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		onMsg: func(m jsonrpc.Message) {
			if r, ok := m.(*jsonrpc.Response); ok {
				t.in(w, r)
			}
		}}
	return resp, nil
}

// tapBody hands each JSON-RPC message of a response body to onMsg before
// the reader above it sees the bytes that end it.
type tapBody struct {
	io.ReadCloser
	sse   bool
	onMsg func(jsonrpc.Message)
	buf   []byte
	ev    eventStream
	off   bool
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.off {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if b.sse {
		b.events()
	} else if errors.Is(err, io.EOF) {
		if msg, derr := jsonrpc.DecodeMessage(b.buf); derr == nil {
			b.onMsg(msg)
		}
		b.buf = nil
	}
	if len(b.buf) > maxTapped {
		b.off, b.buf, b.ev = true, nil, eventStream{}
	}
	return n, err
}

// events reads the complete lines of an event stream.
func (b *tapBody) events() {
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return
		}
		line := strings.TrimSuffix(string(b.buf[:i]), "\r")
		b.buf = b.buf[i+1:]
		if m, ok := b.ev.line(line); ok {
			b.onMsg(m)
		}
	}
}

// eventStream puts an event stream's messages together line by line: each
// event's data lines, joined, are one JSON-RPC message.
type eventStream struct{ data []string }

// line takes one line, without its end; at the end of an event it returns
// the event's message, when it is one.
func (e *eventStream) line(line string) (jsonrpc.Message, bool) {
	switch {
	case line == "":
		data := e.data
		e.data = nil
		if len(data) == 0 {
			return nil, false
		}
		m, err := jsonrpc.DecodeMessage([]byte(strings.Join(data, "\n")))
		return m, err == nil
	case strings.HasPrefix(line, "data:"):
		e.data = append(e.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
	}
	return nil, false
}
