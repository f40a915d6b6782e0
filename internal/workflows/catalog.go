package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// catalogTimeout bounds the activity that lists a worker's tools.
const catalogTimeout = 10 * time.Second

// ToolCatalog is the workflow behind `starter tools --worker`: one
// activity, on whichever worker of the task queue picks it up, returns that
// worker's tools for provider, its MCP servers' among them. It keeps no
// state and is never replayed into a longer history.
func ToolCatalog(ctx workflow.Context, provider string) (tools.Toolset, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToStartTimeout: catalogTimeout,
		StartToCloseTimeout:    catalogTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var ts tools.Toolset
	err := workflow.ExecuteActivity(ctx, wire.ActivityListTools, provider).Get(ctx, &ts)
	return ts, err
}
