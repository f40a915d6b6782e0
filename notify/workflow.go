package notify

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Workflow is the notification workflow: one POST of e to the session's
// webhooks, retried with backoff until it lands or e.Retry has passed. The
// round starts it as an abandoned child and never waits for it.
func Workflow(ctx workflow.Context, e Event) error {
	retry := e.Retry
	if retry <= 0 {
		retry = DefaultRetry
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: retry,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Minute,
		},
		Summary: e.Type + " " + e.CallID,
	})
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	return workflow.ExecuteActivity(ctx, ActivityPost, e, id).Get(ctx, nil)
}
