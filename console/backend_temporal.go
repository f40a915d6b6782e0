package console

// This file is the one adapter between the console and the rounds: the
// Temporal client, the client package and the Redis event streams. It is
// written against the approval contract of SPEC T1/T3/T7 and falls back to
// what today's round workflow offers where that contract is not there yet.
// Each fallback is marked FALLBACK below.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

// Names of the round workflow's contract used here. They are strings so
// that this file does not follow the workflow package's reorganisation;
// they are the stable names registered with Temporal.
const (
	workflowType   = "ToolRound"
	updateConfirm  = "confirm" // update (T1); also the signal's name
	signalConfirm  = "confirm"
	signalExtend   = "extend" // T3
	queryPending   = "pending"
	queryProgress  = "progress"
	attrWaiting    = "ToolroundWaiting" // T7
	queryTimeout   = 5 * time.Second
	decideTimeout  = 20 * time.Second
	scanLimit      = 500
	sessionRounds  = 30
	lookupParallel = 8
)

// TemporalOptions configure NewTemporalBackend.
type TemporalOptions struct {
	// Namespace of the rounds. Default "default".
	Namespace string
	// TaskQueue of the workers; the inbox lists this queue's rounds.
	// Default "toolround".
	TaskQueue string
	// Redis carries the event streams and large results; nil: no events.
	Redis *cache.Client
	// Secrets seal store_secret values of submitted rounds, as the starter
	// does (T9).
	Secrets secrets.Config
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// TemporalBackend is the Backend over a Temporal client and Redis.
type TemporalBackend struct {
	tc   tclient.Client
	c    *client.Client
	opts TemporalOptions
	log  *slog.Logger
}

// NewTemporalBackend builds the real Backend.
func NewTemporalBackend(tc tclient.Client, opts TemporalOptions) *TemporalBackend {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.TaskQueue == "" {
		opts.TaskQueue = "toolround"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	co := client.Options{TaskQueue: opts.TaskQueue, Secrets: opts.Secrets}
	if opts.Redis != nil {
		co.Blobs = opts.Redis.Blobs()
	}
	return &TemporalBackend{tc: tc, c: client.New(tc, co), opts: opts, log: opts.Logger}
}

// Submit starts a round through the client, which seals and size-checks it.
func (b *TemporalBackend) Submit(ctx context.Context, in *round.Input) (string, error) {
	run, err := b.c.Start(ctx, in)
	if err != nil {
		if errors.Is(err, client.ErrInputTooLarge) || errors.Is(err, client.ErrInputMismatch) {
			return "", err
		}
		// The client has no typed errors for these two yet: an input that
		// fails validation, and a store_secret call that cannot be sealed.
		if strings.HasPrefix(err.Error(), "invalid round input") || strings.HasPrefix(err.Error(), "call ") {
			return "", fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		return "", err
	}
	return run.GetID(), nil
}

// Wait waits for a round's result.
func (b *TemporalBackend) Wait(ctx context.Context, workflowID string) (*round.Result, error) {
	return b.c.Result(ctx, workflowID)
}

// Round describes a round and reads its result or what it waits for.
func (b *TemporalBackend) Round(ctx context.Context, workflowID string) (*RoundView, error) {
	if _, _, err := checkID(workflowID, kindRound); err != nil {
		return nil, err
	}
	d, err := b.tc.DescribeWorkflow(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("round %s: %w", workflowID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("describe round %s: %w", workflowID, err)
	}
	info := d.RawResponse.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != workflowType {
		return nil, fmt.Errorf("%s is not a round: %w", workflowID, ErrNotFound)
	}
	return b.view(ctx, workflowID, info.GetStatus(), info.GetStartTime().AsTime()), nil
}

func (b *TemporalBackend) view(ctx context.Context, workflowID string, status enumspb.WorkflowExecutionStatus, start time.Time) *RoundView {
	v := &RoundView{WorkflowID: workflowID, StartTime: start}
	v.SessionID, v.RunID, v.Round = splitWorkflowID(workflowID)
	switch status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v.Status = StatusRunning
		if p, err := b.pending(ctx, workflowID); err == nil {
			v.Pending = p
		} else {
			v.Error = err.Error()
		}
		if raw, err := b.progress(ctx, workflowID); err == nil {
			v.Progress = raw
			var pr struct {
				Calls []CallView `json:"calls"`
			}
			if json.Unmarshal(raw, &pr) == nil {
				v.Calls = pr.Calls
			}
		}
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		res, err := b.c.Result(ctx, workflowID)
		if err != nil {
			v.Status, v.Error = StatusFailed, err.Error()
			break
		}
		v.Status, v.Result = StatusCompleted, res
		for _, r := range res.Results {
			v.Calls = append(v.Calls, CallView{CallID: r.CallID, Tool: r.Tool, State: "done", Status: string(r.Status)})
		}
	default:
		v.Status = StatusFailed
		v.Error = "the round " + strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_"))
		if status == enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
			if _, err := b.c.Result(ctx, workflowID); err != nil {
				v.Error = err.Error()
			}
		}
	}
	return v
}

// own makes sure that workflowID is one of the console's workflows before
// anything is sent to it: an id of one of kinds' shapes, and a workflow of
// the type that shape names (ToolRound, AgentRun). Any other workflow of
// the namespace is no such round or run (ErrNotFound), whatever its id
// looks like.
func (b *TemporalBackend) own(ctx context.Context, workflowID string, kinds idKind) (enumspb.WorkflowExecutionStatus, error) {
	kind, _, err := checkID(workflowID, kinds)
	if err != nil {
		return 0, err
	}
	want := workflowType
	if kind == kindAgent {
		want = round.AgentWorkflowName
	}
	d, err := b.tc.DescribeWorkflow(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return 0, fmt.Errorf("%s %s: %w", kind, workflowID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("describe %s %s: %w", kind, workflowID, err)
	}
	info := d.RawResponse.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != want {
		return 0, fmt.Errorf("%s is not a %s: %w", workflowID, kind, ErrNotFound)
	}
	return info.GetStatus(), nil
}

// splitWorkflowID reads toolround/<session>/<run>/<round>.
func splitWorkflowID(id string) (session, run string, n int) {
	parts := strings.Split(id, "/")
	if len(parts) != 4 || parts[0] != "toolround" {
		return "", "", 0
	}
	n, _ = strconv.Atoi(parts[3])
	return parts[1], parts[2], n
}

// noWorker marks Temporal's answer to a query that no worker polls for
// (its task queue has no poller) as client.ErrNoWorker: 503, not a failure
// of the console.
func noWorker(err error) error {
	if err != nil && strings.Contains(err.Error(), "no poller seen") {
		return fmt.Errorf("%w: %w", client.ErrNoWorker, err)
	}
	return err
}

func (b *TemporalBackend) pending(ctx context.Context, workflowID string) ([]PendingCall, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := b.tc.QueryWorkflow(ctx, workflowID, "", queryPending)
	if err != nil {
		return nil, fmt.Errorf("pending of %s: %w", workflowID, noWorker(err))
	}
	var out []PendingCall
	if err := v.Get(&out); err != nil {
		return nil, fmt.Errorf("pending of %s: %w", workflowID, err)
	}
	return out, nil
}

func (b *TemporalBackend) progress(ctx context.Context, workflowID string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := b.tc.QueryWorkflow(ctx, workflowID, "", queryProgress)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// quote makes a visibility query string literal; ids with quotes or
// backslashes are refused rather than escaped.
func quote(s string) (string, error) {
	if strings.ContainsAny(s, `'"\`) {
		return "", fmt.Errorf("%w: %q may not contain quotes or backslashes", ErrBadInput, s)
	}
	return "'" + s + "'", nil
}

// Inbox lists the rounds of the task queue that wait for a person (T7).
func (b *TemporalBackend) Inbox(ctx context.Context, session string) ([]InboxEntry, error) {
	tq, err := quote(b.opts.TaskQueue)
	if err != nil {
		return nil, err
	}
	base := "WorkflowType = '" + workflowType + "' AND ExecutionStatus = 'Running' AND TaskQueue = " + tq
	if session != "" {
		prefix, err := quote("toolround/" + session + "/")
		if err != nil {
			return nil, err
		}
		base += " AND WorkflowId STARTS_WITH " + prefix
	}
	// Rounds that keep ToolroundWaiting current are listed by it; rounds
	// that never set it are scanned.
	ids, err := b.list(ctx, base+" AND "+attrWaiting+" = true", scanLimit)
	scan := base + " AND " + attrWaiting + " IS NULL"
	if err != nil {
		if !unknownAttribute(err) {
			return nil, err
		}
		// FALLBACK(T7 search attributes): the namespace lacks
		// ToolroundWaiting, so every running round of the queue is asked
		// what it waits for.
		ids, scan = nil, base
	}
	more, err := b.list(ctx, scan, scanLimit)
	if err != nil {
		return nil, err
	}
	ids = append(ids, more...)

	ids = ownIDs(ids, kindRound)
	entries := make([]InboxEntry, len(ids))
	parallel(len(ids), func(i int) {
		p, err := b.pending(ctx, ids[i].id)
		if err != nil {
			return // a round without a live worker cannot say; it is left out
		}
		var waiting []PendingCall
		for _, pc := range p {
			if pc.Kind != KindToolResult {
				waiting = append(waiting, pc)
			}
		}
		s, _, _ := splitWorkflowID(ids[i].id)
		entries[i] = InboxEntry{WorkflowID: ids[i].id, SessionID: s, Pending: waiting}
	})
	out := []InboxEntry{}
	for _, e := range entries {
		if len(e.Pending) > 0 {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return newest(out[i]).After(newest(out[j])) })
	return out, nil
}

func newest(e InboxEntry) time.Time {
	var t time.Time
	for _, p := range e.Pending {
		if p.Since.After(t) {
			t = p.Since
		}
	}
	return t
}

// ownIDs keeps the listed workflows whose ids are of kind's shape: a
// workflow of the right type under another id is none of the console's.
func ownIDs(ids []listed, kind idKind) []listed {
	out := ids[:0]
	for _, l := range ids {
		if _, _, err := checkID(l.id, kind); err == nil {
			out = append(out, l)
		}
	}
	return out
}

type listed struct {
	id     string
	status enumspb.WorkflowExecutionStatus
	start  time.Time
}

func (b *TemporalBackend) list(ctx context.Context, query string, limit int) ([]listed, error) {
	var out []listed
	var token []byte
	for {
		resp, err := b.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: b.opts.Namespace, PageSize: 100, Query: query, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list rounds (%s): %w", query, err)
		}
		for _, e := range resp.GetExecutions() {
			out = append(out, listed{id: e.GetExecution().GetWorkflowId(), status: e.GetStatus(), start: e.GetStartTime().AsTime()})
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 || len(out) >= limit {
			return out, nil
		}
	}
}

// unknownAttribute tells a query refused for a search attribute the
// namespace does not have.
func unknownAttribute(err error) bool {
	var ia *serviceerror.InvalidArgument
	return errors.As(err, &ia) && strings.Contains(err.Error(), attrWaiting)
}

// Session lists a session's newest rounds with their calls.
func (b *TemporalBackend) Session(ctx context.Context, session string) ([]RoundView, error) {
	prefix, err := quote("toolround/" + session + "/")
	if err != nil {
		return nil, err
	}
	ids, err := b.list(ctx, "WorkflowType = '"+workflowType+"' AND WorkflowId STARTS_WITH "+prefix, sessionRounds)
	if err != nil {
		return nil, err
	}
	ids = ownIDs(ids, kindRound)
	sort.SliceStable(ids, func(i, j int) bool { return ids[i].start.After(ids[j].start) })
	if len(ids) > sessionRounds {
		ids = ids[:sessionRounds]
	}
	out := make([]RoundView, len(ids))
	parallel(len(ids), func(i int) {
		out[i] = *b.view(ctx, ids[i].id, ids[i].status, ids[i].start)
	})
	return out, nil
}

// parallel runs fn(0..n-1), lookupParallel at a time.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, lookupParallel)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// Decide sends a decision through the round's confirm update, whose
// validator refuses a call that does not wait, a stale approval_id and
// invalid edited arguments before anything is recorded (T1).
func (b *TemporalBackend) Decide(ctx context.Context, d Decision) error {
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	if _, err := b.own(ctx, d.WorkflowID, kindRound); err != nil {
		return err
	}
	h, err := b.tc.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{
		WorkflowID: d.WorkflowID, UpdateName: updateConfirm, Args: []any{d},
		WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err == nil {
		return nil
	}
	if unknownUpdate(err) {
		return b.decideBySignal(ctx, d)
	}
	return decisionError(d, err)
}

// decisionError maps the update's answers to the console's errors.
func decisionError(d Decision, err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case "not_waiting":
			return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrNotWaiting)
		case "stale_approval":
			return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrStaleApproval)
		case "invalid_args":
			return fmt.Errorf("%w: %s", ErrInvalidArgs, app.Message())
		}
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("round %s is not running: %w", d.WorkflowID, ErrNotWaiting)
	}
	return fmt.Errorf("confirm %s of %s: %w", d.CallID, d.WorkflowID, err)
}

func unknownUpdate(err error) bool {
	return strings.Contains(err.Error(), "unknown update")
}

// decideBySignal is FALLBACK(T1 confirm update): a round without the
// update handler gets the decision as the confirm signal, after the
// console has checked what the update's validator would: that the call
// waits, and that the approval_id is the waiting call's when the round
// gives one (rounds that give none are accepted without it). Today's
// signal cannot carry edited arguments, so an edit is refused rather than
// silently dropped. A decision racing another one for the same call is
// recorded by the round as an ignored signal.
func (b *TemporalBackend) decideBySignal(ctx context.Context, d Decision) error {
	p, err := b.waitingCall(ctx, d.WorkflowID, d.CallID)
	if err != nil {
		return err
	}
	if !p.NeedsDecision() {
		return fmt.Errorf("call %s of %s waits for an answer, not a decision: %w", d.CallID, d.WorkflowID, ErrNotWaiting)
	}
	if p.ApprovalID != "" && p.ApprovalID != d.ApprovalID {
		return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrStaleApproval)
	}
	if d.Args != "" && !sameJSON(d.Args, string(p.Arguments)) {
		return fmt.Errorf("%w: the workers of round %s cannot run a call with edited arguments yet; approve or deny it as it is", ErrUnsupported, d.WorkflowID)
	}
	d.Args = ""
	if err := b.tc.SignalWorkflow(ctx, d.WorkflowID, "", signalConfirm, d); err != nil {
		return decisionError(d, err)
	}
	return nil
}

// waitingCall finds a call in the round's pending list.
func (b *TemporalBackend) waitingCall(ctx context.Context, workflowID, callID string) (PendingCall, error) {
	p, err := b.pending(ctx, workflowID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return PendingCall{}, fmt.Errorf("round %s: %w", workflowID, ErrNotWaiting)
	}
	var qf *serviceerror.QueryFailed
	if errors.As(err, &qf) && strings.Contains(err.Error(), "completed") {
		return PendingCall{}, fmt.Errorf("round %s has finished: %w", workflowID, ErrNotWaiting)
	}
	if err != nil {
		return PendingCall{}, err
	}
	for _, pc := range p {
		if pc.CallID == callID {
			return pc, nil
		}
	}
	return PendingCall{}, fmt.Errorf("call %s of %s: %w", callID, workflowID, ErrNotWaiting)
}

// Answer answers an ask_user call that waits for one.
func (b *TemporalBackend) Answer(ctx context.Context, workflowID, callID string, answers []string) error {
	if _, err := b.own(ctx, workflowID, kindRound); err != nil {
		return err
	}
	p, err := b.waitingCall(ctx, workflowID, callID)
	if err != nil {
		return err
	}
	if p.Kind != KindAnswer {
		return fmt.Errorf("call %s of %s does not wait for an answer: %w", callID, workflowID, ErrNotWaiting)
	}
	return b.c.Answer(ctx, workflowID, callID, answers)
}

// Extend sends the extend signal (T3) and checks that the deadline moved.
func (b *TemporalBackend) Extend(ctx context.Context, workflowID, callID string, seconds int) error {
	if _, err := b.own(ctx, workflowID, kindRound); err != nil {
		return err
	}
	p, err := b.waitingCall(ctx, workflowID, callID)
	if err != nil {
		return err
	}
	payload := struct {
		CallID  string `json:"call_id"`
		Seconds int    `json:"seconds"`
	}{callID, seconds}
	if err := b.tc.SignalWorkflow(ctx, workflowID, "", signalExtend, payload); err != nil {
		return fmt.Errorf("extend %s of %s: %w", callID, workflowID, err)
	}
	// FALLBACK(T3 extend signal): a round whose workers predate the extend
	// signal keeps the signal unread; say so instead of claiming success.
	for range 20 {
		q, err := b.waitingCall(ctx, workflowID, callID)
		if err != nil || q.Deadline.After(p.Deadline) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%w: the round did not move the deadline of %s; its workers do not take the extend signal yet", ErrUnsupported, callID)
}

// Cancel cancels a round or an agent run, and no other workflow.
func (b *TemporalBackend) Cancel(ctx context.Context, workflowID string) error {
	if _, err := b.own(ctx, workflowID, kindRound|kindAgent); err != nil {
		return err
	}
	err := b.c.Cancel(ctx, workflowID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%s: %w", workflowID, ErrNotFound)
	}
	return err
}

// StartAgent starts an agent run through the client.
func (b *TemporalBackend) StartAgent(ctx context.Context, in round.AgentInput) (string, error) {
	run, err := b.c.StartAgent(ctx, in)
	if err != nil {
		// The client has no typed error for an input that fails validation.
		if strings.HasPrefix(err.Error(), "invalid agent input") {
			return "", fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		return "", err
	}
	return run.GetID(), nil
}

// describeAgent tells whether workflowID is an agent run, and its status.
func (b *TemporalBackend) describeAgent(ctx context.Context, workflowID string) (enumspb.WorkflowExecutionStatus, error) {
	return b.own(ctx, workflowID, kindAgent)
}

// Agent reads a run's status query while it runs, its result once it has
// ended. A run that failed, was terminated or timed out is shown with
// status failed and Error saying why; a running run whose workers do not
// answer, with status running and Error.
func (b *TemporalBackend) Agent(ctx context.Context, workflowID string) (*AgentView, error) {
	status, err := b.describeAgent(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	v := &AgentView{AgentStatus: round.AgentStatus{WorkflowID: workflowID}}
	switch status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		defer cancel()
		q, err := b.tc.QueryWorkflow(qctx, workflowID, "", round.QueryAgentStatus)
		if err == nil {
			err = q.Get(&v.AgentStatus)
		}
		if err != nil {
			v.Status, v.Error = round.AgentRunning, fmt.Sprintf("status of %s: %v", workflowID, err)
		}
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		st, err := b.c.WaitAgent(ctx, workflowID)
		if err != nil {
			return nil, err
		}
		v.AgentStatus = *st
	default:
		v.Status = StatusFailed
		v.Error = "the agent run " + strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_"))
		if status == enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
			if _, err := b.c.WaitAgent(ctx, workflowID); err != nil {
				v.Error = err.Error()
			}
		}
	}
	if v.WorkflowID == "" {
		v.WorkflowID = workflowID
	}
	return v, nil
}

// SessionAgents lists a session's newest agent runs; a run that cannot be
// read is listed with its error.
func (b *TemporalBackend) SessionAgents(ctx context.Context, session string) ([]AgentView, error) {
	prefix, err := quote("agentrun/" + session + "/")
	if err != nil {
		return nil, err
	}
	ids, err := b.list(ctx, "WorkflowType = '"+round.AgentWorkflowName+"' AND WorkflowId STARTS_WITH "+prefix, sessionRounds)
	if err != nil {
		return nil, err
	}
	ids = ownIDs(ids, kindAgent)
	sort.SliceStable(ids, func(i, j int) bool { return ids[i].start.After(ids[j].start) })
	if len(ids) > sessionRounds {
		ids = ids[:sessionRounds]
	}
	out := make([]AgentView, len(ids))
	parallel(len(ids), func(i int) {
		v, err := b.Agent(ctx, ids[i].id)
		if err != nil {
			v = &AgentView{AgentStatus: round.AgentStatus{WorkflowID: ids[i].id, Status: "unknown"}, Error: err.Error()}
		}
		out[i] = *v
	})
	return out, nil
}

// SendUserMessage signals a user message to a running agent run.
func (b *TemporalBackend) SendUserMessage(ctx context.Context, workflowID, text string) error {
	status, err := b.describeAgent(ctx, workflowID)
	if err != nil {
		return err
	}
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("agent run %s: %w", workflowID, ErrNotRunning)
	}
	err = b.c.SendUserMessage(ctx, workflowID, text)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		// It ended between the describe and the signal.
		return fmt.Errorf("agent run %s: %w", workflowID, ErrNotRunning)
	}
	return err
}

// maxResume bounds how far back a reconnecting reader's event is looked for.
const maxResume = 10000

// Events reads the session's event stream from its current end, or from
// just after the event named by after.
func (b *TemporalBackend) Events(ctx context.Context, session, after string, ready func(), fn func(round.Event) error) error {
	if b.opts.Redis == nil {
		return errors.New("events need Redis (REDIS_URL): they are published to a Redis stream per session")
	}
	// Stream positions, not "$": every event published after ready() is
	// then seen, even before the first read is issued.
	from := "0"
	if after != replayFromStart {
		var err error
		if from, err = b.opts.Redis.Events().Position(ctx, session, after, maxResume); err != nil {
			return fmt.Errorf("read events of %s: %w", session, err)
		}
	}
	ready()
	return b.opts.Redis.Events().Watch(ctx, session, from, fn)
}
