// Command taskserver is an MCP server whose tools run as tasks, for the
// tests of SPEC E2. The Go SDK serves its handshake and its tool list; the
// task methods are answered here, on the wire, since the SDK has none. It
// speaks the tasks extension of 2026-07-28 (a tools/call whose client
// capabilities name io.modelcontextprotocol/tasks gets a task, polled with
// tasks/get and answered with tasks/update) and, over stdio with -protocol
// 2025-11-25, the core tasks of that version (params.task, tasks/get,
// tasks/result, the tool's execution.taskSupport; what a task asks goes to
// the client as elicitation/create during tasks/result).
//
//   - research {topic}: a task that works for $TASK_MS milliseconds
//     (default 300) and answers "report on TOPIC"; each task it creates
//     appends "TOPIC" to the file $TASK_LOG;
//   - confirm {what}: a task that asks the user to confirm (a form with a
//     boolean "ok") and answers "confirmed WHAT" or "not confirmed: ACTION".
//
// Over stdio its tools/list results carry ttlMs $LIST_TTL_MS when that is
// set, and each one appends a line to the file $LIST_LOG.
//
// With -http ADDR it serves streamable HTTP on ADDR and prints its URL.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const tasksExtension = "io.modelcontextprotocol/tasks"

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address")
	protocol := flag.String("protocol", "", "the one protocol version to speak (default: all the SDK speaks)")
	flag.Parse()
	opts := &sdk.ServerOptions{}
	if *protocol != "" {
		opts.SupportedProtocolVersions = []string{*protocol}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "taskserver", Version: "1.0.0"}, opts)
	for _, name := range []string{"research", "confirm"} {
		s.AddTool(&sdk.Tool{Name: name, Description: "A long tool that runs as a task.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"},"what":{"type":"string"}}}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " runs only as a task"}}, IsError: true}, nil
			})
	}
	st := &store{tasks: map[string]*task{}}
	if *addr != "" {
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		// Stateless, it speaks 2026-07-28, which has no sessions.
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: *protocol == ""})
		log.Fatal(http.Serve(ln, st.middleware(h)))
	}
	t := &wireTransport{Transport: &sdk.StdioTransport{}, st: st}
	if err := s.Run(context.Background(), t); err != nil {
		log.Fatal(err)
	}
}

// task is one task and what it waits for.
type task struct {
	id, tool, arg string
	extension     bool
	created       time.Time

	mu      sync.Mutex
	status  string
	message string
	result  *sdk.CallToolResult
	// asks are the outstanding input requests (2026-07-28), answer where
	// an answer goes.
	asks   map[string]any
	answer chan *sdk.ElicitResult
	done   chan struct{}
	// waited is closed when the client first asks for the result
	// (tasks/result), in which a 2025-11-25 task's requests go to it.
	waited chan struct{}
	once   sync.Once
}

type store struct {
	mu    sync.Mutex
	tasks map[string]*task
	next  atomic.Int64
	// ask sends a 2025-11-25 task's elicitation/create to the client
	// (stdio only).
	ask func(ctx context.Context, t *task, p *sdk.ElicitParams) (*sdk.ElicitResult, error)
}

// start makes a task for a tools/call, or returns nil when it is not one.
func (st *store) start(params json.RawMessage) *task {
	var p struct {
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		Task      json.RawMessage `json:"task"`
		Meta      map[string]any  `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || (p.Name != "research" && p.Name != "confirm") {
		return nil
	}
	caps, _ := p.Meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, extension := ext[tasksExtension]
	if !extension && len(p.Task) == 0 {
		return nil
	}
	arg, _ := p.Arguments["topic"].(string)
	if p.Name == "confirm" {
		arg, _ = p.Arguments["what"].(string)
	}
	id := fmt.Sprintf("task-%d-%d", os.Getpid(), st.next.Add(1))
	// TASK_ID_LEN pads ids to that many bytes, for the client's bound on them.
	if n, _ := strconv.Atoi(os.Getenv("TASK_ID_LEN")); n > len(id) {
		id += "-" + strings.Repeat("x", n-len(id)-1)
	}
	t := &task{id: id, tool: p.Name, arg: arg, extension: extension,
		created: time.Now(), status: "working", answer: make(chan *sdk.ElicitResult, 1), done: make(chan struct{}), waited: make(chan struct{})}
	st.mu.Lock()
	st.tasks[t.id] = t
	st.mu.Unlock()
	if p.Name == "research" {
		appendLine("TASK_LOG", arg)
	}
	go st.run(t)
	return t
}

func (st *store) run(t *task) {
	switch t.tool {
	case "research":
		ms, _ := strconv.Atoi(os.Getenv("TASK_MS"))
		if ms <= 0 {
			ms = 300
		}
		t.set("working", "gathering sources", nil)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		t.set("completed", "done", text("report on "+t.arg))
	case "confirm":
		p := &sdk.ElicitParams{Mode: "form", Message: "Confirm " + t.arg + "?",
			RequestedSchema: json.RawMessage(`{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}`)}
		var got *sdk.ElicitResult
		if t.extension {
			t.mu.Lock()
			t.status, t.message = "input_required", "waiting for a confirmation"
			t.asks = map[string]any{"confirm-" + t.id: map[string]any{"method": "elicitation/create", "params": p}}
			t.mu.Unlock()
			got = <-t.answer
		} else {
			t.set("input_required", "waiting for a confirmation", nil)
			<-t.waited
			var err error
			if st.ask == nil {
				t.set("failed", "this server asks for input during tasks/result only over stdio", nil)
				return
			}
			if got, err = st.ask(context.Background(), t, p); err != nil {
				t.set("failed", err.Error(), nil)
				return
			}
		}
		t.mu.Lock()
		t.asks = nil
		t.mu.Unlock()
		if got.Action == "accept" && got.Content["ok"] == true {
			t.set("completed", "done", text("confirmed "+t.arg))
		} else {
			t.set("completed", "done", text("not confirmed: "+got.Action))
		}
	}
}

// appendLine appends line to the file that the environment variable env
// names, if it names one.
func appendLine(env, line string) {
	f := os.Getenv(env)
	if f == "" {
		return
	}
	if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_, _ = fh.WriteString(line + "\n")
		_ = fh.Close()
	}
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func (t *task) set(status, message string, res *sdk.CallToolResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status, t.message, t.result = status, message, res
	if status == "completed" || status == "failed" {
		close(t.done)
	}
}

// view is the task as tasks/get (or a CreateTaskResult) shows it.
func (t *task) view(created bool) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := map[string]any{"taskId": t.id, "status": t.status, "statusMessage": t.message,
		"createdAt": t.created.UTC().Format(time.RFC3339), "lastUpdatedAt": time.Now().UTC().Format(time.RFC3339)}
	if !t.extension {
		v["ttl"], v["pollInterval"] = 600000, 50
		if created {
			return map[string]any{"task": v}
		}
		return v
	}
	v["ttlMs"], v["pollIntervalMs"] = 600000, 50
	if created {
		v["resultType"] = "task"
		return v
	}
	v["resultType"] = "complete"
	switch t.status {
	case "input_required":
		v["inputRequests"] = t.asks
	case "completed":
		v["result"] = t.result
	}
	return v
}

// handle answers a task request, or reports that it is not one.
func (st *store) handle(ctx context.Context, method string, params json.RawMessage) (any, error, bool) {
	if method == "tools/call" {
		t := st.start(params)
		if t == nil {
			return nil, nil, false
		}
		return t.view(true), nil, true
	}
	if method != "tasks/get" && method != "tasks/update" && method != "tasks/result" && method != "tasks/cancel" {
		return nil, nil, false
	}
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	_ = json.Unmarshal(params, &p)
	st.mu.Lock()
	t := st.tasks[p.TaskID]
	st.mu.Unlock()
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task " + p.TaskID}, true
	}
	switch method {
	case "tasks/get":
		return t.view(false), nil, true
	case "tasks/update":
		t.mu.Lock()
		for k, raw := range p.InputResponses {
			if _, open := t.asks[k]; !open {
				continue // answered already, or never asked
			}
			delete(t.asks, k)
			var r sdk.ElicitResult
			if json.Unmarshal(raw, &r) == nil {
				t.answer <- &r
			}
		}
		t.mu.Unlock()
		return map[string]any{"resultType": "complete"}, nil, true
	case "tasks/result":
		t.once.Do(func() { close(t.waited) })
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, ctx.Err(), true
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.status == "failed" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: t.message}, true
		}
		return t.result, nil, true
	}
	return map[string]any{}, nil, true // tasks/cancel: nothing to stop here
}

// middleware answers the task requests of an HTTP client.
func (st *store) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		msg, err := jsonrpc.DecodeMessage(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.IsCall() {
			next.ServeHTTP(w, r)
			return
		}
		res, rerr, mine := st.handle(r.Context(), req.Method, req.Params)
		if !mine {
			next.ServeHTTP(w, r)
			return
		}
		out, _ := jsonrpc.EncodeMessage(response(req.ID, res, rerr))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

func response(id jsonrpc.ID, res any, err error) *jsonrpc.Response {
	resp := &jsonrpc.Response{ID: id}
	if err != nil {
		wire, ok := err.(*jsonrpc.Error)
		if !ok {
			wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		resp.Error = wire
		return resp
	}
	resp.Result, _ = json.Marshal(res)
	return resp
}

// wireTransport is the stdio transport with the task requests answered
// on the wire.
type wireTransport struct {
	sdk.Transport
	st *store
}

func (t *wireTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &wireConn{Connection: conn, st: t.st, lists: map[string]bool{}, own: map[string]chan *jsonrpc.Response{}}
	t.st.ask = c.ask
	return c, nil
}

type wireConn struct {
	sdk.Connection
	st   *store
	next atomic.Int64

	mu    sync.Mutex
	lists map[string]bool                   // ids of tools/list requests
	own   map[string]chan *jsonrpc.Response // ids of the server's own requests
}

func key(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			c.mu.Lock()
			ch, mine := c.own[key(m.ID)]
			delete(c.own, key(m.ID))
			c.mu.Unlock()
			if mine {
				ch <- m
				continue
			}
		case *jsonrpc.Request:
			if m.Method == "tools/list" {
				c.mu.Lock()
				c.lists[key(m.ID)] = true
				c.mu.Unlock()
			}
			if m.IsCall() && (m.Method == "tools/call" || len(m.Method) > 6 && m.Method[:6] == "tasks/") {
				if m.Method == "tools/call" {
					if res, rerr, mine := c.st.handle(ctx, m.Method, m.Params); mine {
						_ = c.Connection.Write(ctx, response(m.ID, res, rerr))
						continue
					}
				} else {
					go func() {
						res, rerr, _ := c.st.handle(context.Background(), m.Method, m.Params)
						_ = c.Connection.Write(context.Background(), response(m.ID, res, rerr))
					}()
					continue
				}
			}
		}
		return msg, nil
	}
}

// Write adds each task tool's execution.taskSupport to a tools/list
// result, which the SDK's Tool does not carry.
func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil {
		c.mu.Lock()
		list := c.lists[key(r.ID)]
		delete(c.lists, key(r.ID))
		c.mu.Unlock()
		if list {
			var res map[string]any
			if json.Unmarshal(r.Result, &res) == nil {
				if ms, _ := strconv.Atoi(os.Getenv("LIST_TTL_MS")); ms > 0 {
					res["ttlMs"] = ms
				}
				appendLine("LIST_LOG", "listed")
				tools, _ := res["tools"].([]any)
				for _, t := range tools {
					if m, ok := t.(map[string]any); ok {
						m["execution"] = map[string]any{"taskSupport": "optional"}
					}
				}
				if b, err := json.Marshal(res); err == nil {
					r = &jsonrpc.Response{ID: r.ID, Result: b}
					msg = r
				}
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// ask sends a 2025-11-25 task's elicitation/create to the client, related
// to the task, and waits for the answer.
func (c *wireConn) ask(ctx context.Context, t *task, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	id, _ := jsonrpc.MakeID(fmt.Sprintf("srv-%d", c.next.Add(1)))
	params := map[string]any{"mode": p.Mode, "message": p.Message, "requestedSchema": p.RequestedSchema,
		"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}}
	b, _ := json.Marshal(params)
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.own[key(id)] = ch
	c.mu.Unlock()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: "elicitation/create", Params: b}); err != nil {
		return nil, err
	}
	resp := <-ch
	if resp.Error != nil {
		return nil, resp.Error
	}
	var r sdk.ElicitResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
