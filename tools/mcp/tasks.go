package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Long MCP tools (SPEC E2). A server may answer a tools/call with a task
// instead of a result. In a round the call's activity returns the task
// (tools.Result.Task), which lands in history; the round then polls it in
// an activity of its own (tools.Request.Task), which may be retried on any
// worker, since polling changes nothing. A task in input_required waits as
// E1 does: a 2026-07-28 server names its requests in tasks/get, and they
// go to the round, whose answers the next poll sends with tasks/update; a
// 2025-11-25 server sends them as elicitation/create during tasks/result,
// answered as an older server's are. A stdio server's task lives in its
// process, which ends with the worker's: polled over another connection it
// is lost, and the call's outcome unknown. Outside a round the call polls
// its task itself.

const (
	// requestedTaskTTL is how long the worker asks a 2025-11-25 server
	// to keep a task: long enough for a person to answer what it asks.
	requestedTaskTTL = wire.MaxTaskPoll
	// Polls follow the server's pollInterval, within these bounds.
	defaultPoll = time.Second
	minPoll     = 20 * time.Millisecond
	maxPoll     = 30 * time.Second
)

// connID names a new stdio connection (round.MCPTask.Conn).
func connID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// handleOf is the handle of a task the server made for a call.
func (s *server) handleOf(t *wireTask, conn string, sess *sdk.ClientSession) *round.MCPTask {
	h := &round.MCPTask{Server: s.cfg.Name, ID: t.TaskID, PollMS: t.pollMS(), TTLMS: t.ttlMS(), Protocol: "2025-11-25"}
	if t.extension {
		h.Protocol = protocolTaskExtension
	} else if sess != nil && sess.InitializeResult() != nil {
		h.Protocol = sess.InitializeResult().ProtocolVersion
	}
	if s.cfg.stdio() {
		h.Conn = conn
	}
	return h
}

// extension reports whether h is a task of the 2026-07-28 extension.
func extension(h *round.MCPTask) bool { return h.Protocol >= protocolTaskExtension }

// taskBudget bounds one poll of h: the time the server keeps it, at most
// a day (wire.MaxTaskPoll).
func taskBudget(h *round.MCPTask) time.Duration {
	if ttl := time.Duration(h.TTLMS) * time.Millisecond; ttl > 0 && ttl < wire.MaxTaskPoll {
		return ttl
	}
	return wire.MaxTaskPoll
}

// maxTaskID bounds a task id, which goes into history.
const maxTaskID = 512

// continueTask is a call's activity after its server made a task: it sends
// the answers of the round (req.InputResponses) with tasks/update, then
// polls the task until it ends or asks for input again.
func (s *server) continueTask(ctx context.Context, req tools.Request, tool string, maxOutput int) (tools.Result, error) {
	h := req.Task
	clock := newCallClock(ctx, taskBudget(h))
	defer clock.release()
	defer s.begin(ctx, clock)()
	answered := map[string]bool{}
	if len(req.InputResponses) > 0 {
		sess, err := s.taskSession(clock, h)
		if err != nil {
			return tools.Result{}, s.taskError(h, tool, err)
		}
		if err := s.updateTask(clock, sess, h, req.InputResponses); err != nil {
			return tools.Result{}, s.taskError(h, tool, err)
		}
		for k := range req.InputResponses {
			answered[k] = true
		}
	}
	res, hand, err := s.pollTask(clock, h, answered, req.InputTrips)
	if err != nil {
		return tools.Result{}, s.taskError(h, tool, err)
	}
	if hand != nil {
		return tools.Result{Input: hand}, nil
	}
	return s.resultOf(ctx, res, maxOutput, tool)
}

// taskError names the server, the tool and the task in a poll's failure;
// one that may pass is worth another poll.
func (s *server) taskError(h *round.MCPTask, tool string, err error) error {
	err = fmt.Errorf("mcp server %q, tool %q, task %s: %w", s.cfg.Name, tool, h.ID, err)
	if errors.Is(err, tools.ErrOutcomeLost) || tools.IsTransient(err) {
		return err
	}
	if errors.Is(err, errUnreachable) || connectionFailed(err) {
		return tools.Transient(err)
	}
	return err
}

// taskSession is the session to poll h in. A stdio server's task is lost
// unless the connection that made it is still the live one.
func (s *server) taskSession(ctx context.Context, h *round.MCPTask) (*sdk.ClientSession, error) {
	if s.cfg.stdio() {
		s.mu.Lock()
		sess, c := s.sess, s.conn
		s.mu.Unlock()
		if sess == nil || c == nil || c.tap.conn != h.Conn {
			return nil, fmt.Errorf("%w: the task ran in the process of the stdio server that made it, and that process is gone "+
				"(a worker that dies takes its stdio servers along, T8), so what it did is unknown", tools.ErrOutcomeLost)
		}
		return sess, nil
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreachable, err)
	}
	return sess, nil
}

// pollTask polls h until it ends, or asks for input that the round must
// give (hand). answered are the request keys already answered.
func (s *server) pollTask(ctx context.Context, h *round.MCPTask, answered map[string]bool, trips int) (res *sdk.CallToolResult, hand *round.InputRequired, err error) {
	wait := time.Duration(h.PollMS) * time.Millisecond
	for {
		sess, err := s.taskSession(ctx, h)
		if err != nil {
			return nil, nil, err
		}
		raw, err := s.rpc(ctx, sess, "tasks/get", s.taskParams(sess, h, nil))
		if err != nil {
			if s.cfg.stdio() && connectionFailed(err) && ctx.Err() == nil {
				if _, lost := s.taskSession(ctx, h); lost != nil {
					return nil, nil, lost
				}
			}
			return nil, nil, err
		}
		var t wireTask
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, nil, fmt.Errorf("tasks/get: %w", err)
		}
		if ms := t.pollMS(); ms > 0 {
			wait = time.Duration(ms) * time.Millisecond
		}
		if t.StatusMessage != "" {
			tools.ReportProgress(ctx, "task "+t.Status+": "+t.StatusMessage)
		}
		switch t.Status {
		case "working":
		case "input_required":
			if !extension(h) {
				// 2025-11-25: the server sends its requests while
				// tasks/result waits for the end.
				res, err := s.taskResult(ctx, sess, h)
				return res, nil, err
			}
			in, err := inputRequestsOf(t.InputRequests, answered)
			if err != nil {
				return nil, nil, err
			}
			if in == nil {
				break // answered already; the server has yet to show it
			}
			resume, hand, err := s.inputFor(ctx, in, trips)
			if err != nil || hand != nil {
				return nil, hand, err
			}
			raw, err := resume.raw()
			if err != nil {
				return nil, nil, err
			}
			if err := s.updateTask(ctx, sess, h, raw); err != nil {
				return nil, nil, err
			}
			for k := range raw {
				answered[k] = true
			}
			trips++
			continue
		case "completed", "failed", "cancelled":
			if !extension(h) {
				res, err := s.taskResult(ctx, sess, h)
				if err == nil && t.Status == "cancelled" {
					return nil, nil, errors.New("the server cancelled the task")
				}
				return res, nil, err
			}
			return finalOf(&t)
		default:
			return nil, nil, fmt.Errorf("the server reports the task in a status this client does not know (%q)", t.Status)
		}
		d := min(max(wait, minPoll), maxPoll)
		if wait == 0 {
			d = defaultPoll
		}
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, ctx.Err()
		}
	}
}

// inputRequestsOf reads a 2026-07-28 task's input requests, without those
// already answered; nil when none is left.
func inputRequestsOf(raw json.RawMessage, answered map[string]bool) (*sdk.CallToolResult, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("the task's inputRequests: %w", err)
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		if !answered[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(keys)
	left := map[string]json.RawMessage{}
	for _, k := range keys {
		left[k] = all[k]
	}
	b, err := json.Marshal(map[string]any{"resultType": "input_required", "content": []any{}, "inputRequests": left})
	if err != nil {
		return nil, err
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("the task's inputRequests: %w", err)
	}
	return &res, nil
}

// finalOf is a 2026-07-28 task's end, as tasks/get gives it.
func finalOf(t *wireTask) (*sdk.CallToolResult, *round.InputRequired, error) {
	switch t.Status {
	case "failed":
		if t.Error != nil {
			return nil, nil, fmt.Errorf("the task failed: %s (code %d)", t.Error.Message, t.Error.Code)
		}
		return nil, nil, errors.New("the task failed: " + orNone(t.StatusMessage))
	case "cancelled":
		return nil, nil, errors.New("the server cancelled the task: " + orNone(t.StatusMessage))
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(t.Result, &res); err != nil {
		return nil, nil, fmt.Errorf("the task's result: %w", err)
	}
	return &res, nil, nil
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// taskResult reads a 2025-11-25 task's result (tasks/result), which waits
// for the task to end.
func (s *server) taskResult(ctx context.Context, sess *sdk.ClientSession, h *round.MCPTask) (*sdk.CallToolResult, error) {
	raw, err := s.rpc(ctx, sess, "tasks/result", s.taskParams(sess, h, nil))
	if err != nil {
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code != codeRejected {
			return nil, fmt.Errorf("the task failed: %s (code %d)", wire.Message, wire.Code)
		}
		return nil, err
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the task's result: %w", err)
	}
	return &res, nil
}

// updateTask sends a 2026-07-28 task the answers to its input requests.
func (s *server) updateTask(ctx context.Context, sess *sdk.ClientSession, h *round.MCPTask, responses map[string]json.RawMessage) error {
	_, err := s.rpc(ctx, sess, "tasks/update", s.taskParams(sess, h, responses))
	return err
}

// taskParams are a task request's params; a 2026-07-28 request carries
// the client's protocol version, identity and capabilities in _meta.
func (s *server) taskParams(sess *sdk.ClientSession, h *round.MCPTask, responses map[string]json.RawMessage) map[string]any {
	p := map[string]any{"taskId": h.ID}
	if responses != nil {
		p["inputResponses"] = responses
	}
	if extension(h) {
		version := protocolTaskExtension
		if ir := sess.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
			version = ir.ProtocolVersion
		}
		p["_meta"] = map[string]any{
			sdk.MetaKeyProtocolVersion: version,
			sdk.MetaKeyClientInfo:      clientInfo,
			sdk.MetaKeyClientCapabilities: map[string]any{
				"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
				"extensions":  map[string]any{tasksExtension: map[string]any{}},
			},
		}
	}
	return p
}

// rpc sends a request of the worker's own in sess's connection.
func (s *server) rpc(ctx context.Context, sess *sdk.ClientSession, method string, params map[string]any) (json.RawMessage, error) {
	if s.cfg.stdio() {
		s.mu.Lock()
		c, live := s.conn, s.sess == sess
		s.mu.Unlock()
		if c == nil || !live {
			return nil, fmt.Errorf("%s: %w", method, sdk.ErrConnectionClosed)
		}
		return c.call(ctx, method, params)
	}
	return s.httpCall(ctx, sess, method, params)
}

// httpCall sends a request of the worker's own as an HTTP request in
// sess's session, and reads its response, JSON or an event stream; a
// request the server makes in the stream (a 2025-11-25 task's
// elicitation/create during tasks/result) is answered as the SDK would.
func (s *server) httpCall(ctx context.Context, sess *sdk.ClientSession, method string, params map[string]any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(fmt.Sprintf("toolround-%d", s.nextToken.Add(1)))
	if err != nil {
		return nil, err
	}
	resp, err := s.post(ctx, sess, &jsonrpc.Request{ID: id, Method: method, Params: b})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && sess.ID() != "" {
		return nil, fmt.Errorf("%s: %w", method, sdk.ErrSessionMissing)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %w: the server answered HTTP %d: %s", method, errUnreachable, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	var found *jsonrpc.Response
	handle := func(m jsonrpc.Message) bool {
		switch m := m.(type) {
		case *jsonrpc.Response:
			if idKey(m.ID) == idKey(id) {
				found = m
				return true
			}
		case *jsonrpc.Request:
			if m.IsCall() {
				s.answerInStream(ctx, sess, m)
			}
		}
		return false
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = readEvents(resp.Body, handle)
	} else {
		var body []byte
		if body, err = io.ReadAll(io.LimitReader(resp.Body, maxTapped)); err == nil {
			var m jsonrpc.Message
			if m, err = jsonrpc.DecodeMessage(body); err == nil {
				handle(m)
			}
		}
	}
	if found == nil {
		if err == nil {
			err = errors.New("the server's answer has no response to the request")
		}
		return nil, fmt.Errorf("%s: %w: %w", method, errUnreachable, err)
	}
	if found.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, found.Error)
	}
	return found.Result, nil
}

// post sends one JSON-RPC message in sess's HTTP session.
func (s *server) post(ctx context.Context, sess *sdk.ClientSession, msg jsonrpc.Message) (*http.Response, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if ir := sess.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
		if r, ok := msg.(*jsonrpc.Request); ok && ir.ProtocolVersion >= protocolTaskExtension {
			req.Header.Set("Mcp-Method", r.Method)
		}
	}
	if id := sess.ID(); id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if s.oauth != nil {
		ts, err := s.oauth.TokenSource(ctx)
		if err != nil {
			return nil, err
		}
		if ts != nil {
			if tok, err := ts.Token(); err == nil && tok != nil {
				req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			}
		}
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreachable, err)
	}
	return resp, nil
}

// answerInStream answers a request the server made in the stream of one of
// the worker's own requests.
func (s *server) answerInStream(ctx context.Context, sess *sdk.ClientSession, req *jsonrpc.Request) {
	var result any
	var rerr error
	switch req.Method {
	case "ping":
		result = map[string]any{}
	case "roots/list":
		//lint:ignore SA1019 roots are still asked for during their deprecation window
		result = &sdk.ListRootsResult{Roots: s.roots(ctx)}
	case "elicitation/create":
		var p sdk.ElicitParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			break
		}
		call, err := s.callOf(ctx)
		if err != nil {
			rerr = err
			break
		}
		result, rerr = s.askInPlace(call, &p)
	default:
		rerr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this client does not answer " + req.Method}
	}
	resp := &jsonrpc.Response{ID: req.ID}
	if rerr != nil {
		var wire *jsonrpc.Error
		if !errors.As(rerr, &wire) {
			wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: rerr.Error()}
		}
		resp.Error = wire
	} else if b, err := json.Marshal(result); err == nil {
		resp.Result = b
	}
	r, err := s.post(ctx, sess, resp)
	if err != nil {
		s.log.Warn("mcp: answering the server's request failed", "method", req.Method, "err", err)
		return
	}
	_ = r.Body.Close()
}

// readEvents hands each message of an event stream to handle until it says
// it is done or the stream ends.
func readEvents(r io.Reader, handle func(jsonrpc.Message) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var ev eventStream
	for {
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			return err
		}
		if m, ok := ev.line(strings.TrimRight(line, "\r\n")); ok && handle(m) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
