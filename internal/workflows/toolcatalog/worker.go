// Package toolcatalog is the workflows that list tools: Workflow, behind
// `starter tools --worker`, asks a worker of the task queue for its tools;
// UserTools, usertools/<queue>, holds the tools one tool worker's queue
// serves (Y2).
package toolcatalog

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// listTimeout bounds the activity that lists a worker's tools.
const listTimeout = 10 * time.Second

// Workflow is the workflow behind `starter tools --worker`: one
// activity, on whichever worker of the task queue picks it up, returns that
// worker's tools for provider, its MCP servers' among them. It keeps no
// state and is never replayed into a longer history.
func Workflow(ctx workflow.Context, provider string) (tools.Toolset, error) {
	var ts tools.Toolset
	err := List(ctx, &ts, wire.ActivityListTools, provider)
	return ts, err
}

// List runs the listing activity with args once, on whichever worker of
// the task queue picks it up within listTimeout, into out: the body of
// Workflow and of the gateway's tools list.
func List(ctx workflow.Context, out any, activity string, args ...any) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToStartTimeout: listTimeout,
		StartToCloseTimeout:    listTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, activity, args...).Get(ctx, out)
}
