package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
)

// The round's webhooks (N1): when a call starts to wait, at each of its
// reminders and when it is decided or expires, the round queues an event;
// one coroutine starts a notification workflow (notify.Workflow) per event
// as an abandoned child and waits only for it to start, never for its
// POST. Only rounds whose snapshot says a webhook is configured do this,
// behind changeNotify, so rounds without webhooks pay no marker.

// NotifySettings are the webhook settings a round records in its snapshot.
type NotifySettings struct {
	// Retry is NOTIFY_RETRY: how long each webhook is retried.
	Retry time.Duration `json:"retry"`
}

// notifier is the round's queue of notifications.
type notifier struct {
	on      bool
	queue   []notify.Event
	ids     []string
	started int
	// nonces are the links used in this round (N2): a link is used once.
	nonces map[string]bool
}

// startNotify turns the round's notifications on when its snapshot says a
// webhook is configured, and starts the coroutine that starts them.
func (r *run) startNotify(ctx workflow.Context) {
	if r.snap.Notify == nil || Version(ctx, changeNotify, 1) < 1 {
		return
	}
	r.notes.on = true
	dctx, _ := workflow.NewDisconnectedContext(ctx) // a cancelled round still says so
	workflow.Go(dctx, func(ctx workflow.Context) {
		for {
			if err := workflow.Await(ctx, func() bool { return r.notes.started < len(r.notes.queue) }); err != nil {
				return
			}
			i := r.notes.started
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID:               r.notes.ids[i],
				ParentClosePolicy:        enumspb.PARENT_CLOSE_POLICY_ABANDON,
				WorkflowExecutionTimeout: r.notes.queue[i].Retry + time.Hour,
				WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			})
			f := workflow.ExecuteChildWorkflow(cctx, notify.WorkflowName, r.notes.queue[i])
			if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("notification not started", "notification", r.notes.ids[i], "error", err)
			}
			r.notes.started++
		}
	})
}

// drainNotify waits until every queued notification has started, before the
// round returns.
func (r *run) drainNotify(ctx workflow.Context) {
	if r.notes.on {
		_ = workflow.Await(ctx, func() bool { return r.notes.started == len(r.notes.queue) })
	}
}

// notifyWait queues an event of c's wait p; n numbers reminders.
func (r *run) notifyWait(c *Call, p *round.Pending, typ string, n int, reason string) {
	if !r.notes.on || p == nil || p.WaitID == "" {
		return
	}
	e := notify.Event{
		Type: typ, WorkflowID: r.scope.WorkflowID, SessionID: r.scope.SessionID, CallID: c.CallID,
		ApprovalID: p.ApprovalID, WaitID: p.WaitID, Kind: p.Kind, Tool: c.Tool, Summary: argsPreview(c),
		Reason: reason, WaitingSince: p.Since, Deadline: p.Deadline, Retry: r.snap.Notify.Retry,
	}
	r.notes.queue = append(r.notes.queue, e)
	r.notes.ids = append(r.notes.ids, notify.WorkflowID(p.WaitID, typ, n))
}

// previewRunes bounds the arguments a notification carries in history;
// the webhook cuts its summary shorter, after escaping (N1).
const previewRunes = 1000

// argsPreview is what a notification shows of the call (T14): its
// arguments, canonical, cut (the notifier redacts and escapes them).
func argsPreview(c *Call) string {
	s := Canonical(c.Args)
	if r := []rune(s); len(r) > previewRunes {
		s = string(r[:previewRunes]) + "…"
	}
	return s
}

// externalWaitID gives an ask_user or client tool's wait its approval_id
// and wait_id (B1), for its notifications and for the tool_result update
// (Y5). The ids enter no command of their own: rounds recorded when only
// notifying rounds had them replay the same.
func (r *run) externalWaitID(c *Call, p *round.Pending) {
	if c.ApprovalID == "" {
		c.ApprovalID = r.approvalID(c)
	}
	c.Waits++
	p.ApprovalID, p.WaitID = c.ApprovalID, approval.WaitID(c.ApprovalID, p.Kind, c.Waits)
}
