package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// jsonValue is a query answer as the server returns it.
type jsonValue struct{ b []byte }

func (v jsonValue) HasValue() bool    { return len(v.b) > 0 }
func (v jsonValue) Get(ptr any) error { return json.Unmarshal(v.b, ptr) }

func describe(status enumspb.WorkflowExecutionStatus) *workflowservice.DescribeWorkflowExecutionResponse {
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: status, TaskQueue: "tq"},
	}
}

func pollers(n int) *workflowservice.DescribeTaskQueueResponse {
	r := &workflowservice.DescribeTaskQueueResponse{}
	for range n {
		r.Pollers = append(r.Pollers, &taskqueuepb.PollerInfo{Identity: "w"})
	}
	return r
}

func TestPendingSaysWhyItCannotAsk(t *testing.T) {
	ctx := context.Background()

	tc := mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, "toolround/s/r/1", "").Return(nil, serviceerror.NewNotFound("workflow not found"))
	_, err := New(tc, Options{}).Pending(ctx, "toolround/s/r/1")
	require.ErrorIs(t, err, ErrRoundNotFound)
	require.Contains(t, err.Error(), "toolround/s/r/1")

	tc = mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: describe(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)}, nil)
	tc.On("DescribeTaskQueue", mock.Anything, "tq", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(0), nil)
	start := time.Now()
	_, err = New(tc, Options{TaskQueue: "other"}).Progress(ctx, "wf")
	require.ErrorIs(t, err, ErrNoWorker)
	require.Less(t, time.Since(start), time.Second, "no query that would only time out")
	require.Contains(t, err.Error(), `no worker polls task queue "tq"`, "the round's own task queue")
	require.NotContains(t, err.Error(), "\n")

	tc = mocks.NewClient(t) // no query expected: a finished round waits for nothing
	tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: describe(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}, nil)
	p, err := New(tc, Options{}).Pending(ctx, "wf")
	require.NoError(t, err)
	require.Empty(t, p)
}

func TestRunFailsFastWithoutWorker(t *testing.T) {
	defer func(d time.Duration) { workerGrace = d }(workerGrace)
	workerGrace = 300 * time.Millisecond
	tc := mocks.NewClient(t) // ExecuteWorkflow is not expected: nothing is submitted
	tc.On("DescribeTaskQueue", mock.Anything, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(0), nil)
	tc.On("DescribeWorkflow", mock.Anything, "toolround/s/r/1", "").Return(nil, serviceerror.NewNotFound("workflow not found"))
	in := &round.Input{SessionID: "s", RunID: "r", Round: 1, Provider: "openai", Assistant: round.Message{Role: "assistant"}}
	_, err := New(tc, Options{TaskQueue: "q"}).Run(context.Background(), in)
	require.ErrorIs(t, err, ErrNoWorker)
	require.Equal(t, `no worker polls task queue "q": start a worker with TASK_QUEUE=q (bin/worker), or check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE`, err.Error())
}

func TestRunSaysTheInputIsInvalidFirst(t *testing.T) {
	_, err := New(mocks.NewClient(t), Options{}).Run(context.Background(), &round.Input{SessionID: "a/b"})
	require.ErrorContains(t, err, "invalid round input")
}

func TestRunWithEventsNeedsAnEventSource(t *testing.T) {
	in := &round.Input{SessionID: "s", RunID: "r", Round: 1, Provider: "openai", Assistant: round.Message{Role: "assistant"}}
	_, err := New(mocks.NewClient(t), Options{}).Run(context.Background(), in, WithEvents(func(round.Event) {}))
	require.ErrorContains(t, err, "REDIS_URL")
}

// signals records the confirm decisions (updates) a fake round receives.
type signals struct {
	mu   sync.Mutex
	sent []map[string]any
}

func (s *signals) record(args mock.Arguments) {
	b, _ := json.Marshal(args.Get(1).(tclient.UpdateWorkflowOptions).Args[0])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.sent = append(s.sent, m)
	s.mu.Unlock()
}

func (s *signals) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.sent...)
}

// doneUpdate is the handle of an update that completed with err.
func doneUpdate(err error) *mocks.WorkflowUpdateHandle {
	h := &mocks.WorkflowUpdateHandle{}
	h.On("Get", mock.Anything, mock.Anything).Return(err).Maybe()
	return h
}

// waitingRound fakes a running round with one call that waits for approval
// until a confirm signal arrives.
func waitingRound(t *testing.T, approvalID string) (*mocks.Client, *signals) {
	tc := mocks.NewClient(t)
	sig := &signals{}
	pending := `[{"call_id":"call_1","tool":"run_command","kind":"confirm","arguments":"{\"command\":\"ls\"}","subject":"ls","reason":"runs a command"` +
		`,"approval_id":"` + approvalID + `"}]`
	tc.On("QueryWorkflow", mock.Anything, "wf", "", names.QueryPending).Return(func(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
		if len(sig.all()) > 0 {
			return jsonValue{[]byte(`[]`)}, nil
		}
		return jsonValue{[]byte(pending)}, nil
	}).Maybe()
	tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Run(sig.record).Return(doneUpdate(nil), nil).Maybe()
	return tc, sig
}

func TestWaitingTellsEachCallOnceWithItsApprovalID(t *testing.T) {
	tc, sig := waitingRound(t, "ab12")
	run := &mocks.WorkflowRun{}
	run.On("Get", mock.Anything, mock.Anything).Return(func(ctx context.Context, _ any) error { <-ctx.Done(); return ctx.Err() })
	tc.On("GetWorkflow", mock.Anything, "wf", "").Return(run)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := New(tc, Options{})
	ch := c.Waiting(ctx, "wf")
	p := <-ch
	require.Equal(t, PendingCall{WorkflowID: "wf", CallID: "call_1", Tool: "run_command", Kind: KindConfirm, Arguments: `{"command":"ls"}`,
		ApprovalID: "ab12", Subject: "ls", Reason: "runs a command"}, p)
	select {
	case again := <-ch:
		t.Fatalf("told twice: %+v", again)
	case <-time.After(400 * time.Millisecond):
	}
	require.NoError(t, c.Approve(ctx, p.WorkflowID, p.CallID, ConfirmOptions{ApprovalID: p.ApprovalID}))
	require.Equal(t, []map[string]any{{"call_id": "call_1", "approve": true, "approval_id": "ab12", "via": "api"}}, sig.all())
	cancel()
	for range ch { // closed when ctx ends
	}
}

func TestApprovalHandlerDecidesAndDelivers(t *testing.T) {
	tc, sig := waitingRound(t, "ff00")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var told []string
	var mu sync.Mutex
	handler := func(_ context.Context, p PendingCall) Decision {
		mu.Lock()
		told = append(told, p.CallID+" "+p.ApprovalID)
		mu.Unlock()
		return Decision{Approve: false, Reason: "not today"}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		New(tc, Options{}).follow(ctx, "wf", runOptions{approve: handler})
	}()
	require.Eventually(t, func() bool { return len(sig.all()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, map[string]any{"call_id": "call_1", "approve": false, "reason": "not today", "approval_id": "ff00", "via": "api"}, sig.all()[0])
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"call_1 ff00"}, told)
}

func TestDeliverRetriesUntilTheRoundHasTheDecision(t *testing.T) {
	tc := mocks.NewClient(t)
	calls := 0
	tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(func(context.Context, tclient.UpdateWorkflowOptions) (tclient.WorkflowUpdateHandle, error) {
		calls++
		if calls < 3 {
			return nil, errors.New("unavailable")
		}
		return doneUpdate(nil), nil
	})
	New(tc, Options{}).deliver(context.Background(), PendingCall{WorkflowID: "wf", CallID: "c"}, Decision{Approve: true})
	require.Equal(t, 3, calls)
	tc = mocks.NewClient(t)
	tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(nil, serviceerror.NewNotFound("workflow execution already completed")).Once()
	tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: describe(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}, nil).Once()
	New(tc, Options{}).deliver(context.Background(), PendingCall{WorkflowID: "wf", CallID: "c"}, Decision{Approve: true})
}

func TestConfirmErrorsAreTyped(t *testing.T) {
	for typ, want := range map[string]error{string(round.CodeNotWaiting): ErrNotWaiting, string(round.CodeStaleApproval): ErrStaleApproval, string(round.CodeInvalidArgs): ErrInvalidArgs,
		string(round.CodeInvalidPattern): ErrInvalidPattern} {
		tc := mocks.NewClient(t)
		tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(doneUpdate(temporal.NewApplicationError("because", typ)), nil).Once()
		err := New(tc, Options{}).Approve(context.Background(), "wf", "c", ConfirmOptions{ApprovalID: "x"})
		require.ErrorIs(t, err, want, typ)
		require.ErrorContains(t, err, "because")
		require.Equal(t, round.ErrorCode(typ), round.CodeOf(err), "the round's type is the code")
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app, "the round's answer stays the cause")
		// A refused decision is not sent again.
		tc = mocks.NewClient(t)
		tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(doneUpdate(temporal.NewApplicationError("because", typ)), nil).Once()
		New(tc, Options{}).deliver(context.Background(), PendingCall{WorkflowID: "wf", CallID: "c"}, Decision{Approve: true})
	}
}

// TestConfirmSendsWhoDecided: Approve and Deny send By, Via and Verified
// with the decision; Via defaults to "api".
func TestConfirmSendsWhoDecided(t *testing.T) {
	tc := mocks.NewClient(t)
	var sent []round.Confirm
	tc.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o tclient.UpdateWorkflowOptions) bool {
		sent = append(sent, o.Args[0].(round.Confirm))
		return o.UpdateName == names.UpdateConfirm
	})).Return(doneUpdate(nil), nil).Twice()
	c := New(tc, Options{})
	require.NoError(t, c.Approve(context.Background(), "wf", "c1", ConfirmOptions{ApprovalID: "a", By: "alice", Via: "console", Verified: true}))
	require.NoError(t, c.Deny(context.Background(), "wf", "c2", ConfirmOptions{ApprovalID: "b", By: "bob", Reason: "no"}))
	require.Equal(t, []round.Confirm{
		{CallID: "c1", Approve: true, ApprovalID: "a", By: "alice", Via: "console", Verified: true},
		{CallID: "c2", ApprovalID: "b", By: "bob", Via: "api", Reason: "no"},
	}, sent)
}

// fakeEvents is a session stream that the test publishes to.
type fakeEvents struct {
	ch       chan round.Event
	sessions chan string
}

func (f *fakeEvents) Watch(ctx context.Context, sessionID, _ string, fn func(round.Event) error) error {
	f.sessions <- sessionID
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-f.ch:
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

func TestAnEventWakesTheWatch(t *testing.T) {
	const wfID = "toolround/s1/r1/2"
	var mu sync.Mutex
	waiting, queries := false, 0
	tc := mocks.NewClient(t)
	tc.On("QueryWorkflow", mock.Anything, wfID, "", names.QueryPending).Return(func(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
		mu.Lock()
		defer mu.Unlock()
		queries++
		if waiting {
			return jsonValue{[]byte(`[{"call_id":"c9","tool":"ask_user","kind":"answer"}]`)}, nil
		}
		return jsonValue{[]byte(`[]`)}, nil
	})
	ev := &fakeEvents{ch: make(chan round.Event), sessions: make(chan string, 1)}
	c := New(tc, Options{Events: ev})
	c.pace = pacing{fastest: time.Minute, settled: time.Minute, slowest: time.Minute} // no second query but for the event
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	told := make(chan PendingCall, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.watch(ctx, wfID, func(p PendingCall) { told <- p })
	}()
	defer func() { cancel(); <-done }()
	select {
	case s := <-ev.sessions:
		require.Equal(t, "s1", s, "the session's stream, from the workflow id")
	case <-time.After(5 * time.Second):
		t.Fatal("the watch does not read the session's events")
	}

	// The watch's first query, before anything waits; the next one only
	// comes when an event wakes it.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return queries > 0 }, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	waiting = true
	mu.Unlock()
	publish := func(e round.Event) {
		select {
		case ev.ch <- e:
		case <-time.After(5 * time.Second):
			t.Fatal("nobody reads the session's events")
		}
	}
	publish(round.Event{Type: round.EventCallStarted, WorkflowID: "toolround/s1/r1/1"}) // another round: no wake
	select {
	case p := <-told:
		t.Fatalf("woken by another round's event: %+v", p)
	case <-time.After(300 * time.Millisecond):
	}
	publish(round.Event{Type: round.EventConfirmationRequested, WorkflowID: wfID})
	select {
	case p := <-told:
		require.Equal(t, "c9", p.CallID)
	case <-time.After(5 * time.Second):
		t.Fatal("the round's event did not wake the watch")
	}
}

// TestMissingRoundReadsTheSame: a signal, an update or a cancel to a round
// that does not exist fails with Pending's error; to a round that has
// ended, with ErrRoundEnded; other errors are left as they are.
func TestMissingRoundReadsTheSame(t *testing.T) {
	ctx := context.Background()
	notFound := serviceerror.NewNotFound("workflow not found for ID: wf")
	send := map[string]func(c *Client) error{
		"cancel": func(c *Client) error { return c.Cancel(ctx, "wf") },
		"extend": func(c *Client) error { return c.Extend(ctx, "wf", "c1", time.Minute) },
		"answer": func(c *Client) error { return c.Answer(ctx, "wf", "c1", []string{"yes"}) },
		"result": func(c *Client) error { return c.SubmitToolResult(ctx, "wf", round.ToolResult{CallID: "c1"}) },
	}
	mock3 := func(tc *mocks.Client, err error) {
		tc.On("CancelWorkflow", mock.Anything, "wf", "").Return(err).Maybe()
		tc.On("SignalWorkflow", mock.Anything, "wf", "", mock.Anything, mock.Anything).Return(err).Maybe()
		tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(nil, err).Maybe()
	}
	for name, f := range send {
		tc := mocks.NewClient(t)
		mock3(tc, notFound)
		tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(nil, notFound)
		err := f(New(tc, Options{}))
		require.ErrorIs(t, err, ErrRoundNotFound, name)
		require.Equal(t, "round wf does not exist yet (or its history is past retention)", err.Error(), name)

		tc = mocks.NewClient(t)
		mock3(tc, serviceerror.NewNotFound("workflow execution already completed"))
		tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: describe(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)}, nil)
		err = f(New(tc, Options{}))
		require.ErrorIs(t, err, ErrRoundEnded, name)
		var nf *serviceerror.NotFound
		require.ErrorAs(t, err, &nf, "still Temporal's NotFound for callers that match it")
		require.True(t, strings.HasPrefix(err.Error(), "round wf has ended"), err.Error())

		tc = mocks.NewClient(t) // not a NotFound: no describe
		mock3(tc, serviceerror.NewUnavailable("connection refused"))
		err = f(New(tc, Options{}))
		require.NotErrorIs(t, err, ErrRoundNotFound, name)
		require.Contains(t, err.Error(), "connection refused", name)
	}
}

// TestExtendDeadlineAnswersWhatTheRoundAdded: the extend update's answer,
// what the round added under its 7-day cap, is given back (T3).
func TestExtendDeadlineAnswersWhatTheRoundAdded(t *testing.T) {
	deadline := time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)
	tc := mocks.NewClient(t)
	h := &mocks.WorkflowUpdateHandle{}
	h.On("Get", mock.Anything, mock.Anything).Run(func(args mock.Arguments) {
		*args.Get(1).(*round.Extended) = round.Extended{CallID: "c1", AddedSeconds: 90, Deadline: deadline}
	}).Return(nil).Once()
	tc.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o tclient.UpdateWorkflowOptions) bool {
		return o.UpdateName == names.UpdateExtend && o.Args[0] == round.Extend{CallID: "c1", Seconds: 7 * 24 * 3600}
	})).Return(h, nil).Once()
	got, err := New(tc, Options{}).ExtendDeadline(context.Background(), "wf", "c1", 7*24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, round.Extended{CallID: "c1", AddedSeconds: 90, Deadline: deadline}, got)
}

// TestRunSaysTheRoundWaitsOnAnotherQueue: a round first submitted with
// another TASK_QUEUE, which no worker polls, is not attached to silently:
// Run names its queue, since when, and the ways out (U2).
func TestRunSaysTheRoundWaitsOnAnotherQueue(t *testing.T) {
	tc := mocks.NewClient(t) // ExecuteWorkflow is not expected: nothing is submitted
	tc.On("DescribeTaskQueue", mock.Anything, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(1), nil)
	tc.On("DescribeTaskQueue", mock.Anything, "tq", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(0), nil)
	desc := describe(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)
	since := time.Date(2026, 12, 5, 8, 30, 0, 0, time.UTC)
	desc.WorkflowExecutionInfo.HistoryLength = 2
	desc.PendingWorkflowTask = &workflowpb.PendingWorkflowTaskInfo{State: enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED, ScheduledTime: timestamppb.New(since)}
	tc.On("DescribeWorkflow", mock.Anything, "toolround/s/r/1", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: desc}, nil)
	in := &round.Input{SessionID: "s", RunID: "r", Round: 1, Provider: "openai", Assistant: round.Message{Role: "assistant"}}
	_, err := New(tc, Options{TaskQueue: "q"}).Run(context.Background(), in)
	require.ErrorIs(t, err, ErrNoWorker)
	for _, part := range []string{`round toolround/s/r/1: no worker polls task queue "tq"`, "waits since 2026-12-05 08:30:00 UTC", `not yours ("q")`,
		"start a worker with TASK_QUEUE=tq", "starter cancel toolround/s/r/1"} {
		require.Contains(t, err.Error(), part)
	}
}

// TestCancelEndsARoundNoWorkerTook: a cancel alone would wait for a worker
// of the round's queue; a round that no worker took, on a queue no worker
// polls, is ended at once. A round a worker runs is only cancelled.
func TestCancelEndsARoundNoWorkerTook(t *testing.T) {
	ctx := context.Background()
	untaken := describe(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)
	untaken.WorkflowExecutionInfo.HistoryLength = 3 // started, task scheduled, cancel requested
	untaken.PendingWorkflowTask = &workflowpb.PendingWorkflowTaskInfo{State: enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED}

	tc := mocks.NewClient(t)
	tc.On("CancelWorkflow", mock.Anything, "wf", "").Return(nil)
	tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: untaken}, nil)
	tc.On("DescribeTaskQueue", mock.Anything, "tq", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(0), nil)
	tc.On("TerminateWorkflow", mock.Anything, "wf", "", mock.MatchedBy(func(reason string) bool {
		return strings.HasPrefix(reason, "cancelled before any worker took it") && strings.Contains(reason, `"tq"`)
	})).Return(nil)
	require.NoError(t, New(tc, Options{TaskQueue: "q"}).Cancel(ctx, "wf"))

	for name, d := range map[string]struct {
		desc    *workflowservice.DescribeWorkflowExecutionResponse
		pollers int
	}{
		"a worker polls its queue": {untaken, 1},
		"a worker took it":         {describe(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), 0},
	} {
		tc := mocks.NewClient(t) // TerminateWorkflow is not expected
		tc.On("CancelWorkflow", mock.Anything, "wf", "").Return(nil)
		tc.On("DescribeWorkflow", mock.Anything, "wf", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: d.desc}, nil)
		tc.On("DescribeTaskQueue", mock.Anything, "tq", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(d.pollers), nil)
		require.NoError(t, New(tc, Options{TaskQueue: "tq"}).Cancel(ctx, "wf"), name)
	}
}

// TestStalledOnAnotherPolledQueue: a round that runs on another queue, which
// a worker polls, is said so, with the way to run it on the client's queue.
func TestStalledOnAnotherPolledQueue(t *testing.T) {
	tc := mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, "agentrun/s/r", "").Return(&tclient.WorkflowExecutionDescription{RawResponse: describe(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)}, nil)
	tc.On("DescribeTaskQueue", mock.Anything, "tq", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(pollers(1), nil)
	s, err := New(tc, Options{TaskQueue: "q"}).Stalled(context.Background(), "agentrun/s/r")
	require.NoError(t, err)
	require.True(t, s.Polled)
	require.Contains(t, s.String(), `agent run agentrun/s/r runs on task queue "tq" (TASK_QUEUE when it was first submitted), not yours ("q")`)
	require.Contains(t, s.String(), "starter cancel agentrun/s/r and start it again under a new run id")
}
