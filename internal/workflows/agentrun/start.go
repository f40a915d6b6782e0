package agentrun

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// start is the run's first step: its input checked and given its
// defaults; the state a continue-as-new carried, or else the task as the
// first message; the status query; a persistent run's chat update (G3);
// the model call's heartbeat timeout, recorded once; the run's limits
// (B1); the versions the run asks once.
func (w *Workflow) start(ctx workflow.Context, in round.AgentInput) (*agent, error) {
	if err := in.ValidateStarted(); err != nil {
		return nil, temporal.NewNonRetryableApplicationError("invalid agent input: "+err.Error(), round.ErrTypeInvalidInput, err)
	}
	in = in.WithDefaults()
	a := &agent{in: in, status: round.AgentRunning,
		scope: wire.AgentScope{SessionID: in.SessionID, RunID: in.RunID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID}}
	if c := in.Carry; c != nil {
		a.conv, a.state, a.round, a.calls, a.execs = c.Conversation, c.State, c.Round, c.ModelCalls, c.Executions
		a.last = c.LastRequest
		a.chat.replies = c.Replies
		a.in.Carry = nil
	} else if in.Task != "" || !in.Persistent {
		a.conv = []round.AgentMessage{{Role: "user", Content: in.Task}}
	}
	if err := workflow.SetQueryHandler(ctx, names.QueryAgentStatus, func() (round.AgentStatus, error) {
		return a.snapshot(), nil
	}); err != nil {
		return nil, err
	}
	if in.Persistent {
		if err := a.startChat(ctx); err != nil {
			return nil, err
		}
		if len(a.conv) > 0 && in.Carry == nil {
			a.chat.current = "task" // the task is answered first, as a message
		}
	}
	a.userMessages = workflow.GetSignalChannel(ctx, names.SignalUserMessage)
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return w.heartbeat() }).Get(&a.hb); err != nil {
		return nil, err
	}
	a.timeout = w.modelTimeout()
	if err := a.startLimits(ctx, w.Limits); err != nil {
		return nil, err
	}
	a.apis = workflows.Version(ctx, workflows.ChangeAgentAPIs, 1) >= 1
	budgetVersion := workflows.Version(ctx, workflows.ChangeAgentBudget, 2)
	a.budget, a.refresh = budgetVersion >= 1, budgetVersion >= 2
	return a, nil
}

// heartbeat is the model call's heartbeat timeout.
func (w *Workflow) heartbeat() time.Duration {
	if w.HeartbeatTimeout > 0 {
		return w.HeartbeatTimeout
	}
	return 10 * time.Second
}

// modelTimeout bounds one attempt of a model call.
func (w *Workflow) modelTimeout() time.Duration {
	if w.ModelTimeout > 0 {
		return w.ModelTimeout
	}
	return 10 * time.Minute
}
