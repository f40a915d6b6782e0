package engine

import (
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/activities"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/workflows"
)

// Swap registers Func under the activity name Name instead of the engine's
// own activity of that name: the test worker's crash hook.
type Swap struct {
	Name string
	Func any
}

// RegisterAll registers the round workflow and its activities under their
// stable names. It is the one place that binds those names to functions;
// the worker, the test worker and the benchmark all register through it.
// A Swap whose name is not one of the round's activities panics, as the
// SDK's own registration does on a programming error.
func RegisterAll(r worker.Registry, wf *workflows.RoundWorkflow, acts *activities.Activities, swaps ...Swap) {
	r.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: round.WorkflowName})
	fns := []Swap{
		{round.ActivityExecuteTool, acts.ExecuteTool},
		{round.ActivityPublishRound, acts.PublishRound},
		{round.ActivityStoreContents, acts.StoreContents},
		{round.ActivityCheckFiles, acts.CheckFiles},
		{round.ActivityVerifyRules, acts.VerifyRules},
		{round.ActivitySignRules, acts.SignRules},
		{round.ActivityReconcile, acts.Reconcile},
	}
	for _, s := range swaps {
		found := false
		for i := range fns {
			if fns[i].Name == s.Name {
				fns[i].Func, found = s.Func, true
			}
		}
		if !found {
			panic(fmt.Sprintf("engine: swap for %q: the round has no activity of that name", s.Name))
		}
	}
	for _, f := range fns {
		r.RegisterActivityWithOptions(f.Func, activity.RegisterOptions{Name: f.Name})
	}
	registerAgent(r, wf, acts)
}
