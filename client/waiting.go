package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// PendingCall is a call that waits for a person or for the client: the
// round's own waiting-call type, with WorkflowID set. Kind is KindConfirm
// (Approve or Deny it), KindAnswer (an ask_user question: Answer it) or
// KindToolResult (a client tool: run it and SubmitToolResult); ApprovalID,
// when the round gives one, binds a decision to the arguments shown, and
// Approve and Deny pass it on.
type PendingCall = round.Pending

// Kinds of PendingCall.
const (
	KindConfirm    = round.KindConfirm
	KindLimit      = round.KindLimit
	KindAnswer     = round.KindAnswer
	KindToolResult = round.KindToolResult
	// KindElicitation: an MCP server asks for input during the call (E1):
	// its Elicitation says what; AnswerElicitation answers it.
	KindElicitation = round.KindElicitation
)

// Decision is an approval handler's answer to a waiting call.
type Decision struct {
	// Approve runs the call; false skips it.
	Approve bool
	// Reason goes into the result of a denied call.
	Reason string
	// Remember adds an allow rule for the rest of the run (Pattern, or this
	// call's exact arguments).
	Remember bool
	Pattern  string
	// AllowTurn approves the round's other waiting calls too.
	AllowTurn bool
	// By and Via are recorded with the decision (T2); Via defaults to
	// "api".
	By, Via string
	// Args, when set, are what the call runs with instead of the model's
	// arguments (approve only); they must pass the tool's schema.
	Args json.RawMessage
	// UpTo bounds the remembered rule to that many matching calls of the
	// run (B2).
	UpTo int64
	// Scope is the remembered rule's scope (T12, ConfirmOptions.Scope).
	Scope string
}

// ApprovalHandler decides a call that waits for approval. It runs in its own
// goroutine, once per call, and may block (to ask a person); ctx ends when the
// round does (a call's deadline may end it first: its decision is then
// dropped).
type ApprovalHandler func(ctx context.Context, p PendingCall) Decision

// RunOption changes how Run follows a round.
type RunOption func(*runOptions)

type runOptions struct {
	approve       ApprovalHandler
	onWaiting     func(PendingCall)
	onEvent       func(round.Event)
	waitForWorker bool
}

// WithApprovalHandler returns an option that has Run call h for every call of the round that waits
// for approval, and deliver its decision. Without it such calls wait for
// Approve or Deny from elsewhere (starter approve, another program) until
// their deadline.
func WithApprovalHandler(h ApprovalHandler) RunOption {
	return func(o *runOptions) { o.approve = h }
}

// WithWaitingHandler returns an option that has Run call fn once for every call that starts to wait,
// whatever its kind, before any approval handler decides it. fn runs on the
// goroutine that watches the round and must not block.
func WithWaitingHandler(fn func(PendingCall)) RunOption {
	return func(o *runOptions) { o.onWaiting = fn }
}

// WithEvents returns an option that has Run call fn with each of the round's events as the workers
// publish it (round_started, call_started, confirmation_requested,
// call_finished as each call ends (round.EventCallFinished), ...), while the
// round runs. It needs Options.Events (FromEnv sets it from
// REDIS_URL); without it Run returns an error before submitting the round.
func WithEvents(fn func(round.Event)) RunOption {
	return func(o *runOptions) { o.onEvent = fn }
}

// WaitForWorker returns an option that has Run submit the round even when no worker polls the task
// queue: it then waits until one does. By default Run refuses with
// ErrNoWorker instead.
func WaitForWorker() RunOption {
	return func(o *runOptions) { o.waitForWorker = true }
}

// ErrNoWorker is returned when no worker polls the task queue of a round
// that needs one.
var ErrNoWorker error = &round.Error{Code: round.CodeNoWorker, Message: "no worker polls task queue"}

// ErrRoundNotFound is returned for a workflow id that no round has (yet).
var ErrRoundNotFound error = &round.Error{Code: round.CodeNotFound, Message: "does not exist yet"}

// ErrRoundEnded is returned for a decision, an answer, an extension or a
// cancel sent to a round that has ended.
var ErrRoundEnded error = &round.Error{Code: round.CodeRoundEnded, Message: "has ended; it takes no more decisions, answers or cancels"}

// NoWorkerError returns the one-line error for a task queue without
// workers; it matches ErrNoWorker with errors.Is.
func NoWorkerError(taskQueue string) error {
	return fmt.Errorf("%w %q: start a worker with TASK_QUEUE=%s (bin/worker), or check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE", ErrNoWorker, taskQueue, taskQueue)
}

// workerGrace is how long Run waits for a worker that may be starting before
// it gives up on the task queue.
var workerGrace = 2 * time.Second

// Run submits a round, follows it as opts say (approval handler, events) and
// returns its result, with large results resolved. It fails fast, without
// submitting anything, when no worker polls the task queue (ErrNoWorker),
// unless WaitForWorker is given; a round that already finished is returned
// whether workers run or not. Errors are ErrInputTooLarge, ErrInputMismatch,
// ErrNoWorker, an invalid input, or the round's failure.
func (c *Client) Run(ctx context.Context, in *round.Input, opts ...RunOption) (*round.Result, error) {
	var o runOptions
	for _, f := range opts {
		f(&o)
	}
	if err := in.Validate(); err != nil {
		return nil, round.Errorf(round.CodeBadRequest, "invalid round input: %w", err)
	}
	if o.onEvent != nil && c.opts.Events == nil {
		return nil, errors.New("round events need Redis: Options.Events is not set (client.FromEnv sets it from REDIS_URL)")
	}
	if !o.waitForWorker {
		if err := c.requireWorker(ctx, in.WorkflowID()); err != nil {
			return nil, err
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var events chan struct{} // closed when the event watch ends
	finished := make(chan struct{})
	if o.onEvent != nil {
		events = make(chan struct{})
		go func() {
			defer close(events)
			c.followEvents(wctx, in, o.onEvent, finished)
		}()
	}
	run, sent, err := c.start(ctx, in)
	if err != nil {
		return nil, err
	}
	if o.approve != nil || o.onWaiting != nil {
		go c.follow(wctx, run.GetID(), o)
	}
	res, err := c.wait(ctx, run, sent)
	if events != nil {
		if err == nil {
			// The round published round_finished before it ended: let the
			// watch reach it, so that the caller sees every event.
			select {
			case <-finished:
			case <-time.After(3 * time.Second):
			case <-ctx.Done():
			}
		}
		stop()
		<-events
	}
	return res, err
}

var errStopWatch = errors.New("round finished")

// followEvents passes the round's events to fn until round_finished, then
// closes finished. It reads the session's stream from its start: a round
// attached to (submitted before) has published events already.
func (c *Client) followEvents(ctx context.Context, in *round.Input, fn func(round.Event), finished chan<- struct{}) {
	id := in.WorkflowID()
	_ = c.opts.Events.Watch(ctx, in.SessionID, "0", func(e round.Event) error {
		if e.WorkflowID != id {
			return nil
		}
		fn(e)
		if e.Type == round.EventRoundFinished {
			close(finished)
			return errStopWatch
		}
		return nil
	})
}

// requireWorker returns NoWorkerError when no worker polls the task queue
// within workerGrace, unless the round already finished, and an error that
// matches ErrNoWorker when the round runs already on a queue no worker
// polls.
func (c *Client) requireWorker(ctx context.Context, workflowID string) error {
	deadline := time.Now().Add(workerGrace)
	for {
		ok, err := c.HasWorkers(ctx)
		if err != nil {
			// A server that cannot say (permissions, an old version) is no
			// reason to refuse: the check only saves a hang.
			return nil
		}
		if ok {
			// The round may exist already, on a queue no worker polls:
			// submitting it again would attach to it and hang.
			if s, err := c.Stalled(ctx, workflowID); err == nil && s != nil && !s.Polled {
				return &round.Error{Code: round.CodeNoWorker, Message: s.String()}
			}
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	desc, err := c.describe(ctx, workflowID)
	if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	return NoWorkerError(c.opts.TaskQueue)
}

// Waiting returns a channel that receives each call of the round that starts
// to wait for a person or the client, once, as it does; it is closed when the
// round ends or ctx is done. Answer each with Approve, Deny, Answer or
// SubmitToolResult (by Kind), then Wait for the result. Waiting watches the
// round in the background (a query with backoff); a round that does not
// exist yet is waited for.
func (c *Client) Waiting(ctx context.Context, workflowID string) <-chan PendingCall {
	ch := make(chan PendingCall)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		// The round's end, from a long poll, stops the watch.
		defer cancel()
		for ctx.Err() == nil {
			err := c.tc.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	go func() {
		defer close(ch)
		defer cancel()
		c.watch(ctx, workflowID, func(p PendingCall) {
			select {
			case ch <- p:
			case <-ctx.Done():
			}
		})
	}()
	return ch
}

// follow tells o.onWaiting of each waiting call and decides confirmations
// with o.approve, until ctx ends. A handler still deciding then sees ctx
// done, and its decision is dropped.
func (c *Client) follow(ctx context.Context, workflowID string, o runOptions) {
	c.watch(ctx, workflowID, func(p PendingCall) {
		if o.onWaiting != nil {
			o.onWaiting(p)
		}
		if o.approve == nil || !p.NeedsDecision() {
			return
		}
		go func() {
			d := o.approve(ctx, p)
			c.deliver(ctx, p, d)
		}()
	})
}

// deliver sends a decision, retrying while the round runs: the call keeps
// waiting until it arrives.
func (c *Client) deliver(ctx context.Context, p PendingCall, d Decision) {
	o := ConfirmOptions{Reason: d.Reason, Remember: d.Remember, AllowTurn: d.AllowTurn, Pattern: d.Pattern, ApprovalID: p.ApprovalID,
		By: d.By, Via: d.Via, Args: d.Args, WaitID: p.WaitID, UpTo: d.UpTo, Scope: d.Scope}
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 2*time.Second) {
		var err error
		if d.Approve {
			err = c.Approve(ctx, p.WorkflowID, p.CallID, o)
		} else {
			err = c.Deny(ctx, p.WorkflowID, p.CallID, o)
		}
		var nf *serviceerror.NotFound
		if err == nil || errors.As(err, &nf) {
			return // delivered, or the round is over
		}
		if errors.Is(err, ErrNotWaiting) || errors.Is(err, ErrStaleApproval) || errors.Is(err, ErrInvalidArgs) ||
			errors.Is(err, ErrStaleWait) || errors.Is(err, ErrInvalidDecision) || errors.Is(err, ErrInvalidPattern) {
			return // the round refused it: sending it again changes nothing
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
}

// pacing of watch: queries follow each other at fastest after a change,
// growing to settled within settleFor, then to slowest, so that a call
// waiting for an hour costs a query every few seconds, not ten a second. An
// event of the round on the session's stream (Options.Events) wakes the
// watch at once.
type pacing struct {
	fastest, settled, slowest, settleFor time.Duration
}

var defaultPacing = pacing{fastest: 100 * time.Millisecond, settled: time.Second, slowest: 5 * time.Second, settleFor: 30 * time.Second}

// watch calls fn once for each call that starts to wait, until ctx ends, from
// the round's pending query.
func (c *Client) watch(ctx context.Context, workflowID string, fn func(PendingCall)) {
	wake := c.wakeOnEvents(ctx, workflowID)
	told := map[string]bool{}
	pace := c.pace
	delay, quietSince := pace.fastest, time.Now()
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		pending, err := c.queryPending(qctx, workflowID)
		cancel()
		fresh := false
		if err == nil {
			for _, p := range pending {
				key := p.CallID + "\x00" + p.ApprovalID
				if told[key] {
					continue
				}
				told[key], fresh = true, true
				fn(p)
			}
		}
		limit := pace.settled
		if time.Since(quietSince) > pace.settleFor {
			limit = pace.slowest
		}
		if fresh {
			delay, quietSince = pace.fastest, time.Now()
		} else {
			delay = min(delay*3/2, limit)
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		case <-wake:
			delay, quietSince = pace.fastest, time.Now()
		}
	}
}

// wakeOnEvents returns a channel that receives when the round publishes an
// event (a confirmation requested, a call started); nil without an event
// source or a workflow id of the toolround/<session>/<run>/<round> form.
func (c *Client) wakeOnEvents(ctx context.Context, workflowID string) <-chan struct{} {
	parts := strings.Split(workflowID, "/")
	if c.opts.Events == nil || len(parts) != 4 {
		return nil
	}
	wake := make(chan struct{}, 1)
	go func() {
		_ = c.opts.Events.Watch(ctx, parts[1], "$", func(e round.Event) error {
			if e.WorkflowID == workflowID {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
			return nil
		})
	}()
	return wake
}

// queryPending asks the round what it waits for. The answer is decoded as
// JSON, so fields that newer workers add (approval_id) are read when present.
func (c *Client) queryPending(ctx context.Context, workflowID string) ([]PendingCall, error) {
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", names.QueryPending)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return nil, err
	}
	var out []PendingCall
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].WorkflowID = workflowID
	}
	return out, nil
}

// describeRound returns ErrRoundNotFound for a workflow id no round has;
// otherwise whether the round still runs and its task queue.
func (c *Client) describeRound(ctx context.Context, workflowID string) (running bool, taskQueue string, err error) {
	desc, err := c.describe(ctx, workflowID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, "", fmt.Errorf("round %s %w (or its history is past retention)", workflowID, ErrRoundNotFound)
	}
	if err != nil {
		return false, "", fmt.Errorf("describe round %s: %w", workflowID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	taskQueue = info.GetTaskQueue()
	if taskQueue == "" {
		taskQueue = c.opts.TaskQueue
	}
	return info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, taskQueue, nil
}

// requireWorkerOn returns NoWorkerError when no worker polls taskQueue: a
// query would only time out.
func (c *Client) requireWorkerOn(ctx context.Context, taskQueue string) error {
	ok, err := c.hasWorkers(ctx, taskQueue)
	if err != nil {
		return err
	}
	if !ok {
		return NoWorkerError(taskQueue)
	}
	return nil
}
