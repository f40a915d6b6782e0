package agentrun

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// end is the run's last step: a cancelled run asks its background
// subagents to stop (G2), a persistent run answers the messages still
// waiting (G3), and the run's last event is published.
func (a *agent) end(ctx workflow.Context) {
	if a.status == round.AgentCancelled {
		a.cancelChildren(ctx)
	}
	a.closeChat(ctx)
	a.finish(ctx)
}

// cancelChildren asks the run's background subagents to stop (G2); each
// still gives its own calls a result. A run without any asks nothing, so
// runs recorded before background subagents replay as they ran.
func (a *agent) cancelChildren(ctx workflow.Context) {
	if a.state == nil || len(a.state.Children) == 0 {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var fs []workflow.Future
	for _, id := range a.state.Children {
		fs = append(fs, workflow.RequestCancelExternalWorkflow(dctx, id, ""))
	}
	for i, f := range fs {
		if err := f.Get(dctx, nil); err != nil {
			workflow.GetLogger(ctx).Info("a background subagent was not cancelled (it may have ended)", "subagent", a.state.Children[i], "error", err)
		}
	}
}

// finish publishes the run's last event; a cancelled run publishes it too.
func (a *agent) finish(ctx workflow.Context) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2, InitialInterval: 100 * time.Millisecond},
		Summary:             "publish the run's end",
	})
	e := a.scope.AgentFinished(a.round, a.status)
	e.Time = workflow.Now(ctx)
	in := wire.PublishInput{SessionID: a.in.SessionID, RunID: a.in.RunID, WorkflowID: a.scope.WorkflowID, Events: []round.Event{e}}
	if err := workflow.ExecuteLocalActivity(lctx, wire.ActivityPublishRound, in).Get(lctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("publishing the run's end failed", "error", err)
	}
}
