package toolcatalog

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/toolworker"
)

// UserTools holds the tools one tool worker's task queue serves (Y2):
// the workflow usertools/<queue>, which tool workers announce their tools
// to by update-with-start and which the worker reads (usertools.Sync).
type UserTools struct {
	// Refuse says why this worker would not run a tool of queue named
	// name (the queue is not in TOOL_QUEUES, the name is a built-in's or
	// another queue's), or "". It reads the worker's configuration, so the
	// announcement records its answers in a side effect.
	Refuse func(queue, name string) string
}

// continueEvery is how many announcements a catalog takes before it
// continues as new.
const continueEvery = 1000

// Run is the catalog's workflow function.
func (u *UserTools) Run(ctx workflow.Context, c toolworker.Catalog) error {
	if c.Tools == nil {
		c.Tools = []toolworker.Decl{}
	}
	want := strings.TrimPrefix(workflow.GetInfo(ctx).WorkflowExecution.ID, toolworker.CatalogIDPrefix)
	if c.Queue == "" {
		c.Queue = want
	}
	since := 0
	if err := workflow.SetQueryHandler(ctx, toolworker.ToolsQuery, func() (toolworker.Catalog, error) { return c, nil }); err != nil {
		return err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, toolworker.AnnounceUpdate,
		func(ctx workflow.Context, a toolworker.Announcement) (toolworker.AnnounceResult, error) {
			since++
			c.Announcements++
			return u.announce(ctx, &c, a), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(a toolworker.Announcement) error {
			if err := a.Check(); err != nil {
				return err
			}
			if a.Queue != want {
				return fmt.Errorf("announce: the catalog of queue %s got the tools of queue %s", want, a.Queue)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return since >= continueEvery }); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, toolworker.CatalogWorkflowType, c)
}

// announce replaces the queue's tools with the announced ones this worker
// accepts, and says which it refused and why.
func (u *UserTools) announce(ctx workflow.Context, c *toolworker.Catalog, a toolworker.Announcement) toolworker.AnnounceResult {
	var refusals map[string]string
	if err := workflow.SideEffect(ctx, func(workflow.Context) any {
		out := map[string]string{}
		for _, d := range a.Tools {
			if u.Refuse != nil {
				if why := u.Refuse(a.Queue, d.Name); why != "" {
					out[d.Name] = why
				}
			}
		}
		return out
	}).Get(&refusals); err != nil {
		refusals = map[string]string{}
	}
	res := toolworker.AnnounceResult{Accepted: []string{}}
	seen := map[string]bool{}
	var kept []toolworker.Decl
	for _, d := range a.Tools {
		why := refusals[d.Name]
		if why == "" {
			if err := d.Check(); err != nil {
				why = err.Error()
			} else if seen[d.Name] {
				why = "announced twice"
			}
		}
		if why != "" {
			res.Refused = append(res.Refused, toolworker.Refusal{Name: d.Name, Reason: why})
			continue
		}
		seen[d.Name] = true
		kept = append(kept, d)
		res.Accepted = append(res.Accepted, d.Name)
	}
	if len(res.Refused) == 0 { // a tool worker that is refused anything exits: keep what runs
		c.Tools = kept
		if c.Tools == nil {
			c.Tools = []toolworker.Decl{}
		}
		c.Worker = a.Worker
		c.AnnouncedAt = workflow.Now(ctx).Unix()
	}
	return res
}
