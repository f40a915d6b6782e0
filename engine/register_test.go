package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/seam"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round/names"
)

// recorder is a worker.Registry that records what is registered under which
// name; the methods RegisterAll does not use are left to the nil interface.
type recorder struct {
	worker.Registry
	workflows  map[string]any
	activities map[string]any
}

func (r *recorder) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	r.workflows[o.Name] = w
}

func (r *recorder) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	r.activities[o.Name] = a
}

func newRecorder() *recorder {
	return &recorder{workflows: map[string]any{}, activities: map[string]any{}}
}

func TestRegisterAllNames(t *testing.T) {
	r := newRecorder()
	RegisterAll(r, &workflows.RoundWorkflow{}, &activities.Activities{})
	require.ElementsMatch(t, []string{names.WorkflowName, names.AgentWorkflowName, names.WorkflowToolCatalog, names.WorkflowGateway, names.WorkflowGatewayTools}, keys(r.workflows))
	require.ElementsMatch(t,
		[]string{wire.ActivityExecuteTool, wire.ActivityPublishRound, wire.ActivityStoreContents, wire.ActivityRefreshContents, wire.ActivityCheckFiles, wire.ActivityModelCall, wire.ActivityVerifyRules, wire.ActivitySignRules, wire.ActivityVerifyUsage, wire.ActivitySignUsage, wire.ActivityReconcile, wire.ActivityListTools, wire.ActivityCachedResult, wire.ActivityListGatewayTools, wire.ActivityOffloadResult, wire.ActivityToolSecrets, wire.ActivityOpenToolResult},
		keys(r.activities))
}

func TestRegisterAllSwap(t *testing.T) {
	r := newRecorder()
	hook := func(context.Context, wire.PublishInput) error { return nil }
	registerAll(r, &workflows.RoundWorkflow{}, &activities.Activities{}, swap{Name: wire.ActivityPublishRound, Func: hook})
	require.Len(t, r.activities, 17)
	require.Equal(t, reflect.ValueOf(hook).Pointer(), reflect.ValueOf(r.activities[wire.ActivityPublishRound]).Pointer())

	require.PanicsWithValue(t, `engine: swap for "NoSuchActivity": the round has no activity of that name`, func() {
		registerAll(newRecorder(), &workflows.RoundWorkflow{}, &activities.Activities{}, swap{Name: "NoSuchActivity", Func: hook})
	})
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// The crash hooks of the test worker reach the worker on its context
// (seam.WithActivity), wrapping the engine's own activity.
func TestSeamSwaps(t *testing.T) {
	acts := &activities.Activities{}
	var wrapped bool
	ctx := seam.WithActivity(context.Background(), wire.ActivityPublishRound, func(publish func(context.Context, wire.PublishInput) error) func(context.Context, wire.PublishInput) error {
		wrapped = publish != nil
		return func(context.Context, wire.PublishInput) error { return nil }
	})
	swaps, err := seamSwaps(ctx, acts)
	require.NoError(t, err)
	require.True(t, wrapped)
	require.Len(t, swaps, 1)
	require.Equal(t, wire.ActivityPublishRound, swaps[0].Name)

	_, err = seamSwaps(seam.WithActivity(context.Background(), "NoSuchActivity", func(f func()) func() { return f }), acts)
	require.EqualError(t, err, `engine: swap for "NoSuchActivity": the round has no activity of that name`)
}
