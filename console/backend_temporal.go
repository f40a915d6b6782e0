package console

// This file is the one adapter between the console and the rounds: the
// client package, which speaks to the rounds (SPEC T1/T3/T7), the Temporal
// client for what only the console asks (which workflow an id names, the
// listings of a session) and the Redis event streams.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/workspace"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// Limits of the console's requests to Temporal.
const (
	queryTimeout   = 5 * time.Second
	decideTimeout  = 20 * time.Second
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
	// ToolWorkerTTL is TOOL_WORKER_TTL: a card says a user tool's queue is
	// polled when a tool worker polled it within it. Default
	// usertools.DefaultTTL.
	ToolWorkerTTL time.Duration
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
		co.Blobs, co.SecretData = opts.Redis.Blobs(), opts.Redis.SessionData()
	}
	return &TemporalBackend{tc: tc, c: client.New(tc, co), opts: opts, log: opts.Logger}
}

// Submit starts a round through the client, which seals and size-checks it.
func (b *TemporalBackend) Submit(ctx context.Context, in *round.Input) (string, error) {
	run, err := b.c.Start(ctx, in)
	if err != nil {
		return "", badInput(err)
	}
	return run.GetID(), nil
}

// badInput says "bad request" before the client's refusal of an input
// (an input that fails validation, a store_secret call that cannot be
// sealed), as the console's own refusals do.
func badInput(err error) error {
	if round.CodeOf(err) == round.CodeBadRequest {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return err
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
	if info.GetType().GetName() != names.WorkflowName {
		return nil, fmt.Errorf("%s is not a round: %w", workflowID, ErrNotFound)
	}
	v := b.view(ctx, workflowID, info.GetStatus(), info.GetStartTime().AsTime())
	if p, ok := info.GetMemo().GetFields()[names.MemoBuildID]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &v.BuildID)
	}
	return v, nil
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
	want := names.WorkflowName
	if kind == kindAgent {
		want = names.AgentWorkflowName
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

// pending is what the round waits for, through the client; each call is
// listed under its round, without its workflow id.
func (b *TemporalBackend) pending(ctx context.Context, workflowID string) ([]PendingCall, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	out, err := b.c.Pending(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	return underRound(out), nil
}

// underRound clears the workflow ids of calls listed under their round.
func underRound(ps []PendingCall) []PendingCall {
	for i := range ps {
		ps[i].WorkflowID = ""
	}
	return ps
}

// progress is the round's progress query answer as the worker gives it.
func (b *TemporalBackend) progress(ctx context.Context, workflowID string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := b.tc.QueryWorkflow(ctx, workflowID, "", names.QueryProgress)
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

// Inbox lists the rounds of the task queue that wait for a person (T7),
// through the client, newest wait first. A round that cannot say what it
// waits for (no live worker) is left out.
func (b *TemporalBackend) Inbox(ctx context.Context, session string) ([]InboxEntry, error) {
	if session != "" {
		if _, err := quote(session); err != nil {
			return nil, err
		}
	}
	rounds, err := b.c.InboxOf(ctx, client.InboxOptions{Session: session, TaskQueue: b.opts.TaskQueue})
	if err != nil && !client.IsInboxError(err) {
		return nil, err
	}
	out := []InboxEntry{}
	for _, r := range rounds {
		if _, _, err := checkID(r.WorkflowID, kindRound); err != nil {
			continue // a workflow of the right type under another id is none of the console's
		}
		out = append(out, InboxEntry{WorkflowID: r.WorkflowID, SessionID: r.SessionID, Pending: underRound(r.Pending)})
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

// Session lists a session's newest rounds with their calls.
func (b *TemporalBackend) Session(ctx context.Context, session string) ([]RoundView, error) {
	prefix, err := quote(names.SessionRoundsPrefix(session))
	if err != nil {
		return nil, err
	}
	ids, err := b.list(ctx, "WorkflowType = '"+names.WorkflowName+"' AND WorkflowId STARTS_WITH "+prefix, sessionRounds)
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

// Decide sends a decision through the client's Approve or Deny, the
// round's confirm update, whose validator refuses a call that does not
// wait, a stale approval_id and invalid edited arguments before anything is
// recorded (T1).
func (b *TemporalBackend) Decide(ctx context.Context, d Decision) error {
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	if _, err := b.own(ctx, d.WorkflowID, kindRound); err != nil {
		return err
	}
	o := client.ConfirmOptions{ApprovalID: d.ApprovalID, Reason: d.Reason, Remember: d.Remember, AllowTurn: d.AllowTurn, Pattern: d.Pattern,
		By: d.By, Via: d.Via, Verified: d.Verified, WaitID: d.WaitID, UpTo: d.UpTo, Scope: d.Scope, Nonce: d.Nonce}
	if d.Args != "" {
		// The text of the edited object, as a JSON string holding it.
		args, err := json.Marshal(d.Args)
		if err != nil {
			return fmt.Errorf("%w: args: %w", ErrInvalidArgs, err)
		}
		o.Args = args
	}
	var err error
	if d.Approve {
		err = b.c.Approve(ctx, d.WorkflowID, d.CallID, o)
	} else {
		err = b.c.Deny(ctx, d.WorkflowID, d.CallID, o)
	}
	if err != nil {
		return decisionError(d, err)
	}
	return nil
}

// decisionError words the round's refusals, matched on their codes, as the
// console's errors.
func decisionError(d Decision, err error) error {
	var app *temporal.ApplicationError
	var nf *serviceerror.NotFound
	switch {
	case errors.Is(err, ErrNotWaiting):
		return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrNotWaiting)
	case errors.Is(err, ErrStaleApproval):
		return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrStaleApproval)
	case errors.Is(err, ErrInvalidArgs) && errors.As(err, &app):
		return fmt.Errorf("%w: %s", ErrInvalidArgs, app.Message())
	case errors.Is(err, ErrStaleWait):
		return fmt.Errorf("call %s of %s: %w", d.CallID, d.WorkflowID, ErrStaleWait)
	case errors.Is(err, ErrInvalidDecision) && errors.As(err, &app):
		return fmt.Errorf("%w: %s", ErrInvalidDecision, app.Message())
	case errors.Is(err, ErrInvalidPattern) && errors.As(err, &app):
		return fmt.Errorf("%w: %s", ErrInvalidPattern, app.Message())
	case errors.As(err, &nf):
		return fmt.Errorf("round %s is not running: %w", d.WorkflowID, ErrNotWaiting)
	}
	return err
}

// waitingCall finds a call in the round's pending list.
func (b *TemporalBackend) waitingCall(ctx context.Context, workflowID, callID string) (PendingCall, error) {
	p, err := b.pending(ctx, workflowID)
	if errors.Is(err, client.ErrRoundNotFound) {
		return PendingCall{}, fmt.Errorf("round %s: %w", workflowID, ErrNotWaiting)
	}
	if err != nil {
		if status, derr := b.own(ctx, workflowID, kindRound); derr == nil && status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			// It ended between the listing and the query.
			return PendingCall{}, fmt.Errorf("round %s has finished: %w", workflowID, ErrNotWaiting)
		}
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

// SubmitToolResult answers a client tool's wait through the round's
// tool_result update, whose validator checks the call and its wait (Y5).
func (b *TemporalBackend) SubmitToolResult(ctx context.Context, workflowID string, r round.ToolResult) error {
	if _, err := b.own(ctx, workflowID, kindRound); err != nil {
		return err
	}
	err := b.c.SubmitToolResult(ctx, workflowID, r)
	if errors.Is(err, client.ErrRoundEnded) {
		return fmt.Errorf("round %s is not running: %w", workflowID, ErrNotWaiting)
	}
	return err
}

// AnswerElicitation answers an MCP server's request through the round's
// answer update, whose validator checks the wait and the content (E1).
func (b *TemporalBackend) AnswerElicitation(ctx context.Context, workflowID string, a round.ElicitAnswer) error {
	if _, err := b.own(ctx, workflowID, kindRound); err != nil {
		return err
	}
	err := b.c.AnswerElicitation(ctx, workflowID, a)
	if errors.Is(err, client.ErrRoundEnded) {
		// The round has ended: nothing of it waits.
		return fmt.Errorf("round %s is not running: %w", workflowID, ErrNotWaiting)
	}
	return err
}

// Extend adds seconds to the deadline of a call that waits (T3), through
// the client's extend update, which the round refuses for a call that does
// not wait (ErrNotWaiting), and answers what the round added.
func (b *TemporalBackend) Extend(ctx context.Context, workflowID, callID string, seconds int) (round.Extended, error) {
	if _, err := b.own(ctx, workflowID, kindRound); err != nil {
		return round.Extended{}, err
	}
	res, err := b.c.ExtendDeadline(ctx, workflowID, callID, time.Duration(seconds)*time.Second)
	var nf *serviceerror.NotFound
	switch {
	case errors.Is(err, ErrNotWaiting):
		return round.Extended{}, fmt.Errorf("call %s of %s: %w", callID, workflowID, ErrNotWaiting)
	case errors.As(err, &nf):
		// The round has ended: nothing of it waits.
		return round.Extended{}, fmt.Errorf("round %s is not running: %w", workflowID, ErrNotWaiting)
	}
	return res, err
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
		return "", badInput(err)
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
		st, err := b.c.AgentStatus(qctx, workflowID)
		if err != nil {
			v.Status, v.Error = round.AgentRunning, fmt.Sprintf("status of %s: %v", workflowID, err)
			break
		}
		v.AgentStatus = *st
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
	prefix, err := quote(names.SessionAgentsPrefix(session))
	if err != nil {
		return nil, err
	}
	ids, err := b.list(ctx, "WorkflowType = '"+names.AgentWorkflowName+"' AND WorkflowId STARTS_WITH "+prefix, sessionRounds)
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

// MoveWorkspace rebinds the session's workspace to host (W4).
func (b *TemporalBackend) MoveWorkspace(ctx context.Context, session, host string) (placement.Binding, error) {
	return placement.Move(ctx, b.tc, b.opts.TaskQueue, session, host)
}

// OpenWorkflows lists the session's open rounds and agent runs (W3).
func (b *TemporalBackend) OpenWorkflows(ctx context.Context, session string) ([]string, error) {
	return workspace.OpenWorkflows(ctx, workspace.TemporalLister(b.tc, b.opts.Namespace), session)
}

// WorkerTools asks a worker of the task queue for the tools it offers
// (Y2).
func (b *TemporalBackend) WorkerTools(ctx context.Context, provider string) (tools.Toolset, error) {
	return b.c.WorkerTools(ctx, provider)
}

// GatewayTools asks a worker of the task queue what the MCP gateway may
// list (Z2).
func (b *TemporalBackend) GatewayTools(ctx context.Context) ([]round.GatewayTool, error) {
	ctx, cancel := context.WithTimeout(ctx, client.WorkerToolsTimeout)
	defer cancel()
	var id [8]byte
	_, _ = rand.Read(id[:])
	run, err := b.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                       "gatewaytools/" + hex.EncodeToString(id[:]),
		TaskQueue:                b.opts.TaskQueue,
		WorkflowExecutionTimeout: client.WorkerToolsTimeout,
		StaticSummary:            "tools for the MCP gateway",
	}, names.WorkflowGatewayTools)
	if err != nil {
		return nil, fmt.Errorf("ask a worker of task queue %s for its tools: %w", b.opts.TaskQueue, err)
	}
	var out []round.GatewayTool
	if err := run.Get(ctx, &out); err != nil {
		return nil, fmt.Errorf("no worker of task queue %s listed its tools within %s: %w", b.opts.TaskQueue, client.WorkerToolsTimeout, err)
	}
	return out, nil
}

// GatewayCall hands a call to the run's gateway workflow by
// update-with-start (Z2).
func (b *TemporalBackend) GatewayCall(ctx context.Context, session, run string, c round.GatewayCall) (round.GatewayTicket, error) {
	var t round.GatewayTicket
	op := b.tc.NewWithStartWorkflowOperation(tclient.StartWorkflowOptions{
		ID:                       names.GatewayWorkflowID(session, run),
		TaskQueue:                b.opts.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            "MCP gateway run " + run + " of session " + session,
	}, names.WorkflowGateway, round.GatewayInput{SessionID: session, Run: run})
	h, err := b.tc.UpdateWithStartWorkflow(ctx, tclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: tclient.UpdateWorkflowOptions{
			UpdateName:   names.UpdateGatewayCall,
			Args:         []any{c},
			WaitForStage: tclient.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return t, fmt.Errorf("gateway run %s: %w", names.GatewayWorkflowID(session, run), err)
	}
	err = h.Get(ctx, &t)
	return t, err
}

// GrantBlob records that a result of session named ref (Z4).
func (b *TemporalBackend) GrantBlob(ctx context.Context, session, ref string) error {
	if b.opts.Redis == nil {
		return errors.New("no Redis: large results cannot be read through the gateway")
	}
	return b.opts.Redis.BlobGrants().Grant(ctx, session, ref)
}

// ReadBlob reads a blob that a result of session named (Z4).
func (b *TemporalBackend) ReadBlob(ctx context.Context, session, ref string) (string, error) {
	if b.opts.Redis == nil {
		return "", ErrNotFound
	}
	ok, err := b.opts.Redis.BlobGrants().Granted(ctx, session, ref)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrNotFound
	}
	return b.opts.Redis.Blobs().Get(ctx, ref)
}

// SetClientElicits records whether the MCP client of a gateway run declared
// form elicitation at its last initialize (Z3, 2025-11-25), for every
// console.
func (b *TemporalBackend) SetClientElicits(ctx context.Context, session, run string, form bool) error {
	if b.opts.Redis == nil {
		return errors.New("no Redis")
	}
	v := "0"
	if form {
		v = "1"
	}
	return b.opts.Redis.Redis().Set(ctx, cache.SessionKey(session, "mcp-client:"+run), v, 30*24*time.Hour).Err()
}

// ClientElicits reports what SetClientElicits recorded.
func (b *TemporalBackend) ClientElicits(ctx context.Context, session, run string) bool {
	if b.opts.Redis == nil {
		return false
	}
	v, err := b.opts.Redis.Redis().Get(ctx, cache.SessionKey(session, "mcp-client:"+run)).Result()
	return err == nil && v == "1"
}
