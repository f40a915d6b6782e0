package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// mcp: a stdio MCP server that relays to the console's gateway (Z1), for
// clients that launch a process.

var mcpCommand = &command{name: "mcp", args: "--url URL", flagsInArgs: true,
	summary: "Relay an MCP client's stdio to the console's MCP gateway, unchanged: each JSON-RPC message on stdin is\n" +
		"POSTed to URL (the gateway's /api/v1/mcp?session=S&run=R), and what it answers is written to stdout.\n" +
		"The token comes from TOOLROUND_TOKEN (an agent token of the console), never from the command line.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.url, "url", "", "the gateway's URL, with ?session=S&run=R (required)")
	},
	run: func(ctx context.Context, x *call) error {
		if x.f.url == "" {
			return usageError{errors.New("mcp needs --url URL (the console's /api/v1/mcp?session=S&run=R)"), x.usage}
		}
		u, err := url.Parse(x.f.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{error: fmt.Errorf("--url %q: give the gateway's http:// or https:// URL", x.f.url)}
		}
		token := strings.TrimSpace(os.Getenv("TOOLROUND_TOKEN"))
		if token == "" {
			return usageError{error: errors.New("set TOOLROUND_TOKEN to an agent token of the console (it is never taken from the command line)")}
		}
		r := &relay{url: x.f.url, token: token, out: x.stdout, log: x.stderr, hc: &http.Client{}}
		return r.run(ctx, x.stdin)
	}}

// relay carries JSON-RPC messages between stdio and the gateway.
type relay struct {
	url, token string
	hc         *http.Client
	log        io.Writer

	mu      sync.Mutex // guards out, version and session
	out     io.Writer
	version string // MCP-Protocol-Version, from initialize's result
	session string // Mcp-Session-Id, when the server gives one
}

// maxMessage bounds one message on stdin.
const maxMessage = 32 << 20

func (r *relay) run(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	var wg sync.WaitGroup
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		// An initialize goes first and alone: its answer names the
		// protocol version the later requests carry.
		if isInitialize(msg) {
			wg.Wait()
			r.send(ctx, msg)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); r.send(ctx, msg) }()
	}
	wg.Wait()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

type rpcHead struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
}

func isInitialize(msg []byte) bool {
	var h rpcHead
	return json.Unmarshal(msg, &h) == nil && h.Method == "initialize"
}

// send POSTs one message and writes every message of the answer.
func (r *relay) send(ctx context.Context, msg []byte) {
	var h rpcHead
	_ = json.Unmarshal(msg, &h) // a batch or bad JSON: the gateway says what is wrong
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(msg))
	if err != nil {
		r.fail(h.ID, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+r.token)
	r.mu.Lock()
	if r.version != "" {
		req.Header.Set("MCP-Protocol-Version", r.version)
	}
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	r.mu.Unlock()
	resp, err := r.hc.Do(req)
	if err != nil {
		r.fail(h.ID, "the gateway did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		r.mu.Lock()
		r.session = s
		r.mu.Unlock()
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode == http.StatusAccepted:
	case strings.HasPrefix(ct, "text/event-stream"):
		r.events(resp.Body, h)
	case strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
		if err != nil {
			r.fail(h.ID, "read the gateway's answer: "+err.Error())
			return
		}
		if resp.StatusCode >= 300 && !isRPC(b) {
			r.fail(h.ID, fmt.Sprintf("the gateway answered %s: %s", resp.Status, strings.TrimSpace(string(b))))
			return
		}
		r.write(b, h)
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		r.fail(h.ID, fmt.Sprintf("the gateway answered %s: %s", resp.Status, strings.TrimSpace(string(b))))
	}
}

// isRPC reports a JSON-RPC message (or batch) in b.
func isRPC(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		_, ok := m["jsonrpc"]
		return ok
	}
	var batch []json.RawMessage
	return json.Unmarshal(b, &batch) == nil
}

// events writes the data of each server-sent event.
func (r *relay) events(body io.Reader, h rpcHead) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxMessage)
	var data []string
	flush := func() {
		if len(data) > 0 {
			r.write([]byte(strings.Join(data, "\n")), h)
			data = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
}

// write puts one message on stdout, on one line; an initialize's result
// sets the protocol version of what follows.
func (r *relay) write(b []byte, h rpcHead) {
	var line bytes.Buffer
	if err := json.Compact(&line, b); err != nil {
		r.fail(h.ID, "the gateway's answer is not JSON")
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.Method == "initialize" {
		var res struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(line.Bytes(), &res) == nil && res.Result.ProtocolVersion != "" {
			r.version = res.Result.ProtocolVersion
		}
	}
	line.WriteByte('\n')
	_, _ = r.out.Write(line.Bytes())
}

// fail answers a request the gateway could not answer with a JSON-RPC
// error, and says why on stderr; a notification only gets the line.
func (r *relay) fail(id json.RawMessage, why string) {
	r.mu.Lock()
	fmt.Fprintln(r.log, "starter mcp: "+oneLine(why))
	r.mu.Unlock()
	if len(id) == 0 || string(id) == "null" {
		return
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": why}})
	r.write(b, rpcHead{})
}
