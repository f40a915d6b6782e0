//lint:file-ignore SA1019 roots and sampling are deprecated in 2026-07-28, but servers still ask for them during the deprecation window: roots get the call's workspace, sampling a clear refusal

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Elicitation (SPEC E1): a server that asks the user for input during a
// call (elicitation/create) is answered through the call's Elicitor, which
// the engine sets so that the request waits in the call's round. The call's
// own timeout stops while a person is asked.

// inflight is a call in progress on a server: its context (with the
// call's Elicitor) and its clock.
type inflight struct {
	ctx   context.Context
	clock *callClock
	// mu makes one request of the call wait for a person at a time.
	mu sync.Mutex
}

// begin records a call in flight; the returned func forgets it.
func (s *server) begin(ctx context.Context, clock *callClock) func() {
	c := &inflight{ctx: ctx, clock: clock}
	clock.call = c
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[*inflight]struct{}{}
	}
	s.calls[c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.calls, c)
		s.mu.Unlock()
	}
}

// callOf is the call a request belongs to. A request of a 2026-07-28
// server comes back in the call's result (input_required), so its context
// is the call's own; an older server's elicitation/create does not say
// which call it is for, so it is the server's only call in flight, and
// with several in flight the request is refused (the server then reports
// whatever it does without an answer).
func (s *server) callOf(ctx context.Context) (*inflight, error) {
	if clock, ok := ctx.Value(clockKey{}).(*callClock); ok && clock.call != nil {
		return clock.call, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.calls); n != 1 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("the client cannot tell which call this request is for: %d calls of this server are in flight", n)}
	}
	var only *inflight
	for c := range s.calls {
		only = c
	}
	return only, nil
}

// onElicit answers an older server's elicitation/create during a call
// (E1): the call's activity waits for a person, heartbeating.
func (s *server) onElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	only, err := s.callOf(ctx)
	if err != nil {
		return nil, err
	}
	return s.askInPlace(only, req.Params)
}

// elicitationOf is a request as the engine shows it.
func elicitationOf(server string, p *sdk.ElicitParams) (tools.Elicitation, error) {
	e := tools.Elicitation{Server: server, Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if e.Mode == "" {
		e.Mode = "form"
		if p.URL != "" {
			e.Mode = "url"
		}
	}
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return e, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestedSchema: " + err.Error()}
		}
		e.Schema = b
	}
	return e, nil
}

// askInPlace asks through the call's Elicitor while the call waits, its
// clock stopped.
func (s *server) askInPlace(only *inflight, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	e, err := elicitationOf(s.cfg.Name, p)
	if err != nil {
		return nil, err
	}
	only.mu.Lock()
	defer only.mu.Unlock()
	only.clock.pause()
	defer only.clock.resume()
	s.log.Info("mcp: the server asks for input; the call waits for a person", "mode", e.Mode)
	res, err := tools.Elicit(only.ctx, e)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no answer: " + err.Error()}
	}
	if res.Action == round.ElicitAccept && e.Mode == "form" {
		res.Content = wire.WithDefaults(e.Schema, res.Content)
	}
	return &sdk.ElicitResult{Action: res.Action, Content: res.Content}, nil
}

// callClock is a call's context with a timeout that stops while the call
// waits for a person: Err is context.DeadlineExceeded once the call has
// run for its timeout outside those waits.
type callClock struct {
	context.Context
	done chan struct{}

	mu     sync.Mutex
	err    error
	timer  *time.Timer
	left   time.Duration
	since  time.Time
	paused int
	stop   func() bool
	// call is the call in flight this clock times (begin).
	call *inflight
}

// clockKey finds a call's clock in a context derived from it.
type clockKey struct{}

// Value makes the clock findable from the contexts the SDK derives from
// it while it serves the call.
func (c *callClock) Value(key any) any {
	if key == (clockKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func newCallClock(parent context.Context, timeout time.Duration) *callClock {
	c := &callClock{Context: parent, done: make(chan struct{}), left: timeout, since: time.Now()}
	c.timer = time.AfterFunc(timeout, func() { c.end(context.DeadlineExceeded) })
	c.stop = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c
}

func (c *callClock) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || (err == context.DeadlineExceeded && c.paused > 0) {
		return
	}
	c.err = err
	close(c.done)
}

// Deadline is none: the call's end moves while it waits for a person.
func (c *callClock) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *callClock) Done() <-chan struct{}       { return c.done }
func (c *callClock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// pause stops the clock.
func (c *callClock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused == 0 && c.timer.Stop() {
		c.left -= time.Since(c.since)
	}
	c.paused++
}

// resume starts it again with the time that was left.
func (c *callClock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused == 0 && c.err == nil {
		c.since = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}

// release stops the clock's timer and its watch on the parent.
func (c *callClock) release() {
	c.timer.Stop()
	c.stop()
	c.end(context.Canceled)
}

// A 2026-07-28 server asks for input by answering a call with
// input_required: its input requests and an opaque requestState, to be sent
// back with the responses. The worker answers roots/list itself (the call's
// workspace), refuses sampling (it offers no model to servers), and hands the
// elicitations to the call's round (round.InputRequired), which waits for a
// person and runs the call again with the answers; where no round waits
// (tools.InputRounds is false), it asks through the call's Elicitor in place.

// resume is what a call sends again: the responses and the server's state.
type resume struct {
	responses sdk.InputResponseMap
	state     string
}

// raw is r's responses as JSON, by key.
func (r *resume) raw() (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(r.responses))
	for k, v := range r.responses {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// resumeOf reads a request's responses (round.ExecuteInput.InputResponses).
func resumeOf(req tools.Request) (*resume, error) {
	if len(req.InputResponses) == 0 && req.RequestState == "" {
		return nil, nil
	}
	b, err := json.Marshal(req.InputResponses)
	if err != nil {
		return nil, err
	}
	var m sdk.InputResponseMap
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("the answers to the server's input requests: %w", err)
	}
	return &resume{responses: m, state: req.RequestState}, nil
}

// inputFor answers an input_required result: the responses to send again,
// or the requests to hand to the round (handOff).
func (s *server) inputFor(ctx context.Context, res *sdk.CallToolResult, trips int) (*resume, *round.InputRequired, error) {
	if trips >= wire.MaxInputTrips {
		return nil, nil, fmt.Errorf("the server still asks for input after %d round trips", trips)
	}
	if len(res.InputRequests) == 0 {
		return nil, nil, errors.New("the server asks for input but names no request (it may be shedding load); try again later")
	}
	keys := make([]string, 0, len(res.InputRequests))
	for k := range res.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := &resume{responses: sdk.InputResponseMap{}, state: res.RequestState}
	var asks []round.ElicitRequest
	for _, k := range keys {
		switch p := res.InputRequests[k].(type) {
		case *sdk.ListRootsParams:
			out.responses[k] = &sdk.ListRootsResult{Roots: s.roots(ctx)}
		case *sdk.ElicitParams:
			e, err := elicitationOf(s.cfg.Name, p)
			if err != nil {
				return nil, nil, err
			}
			asks = append(asks, round.ElicitRequest{Key: k, Seq: len(asks) + 1, Server: e.Server, Mode: e.Mode, Message: e.Message,
				RequestedSchema: e.Schema, URL: e.URL, ElicitationID: e.ElicitationID})
		case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
			return nil, nil, errors.New("the server asks to sample a model (sampling/createMessage), which this client does not offer to servers")
		default:
			return nil, nil, fmt.Errorf("the server asks for input of a kind this client does not know (%T)", p)
		}
	}
	if len(asks) == 0 {
		return out, nil, nil
	}
	if tools.InputRounds(ctx) {
		hand := &round.InputRequired{Asks: asks, State: res.RequestState}
		if len(out.responses) > 0 {
			var err error
			if hand.Answered, err = out.raw(); err != nil {
				return nil, nil, err
			}
		}
		return nil, hand, nil
	}
	call, err := s.callOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range asks {
		p := res.InputRequests[a.Key].(*sdk.ElicitParams)
		r, err := s.askInPlace(call, p)
		if err != nil {
			return nil, nil, err
		}
		out.responses[a.Key] = r
	}
	return out, nil, nil
}

// roots is the call's workspace, the one root the worker gives servers:
// Config.Workspace's folder for the call, else Config.Dir. A call whose
// workspace is not known gets no root.
func (s *server) roots(ctx context.Context) []*sdk.Root {
	dir := s.opts.Dir
	if s.opts.Workspace != nil {
		var err error
		if dir, err = s.opts.Workspace(ctx); err != nil {
			s.log.Warn("mcp: the server asks for roots, and the call's workspace is not known; it gets none", "err", err)
			return []*sdk.Root{}
		}
	}
	if dir == "" {
		return []*sdk.Root{}
	}
	return []*sdk.Root{{URI: (&url.URL{Scheme: "file", Path: dir}).String(), Name: "workspace"}}
}
