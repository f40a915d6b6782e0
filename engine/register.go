package engine

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/preview"
	"github.com/toolround/toolround/internal/seam"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/internal/workflows/gateway"
	"github.com/toolround/toolround/internal/workflows/toolcatalog"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round/names"
)

// swap registers Func under the activity name Name instead of the engine's
// own activity of that name: the test worker's crash hooks (seam.WithActivity).
type swap struct {
	Name string
	Func any
}

// RegisterAll registers the round workflow and its activities under their
// stable names. It is the one place that binds those names to functions;
// the worker, the test worker and the benchmark all register through it.
func RegisterAll(r worker.Registry, wf *workflows.RoundWorkflow, acts *activities.Activities) {
	registerAll(r, wf, acts)
}

// roundActivities are the round's activities under their names.
func roundActivities(acts *activities.Activities) []swap {
	return []swap{
		{wire.ActivityExecuteTool, acts.ExecuteTool},
		{wire.ActivityPublishRound, acts.PublishRound},
		{wire.ActivityStoreContents, acts.StoreContents},
		{wire.ActivityOffloadResult, acts.OffloadResult},
		{wire.ActivityRefreshContents, acts.RefreshContents},
		{wire.ActivityCheckFiles, acts.CheckFiles},
		{wire.ActivityVerifyRules, acts.VerifyRules},
		{wire.ActivitySignRules, acts.SignRules},
		{wire.ActivityVerifyUsage, acts.VerifyUsage},
		{wire.ActivitySignUsage, acts.SignUsage},
		{wire.ActivityReconcile, acts.Reconcile},
		{wire.ActivityCachedResult, acts.CachedResult},
		{wire.ActivityToolSecrets, acts.ToolSecrets},
		{wire.ActivityOpenToolResult, acts.OpenToolResult},
	}
}

// registerAll is RegisterAll with swaps. A swap whose name is not one of
// the round's activities panics, as the SDK's own registration does on a
// programming error.
func registerAll(r worker.Registry, wf *workflows.RoundWorkflow, acts *activities.Activities, swaps ...swap) {
	r.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: names.WorkflowName})
	for _, f := range swapped(acts, swaps) {
		r.RegisterActivityWithOptions(f.Func, activity.RegisterOptions{Name: f.Name})
	}
	registerAgent(r, wf, acts)
	r.RegisterWorkflowWithOptions(toolcatalog.Workflow, workflow.RegisterOptions{Name: names.WorkflowToolCatalog})
	r.RegisterActivityWithOptions(acts.ListTools, activity.RegisterOptions{Name: wire.ActivityListTools})
	r.RegisterWorkflowWithOptions(gateway.Workflow, workflow.RegisterOptions{Name: names.WorkflowGateway})
	r.RegisterWorkflowWithOptions(gateway.ToolsWorkflow, workflow.RegisterOptions{Name: names.WorkflowGatewayTools})
	r.RegisterActivityWithOptions(acts.ListGatewayTools, activity.RegisterOptions{Name: wire.ActivityListGatewayTools})
}

// hostActivities are the round's activities that act in a workspace,
// which a placed round sends to the host queue (W4), with swaps.
var hostActivities = map[string]bool{wire.ActivityExecuteTool: true, wire.ActivityCheckFiles: true, wire.ActivityReconcile: true}

// registerHost registers the workspace activities on a host queue's
// worker.
func registerHost(r worker.Registry, acts *activities.Activities, swaps ...swap) {
	for _, f := range swapped(acts, swaps) {
		if hostActivities[f.Name] {
			r.RegisterActivityWithOptions(f.Func, activity.RegisterOptions{Name: f.Name})
		}
	}
}

// swapped is roundActivities with swaps.
func swapped(acts *activities.Activities, swaps []swap) []swap {
	fns := roundActivities(acts)
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
	return fns
}

// registerNotify registers the notification workflow and its activity
// (N1); n nil: a notifier with no webhook, which posts nothing.
func registerNotify(r worker.Registry, n *notify.Notifier) {
	if n == nil {
		n = &notify.Notifier{}
	}
	r.RegisterWorkflowWithOptions(notify.Workflow, workflow.RegisterOptions{Name: notify.WorkflowName})
	r.RegisterActivityWithOptions(n.Post, activity.RegisterOptions{Name: notify.ActivityPost})
}

// registerPreview registers the activity that reads a file for a person
// deciding on a call that overwrites it (T14): on the worker's queue and,
// under WORKSPACE_PLACEMENT=host, on its host queue, where the console
// asks for it; and, on the worker's queue, the workflow that runs it once
// for the console.
func registerPreview(r worker.Registry, e *Engine, withWorkflow bool) {
	if withWorkflow {
		r.RegisterWorkflowWithOptions(preview.Workflow, workflow.RegisterOptions{Name: preview.WorkflowName})
	}
	a := &preview.Activities{Workdir: e.Workdir}
	if e.builtins != nil && e.builtins.Secrets != nil {
		a.Secrets = e.builtins.Secrets
	}
	r.RegisterActivityWithOptions(a.PreviewFile, activity.RegisterOptions{Name: preview.ActivityName})
}

// seamSwaps are the swaps of seam.WithActivity that ctx carries, made of
// the engine's own activities.
func seamSwaps(ctx context.Context, acts *activities.Activities) ([]swap, error) {
	var out []swap
	for _, s := range seam.Swaps(ctx) {
		var orig any
		for _, f := range roundActivities(acts) {
			if f.Name == s.Name {
				orig = f.Func
			}
		}
		if orig == nil {
			return nil, fmt.Errorf("engine: swap for %q: the round has no activity of that name", s.Name)
		}
		fn, err := s.Wrap(orig)
		if err != nil {
			return nil, err
		}
		out = append(out, swap{s.Name, fn})
	}
	return out, nil
}
