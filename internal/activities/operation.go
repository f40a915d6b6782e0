package activities

import (
	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// operationID is the call's operation id (SPEC R), from the execution that
// scheduled the activity. A local activity has the same workflow info.
func operationID(info activity.Info, in wire.ExecuteInput) string {
	wf := info.WorkflowExecution.ID
	if wf == "" {
		wf = in.WorkflowID
	}
	return withOperationID(round.OperationID(wf, info.WorkflowExecution.RunID, in.CallID))
}
