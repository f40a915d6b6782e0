package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

const child = "agentrun/s/sub-0123456789abcdef01234567"

func described(t *testing.T, status enumspb.WorkflowExecutionStatus, parent string) *client.WorkflowExecutionDescription {
	t.Helper()
	info := &workflowpb.WorkflowExecutionInfo{Status: status}
	if parent != "" {
		p, err := converter.GetDefaultDataConverter().ToPayload(parent)
		require.NoError(t, err)
		info.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{wire.MemoParent: p}}
	}
	return &client.WorkflowExecutionDescription{RawResponse: &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}}
}

// TestSubagentStatusAnswersOnlyTheRunsOwnChildren (G2): an id of another
// session, a run id that is not a subagent's, a workflow that does not
// exist and a child of another run all get the same not_this_run, and
// nothing of theirs is read.
func TestSubagentStatusAnswersOnlyTheRunsOwnChildren(t *testing.T) {
	ctx := context.Background()
	mine := wire.SubagentStatusInput{WorkflowID: child, SessionID: "s", RunID: "r"}
	for _, in := range []wire.SubagentStatusInput{
		{WorkflowID: "agentrun/other/sub-0123456789abcdef01234567", SessionID: "s", RunID: "r"},
		{WorkflowID: "agentrun/s/r", SessionID: "s", RunID: "r"},
		{WorkflowID: "toolround/s/r/1", SessionID: "s", RunID: "r"},
		{WorkflowID: "not an id", SessionID: "s", RunID: "r"},
	} {
		tc := mocks.NewClient(t) // nothing is described
		_, err := (&Subagents{Client: tc}).Status(ctx, in)
		require.ErrorContains(t, err, round.NotThisRun, in.WorkflowID)
	}

	tc := mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, child, "").Return(nil, serviceerror.NewNotFound("workflow not found"))
	_, err := (&Subagents{Client: tc}).Status(ctx, mine)
	require.ErrorContains(t, err, round.NotThisRun)

	for _, parent := range []string{"", "agentrun/s/other", "agentrun/t/r", "toolround/s/other/2"} {
		tc := mocks.NewClient(t)
		tc.On("DescribeWorkflow", mock.Anything, child, "").Return(described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, parent), nil)
		_, err := (&Subagents{Client: tc}).Status(ctx, mine)
		require.ErrorContains(t, err, round.NotThisRun, "parent %q", parent)
	}
}

// TestSubagentStatusReadsARunningChildAndAnEndedOne: a running child is
// asked through its status query, an ended one gives its result; neither
// answer carries the child's conversation.
func TestSubagentStatusReadsARunningChildAndAnEndedOne(t *testing.T) {
	ctx := context.Background()
	mine := wire.SubagentStatusInput{WorkflowID: child, SessionID: "s", RunID: "r"}
	talk := []round.AgentMessage{{Role: "user", Content: "secret plans"}}

	tc := mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, child, "").Return(described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "toolround/s/r/3"), nil)
	v := &mocks.Value{}
	v.On("Get", mock.Anything).Return(func(p any) error {
		*p.(*round.AgentStatus) = round.AgentStatus{WorkflowID: child, Status: round.AgentRunning, Round: 2, Conversation: talk}
		return nil
	})
	tc.On("QueryWorkflow", mock.Anything, child, "", names.QueryAgentStatus).Return(v, nil)
	st, err := (&Subagents{Client: tc}).Status(ctx, mine)
	require.NoError(t, err)
	require.Equal(t, round.AgentRunning, st.Status)
	require.Equal(t, 2, st.Round)
	require.Nil(t, st.Conversation)

	tc = mocks.NewClient(t)
	tc.On("DescribeWorkflow", mock.Anything, child, "").Return(described(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "agentrun/s/r"), nil)
	run := &mocks.WorkflowRun{}
	run.On("Get", mock.Anything, mock.Anything).Return(func(_ context.Context, p any) error {
		*p.(*round.AgentStatus) = round.AgentStatus{WorkflowID: child, Status: round.AgentCompleted, Final: "done", Conversation: talk}
		return nil
	})
	tc.On("GetWorkflow", mock.Anything, child, "").Return(run)
	st, err = (&Subagents{Client: tc}).Status(ctx, mine)
	require.NoError(t, err)
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, "done", st.Final)
	require.Nil(t, st.Conversation)
}
