package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
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
