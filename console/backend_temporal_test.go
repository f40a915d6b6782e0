package console

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// jsonValue is a query answer.
type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return j.v != nil }
func (j jsonValue) Get(ptr any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

const wf = "toolround/s1/r1/2"

func pendingAnswer(approvalID string) jsonValue {
	return jsonValue{[]map[string]any{{"call_id": "e1", "tool": "edit_file", "kind": "confirm", "approval_id": approvalID,
		"arguments": `{"path":"a.txt","new_text":"x"}`, "since": time.Now(), "deadline": time.Now().Add(time.Hour)}}}
}

func TestDecideUsesTheUpdateAndMapsItsRefusals(t *testing.T) {
	for typ, want := range map[string]error{"not_waiting": ErrNotWaiting, "stale_approval": ErrStaleApproval, "invalid_args": ErrInvalidArgs,
		"invalid_pattern": ErrInvalidPattern} {
		tc := &mocks.Client{}
		tc.On("DescribeWorkflow", mock.Anything, wf, "").Return(describing("ToolRound", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
		h := &mocks.WorkflowUpdateHandle{}
		tc.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o any) bool { return true })).Return(h, nil)
		h.On("Get", mock.Anything, mock.Anything).Return(temporal.NewApplicationError("refused", typ))
		b := NewTemporalBackend(tc, TemporalOptions{})
		err := b.Decide(context.Background(), Decision{WorkflowID: wf, CallID: "e1", ApprovalID: "abc", Approve: true, By: "alice", Via: "api", Verified: true})
		require.ErrorIs(t, err, want, typ)
		tc.AssertNotCalled(t, "SignalWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything)
	}
}

// TestDecideSendsTheUpdate: a decision goes as the round's confirm update,
// with who decided and how and the edited arguments, never as the signal.
func TestDecideSendsTheUpdate(t *testing.T) {
	tc := &mocks.Client{}
	tc.On("DescribeWorkflow", mock.Anything, wf, "").Return(describing("ToolRound", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
	h := &mocks.WorkflowUpdateHandle{}
	var sent []round.Confirm
	tc.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o tclient.UpdateWorkflowOptions) bool {
		if o.UpdateName != names.UpdateConfirm || o.WorkflowID != wf || len(o.Args) != 1 {
			return false
		}
		sent = append(sent, o.Args[0].(round.Confirm))
		return true
	})).Return(h, nil)
	h.On("Get", mock.Anything, mock.Anything).Return(nil)
	b := NewTemporalBackend(tc, TemporalOptions{})
	require.NoError(t, b.Decide(context.Background(), Decision{WorkflowID: wf, CallID: "e1", ApprovalID: "abc", Approve: true, By: "alice", Via: "console", Verified: true,
		Remember: true, Pattern: "a*", Args: `{"path":"b.txt","new_text":"x"}`}))
	require.NoError(t, b.Decide(context.Background(), Decision{WorkflowID: wf, CallID: "e1", ApprovalID: "abc", Approve: false, Reason: "no", By: "bob", Via: "api", Verified: true}))
	require.Len(t, sent, 2)
	require.Equal(t, round.Confirm{CallID: "e1", ApprovalID: "abc", Approve: true, By: "alice", Via: "console", Verified: true, Remember: true, Pattern: "a*",
		Args: json.RawMessage(`"{\"path\":\"b.txt\",\"new_text\":\"x\"}"`)}, sent[0])
	require.Equal(t, round.Confirm{CallID: "e1", ApprovalID: "abc", Approve: false, Reason: "no", By: "bob", Via: "api", Verified: true}, sent[1])
	tc.AssertNotCalled(t, "SignalWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything)
}

// TestExtendAndAnswerAskTheRound: extend goes to the round as its validated
// update, which refuses a call that does not wait; answer goes to a call
// that the round's pending list shows waiting for an answer, and to no
// other.
func TestExtendAndAnswerAskTheRound(t *testing.T) {
	ctx := context.Background()
	tc := &mocks.Client{}
	running := describing("ToolRound", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)
	running.RawResponse.WorkflowExecutionInfo.TaskQueue = "toolround"
	tc.On("DescribeWorkflow", mock.Anything, wf, "").Return(running, nil)
	tc.On("DescribeTaskQueue", mock.Anything, "toolround", enumspb.TASK_QUEUE_TYPE_WORKFLOW).Return(
		&workflowservice.DescribeTaskQueueResponse{Pollers: []*taskqueuepb.PollerInfo{{Identity: "w"}}}, nil)
	tc.On("QueryWorkflow", mock.Anything, wf, "", names.QueryPending).Return(pendingAnswer("abc"), nil)
	var extended []round.Extend
	extend := func(call string, err error) {
		h := &mocks.WorkflowUpdateHandle{}
		h.On("Get", mock.Anything, mock.Anything).Return(err)
		tc.On("UpdateWorkflow", mock.Anything, mock.MatchedBy(func(o tclient.UpdateWorkflowOptions) bool {
			if o.UpdateName != names.UpdateExtend || o.WorkflowID != wf || o.Args[0].(round.Extend).CallID != call {
				return false
			}
			extended = append(extended, o.Args[0].(round.Extend))
			return true
		})).Return(h, nil)
	}
	extend("e1", nil)
	extend("ghost", temporal.NewNonRetryableApplicationError("no call with this id in the round", string(round.CodeNotWaiting), nil))
	b := NewTemporalBackend(tc, TemporalOptions{})

	_, err := b.Extend(ctx, wf, "e1", 600)
	require.NoError(t, err)
	_, err = b.Extend(ctx, wf, "ghost", 600)
	require.ErrorIs(t, err, ErrNotWaiting, "the round's extend update refuses it")
	require.Equal(t, []round.Extend{{CallID: "e1", Seconds: 600}, {CallID: "ghost", Seconds: 600}}, extended)
	require.ErrorIs(t, b.Answer(ctx, wf, "e1", []string{"yes"}), ErrNotWaiting, "e1 waits for a decision, not an answer")
	tc.AssertNotCalled(t, "SignalWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything)
}

func TestDecideOnAFinishedRound(t *testing.T) {
	tc := &mocks.Client{}
	tc.On("DescribeWorkflow", mock.Anything, wf, "").Return(describing("ToolRound", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED), nil)
	tc.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(nil, serviceerror.NewNotFound("workflow execution already completed"))
	b := NewTemporalBackend(tc, TemporalOptions{})
	require.ErrorIs(t, b.Decide(context.Background(), Decision{WorkflowID: wf, CallID: "e1"}), ErrNotWaiting)
	_, err := b.Extend(context.Background(), wf, "e1", 60)
	require.ErrorIs(t, err, ErrNotWaiting, "nothing of a finished round waits (404, not 500)")
	require.ErrorIs(t, b.AnswerElicitation(context.Background(), wf, round.ElicitAnswer{CallID: "e1", Action: round.ElicitCancel}), ErrNotWaiting,
		"an answer to a finished round's request: 404, not 500")
}

// TestInboxListsTheQueuesWaitingRounds: the inbox is the client's, of the
// console's task queue; a session that cannot be quoted is refused.
func TestInboxListsTheQueuesWaitingRounds(t *testing.T) {
	tc := &mocks.Client{}
	var queries []string
	tc.On("ListWorkflow", mock.Anything, mock.Anything).Return(func(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
		queries = append(queries, r.Query)
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	})
	b := NewTemporalBackend(tc, TemporalOptions{TaskQueue: "q1"})
	entries, err := b.Inbox(context.Background(), "s1")
	require.NoError(t, err)
	require.Empty(t, entries)
	require.NotNil(t, entries)
	require.Equal(t, []string{
		"WorkflowType = 'ToolRound' AND ExecutionStatus = 'Running' AND ToolroundWaiting = true AND ToolroundSession = 's1' AND TaskQueue = 'q1'",
	}, queries)

	_, err = b.Inbox(context.Background(), "x' OR '1'='1")
	require.ErrorIs(t, err, ErrBadInput)
}

// describing returns DescribeWorkflow's answer for a workflow of type typ.
func describing(typ string, status enumspb.WorkflowExecutionStatus) *tclient.WorkflowExecutionDescription {
	return &tclient.WorkflowExecutionDescription{RawResponse: &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Type: &commonpb.WorkflowType{Name: typ}, Status: status}}}
}

// TestBackendSendsNothingToOtherWorkflows: a workflow of another type, or
// of another id shape, gets no update, signal, query or cancel request from
// any verb of the backend.
func TestBackendSendsNothingToOtherWorkflows(t *testing.T) {
	ctx := context.Background()
	tc := &mocks.Client{}
	for _, id := range []string{wf, "agentrun/s1/r1"} {
		tc.On("DescribeWorkflow", mock.Anything, id, "").Return(describing("PayrollRun", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
	}
	b := NewTemporalBackend(tc, TemporalOptions{})
	for _, id := range []string{wf, "agentrun/s1/r1", "payroll/1", "toolround/s1/r1/2/x", "agentrun/s1/r1/2"} {
		require.ErrorIs(t, b.Decide(ctx, Decision{WorkflowID: id, CallID: "e1", Approve: true}), ErrNotFound, id)
		require.ErrorIs(t, b.Answer(ctx, id, "e1", []string{"yes"}), ErrNotFound, id)
		_, err := b.Extend(ctx, id, "e1", 60)
		require.ErrorIs(t, err, ErrNotFound, id)
		require.ErrorIs(t, b.Cancel(ctx, id), ErrNotFound, id)
		require.ErrorIs(t, b.SendUserMessage(ctx, id, "hi"), ErrNotFound, id)
		_, err = b.Round(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, id)
		_, err = b.Agent(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, id)
	}
	for _, m := range []string{"UpdateWorkflow", "SignalWorkflow", "QueryWorkflow", "CancelWorkflow", "SignalWithStartWorkflow", "TerminateWorkflow"} {
		for _, c := range tc.Calls {
			require.NotEqual(t, m, c.Method)
		}
	}
}

func TestAgentRunsThroughTemporal(t *testing.T) {
	const run = "agentrun/s1/r1"
	ctx := context.Background()

	// A round's id is no agent run; neither is an unknown id.
	tc := &mocks.Client{}
	tc.On("DescribeWorkflow", mock.Anything, wf, "").Return(describing("ToolRound", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
	tc.On("DescribeWorkflow", mock.Anything, "agentrun/s1/none", "").Return(nil, serviceerror.NewNotFound("no such workflow"))
	b := NewTemporalBackend(tc, TemporalOptions{})
	for _, id := range []string{wf, "agentrun/s1/none"} {
		_, err := b.Agent(ctx, id)
		require.ErrorIs(t, err, ErrNotFound, id)
		require.ErrorIs(t, b.SendUserMessage(ctx, id, "hi"), ErrNotFound, id)
	}
	tc.AssertNotCalled(t, "QueryWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything)
	tc.AssertNotCalled(t, "SignalWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything)

	// A running run answers its status query; a message is its signal.
	tc = &mocks.Client{}
	tc.On("DescribeWorkflow", mock.Anything, run, "").Return(describing(names.AgentWorkflowName, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
	tc.On("QueryWorkflow", mock.Anything, run, "", names.QueryAgentStatus).Return(jsonValue{round.AgentStatus{WorkflowID: run, Status: round.AgentRunning, Round: 2,
		Conversation: []round.AgentMessage{{Role: "user", Content: "go"}}}}, nil)
	tc.On("SignalWorkflow", mock.Anything, run, "", names.SignalUserMessage, round.UserMessage{Text: "hi"}).Return(nil)
	b = NewTemporalBackend(tc, TemporalOptions{})
	v, err := b.Agent(ctx, run)
	require.NoError(t, err)
	require.Equal(t, round.AgentRunning, v.Status)
	require.Equal(t, 2, v.Round)
	require.Len(t, v.Conversation, 1)
	require.Empty(t, v.Error)
	require.NoError(t, b.SendUserMessage(ctx, run, "hi"))
	tc.AssertNumberOfCalls(t, "SignalWorkflow", 1)

	// An ended run takes no message; a terminated one reads as failed.
	tc = &mocks.Client{}
	tc.On("DescribeWorkflow", mock.Anything, run, "").Return(describing(names.AgentWorkflowName, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED), nil)
	b = NewTemporalBackend(tc, TemporalOptions{})
	require.ErrorIs(t, b.SendUserMessage(ctx, run, "hi"), ErrNotRunning)
	v, err = b.Agent(ctx, run)
	require.NoError(t, err)
	require.Equal(t, StatusFailed, v.Status)
	require.Equal(t, "the agent run terminated", v.Error)
	tc.AssertNotCalled(t, "SignalWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything)
}
