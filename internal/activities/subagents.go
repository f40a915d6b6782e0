package activities

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// Subagents reads the status of a run's background subagents (G2) through
// the worker's Temporal client.
type Subagents struct {
	Client client.Client
}

// notThisRun is the one answer for an id that is not one of the run's
// subagents, whether or not a workflow of that id exists.
func notThisRun(id string) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%s: %s is not a subagent of this run", round.NotThisRun, id), round.NotThisRun, nil)
}

// Status is the ActivitySubagentStatus activity: the subagent's status
// query while it runs, its result once it ended. Only a subagent that a
// round of the same session and run started is answered: its memo names
// its parent.
func (s *Subagents) Status(ctx context.Context, in wire.SubagentStatusInput) (round.AgentStatus, error) {
	if s.Client == nil {
		return round.AgentStatus{}, temporal.NewNonRetryableApplicationError("this worker has no Temporal client to read subagents with", "NoClient", nil)
	}
	session, run, ok := names.RunOfWorkflowID(in.WorkflowID)
	if !ok || session != in.SessionID || !names.ReservedRunID(run) {
		return round.AgentStatus{}, notThisRun(in.WorkflowID)
	}
	desc, err := s.Client.DescribeWorkflow(ctx, in.WorkflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return round.AgentStatus{}, notThisRun(in.WorkflowID)
	}
	if err != nil {
		return round.AgentStatus{}, err
	}
	info := desc.RawResponse.GetWorkflowExecutionInfo()
	var parent string
	if p, ok := info.GetMemo().GetFields()[wire.MemoParent]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &parent)
	}
	if ps, pr, ok := names.RunOfWorkflowID(parent); !ok || ps != in.SessionID || pr != in.RunID {
		return round.AgentStatus{}, notThisRun(in.WorkflowID)
	}
	var st round.AgentStatus
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		v, err := s.Client.QueryWorkflow(ctx, in.WorkflowID, "", names.QueryAgentStatus)
		if err != nil {
			return round.AgentStatus{}, err
		}
		if err := v.Get(&st); err != nil {
			return round.AgentStatus{}, err
		}
		st.Conversation = nil // the caller reads the status, not the talk
		return st, nil
	}
	if err := s.Client.GetWorkflow(ctx, in.WorkflowID, "").Get(ctx, &st); err != nil {
		return round.AgentStatus{WorkflowID: in.WorkflowID, Status: "failed", Reason: err.Error()}, nil
	}
	st.Conversation = nil
	return st, nil
}
