package client

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"
)

func TestInboxQuery(t *testing.T) {
	require.Equal(t, "WorkflowType = 'ToolRound' AND ExecutionStatus = 'Running' AND ToolroundWaiting = true", InboxQuery(""))
	require.Equal(t, "WorkflowType = 'ToolRound' AND ExecutionStatus = 'Running' AND ToolroundWaiting = true AND ToolroundSession = 'sess-1'", InboxQuery("sess-1"))
	require.Equal(t, `WorkflowType = 'ToolRound' AND ExecutionStatus = 'Running' AND ToolroundWaiting = true AND ToolroundSession = 'it''s a \\ b'' OR ''x''=''x'`,
		InboxQuery(`it's a \ b' OR 'x'='x`), "a quote in a session cannot end the literal")
}

func TestInboxErrorNamesTheSkippedRounds(t *testing.T) {
	err := error(&InboxError{Failed: map[string]error{"wf-b": errors.New("timeout"), "wf-a": NoWorkerError("q")}})
	require.True(t, IsInboxError(err))
	require.Contains(t, err.Error(), "2 waiting rounds did not say what they wait for: wf-a: no worker polls task queue \"q\"")
	require.Contains(t, err.Error(), "; wf-b: timeout")
	require.False(t, IsInboxError(errors.New("other")))
}

func TestInboxOfOneTaskQueue(t *testing.T) {
	tc := mocks.NewClient(t)
	var queries []string
	tc.On("ListWorkflow", mock.Anything, mock.Anything).Return(func(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
		queries = append(queries, r.Query)
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	})
	c := New(tc, Options{})
	_, err := c.InboxOf(context.Background(), InboxOptions{Session: "s1", TaskQueue: "it's"})
	require.NoError(t, err)
	_, err = c.Inbox(context.Background(), "")
	require.NoError(t, err)
	require.Equal(t, []string{InboxQuery("s1") + " AND TaskQueue = 'it''s'", InboxQuery("")}, queries, "Inbox lists every task queue")
}
