package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round/names"
)

// Activities are the placement activities of a worker.
type Activities struct {
	Client client.Client
	// TaskQueue is the worker's TASK_QUEUE, where binding workflows run.
	TaskQueue string
	// Timeout is WORKSPACE_HOST_TIMEOUT, for a HostAlive without one.
	Timeout time.Duration
}

// Register registers the binding workflow and the activities on r.
func Register(r worker.Registry, a *Activities) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.BindWorkspace, activity.RegisterOptions{Name: ActivityBindWorkspace})
	r.RegisterActivityWithOptions(a.HostAlive, activity.RegisterOptions{Name: ActivityHostAlive})
}

// BindWorkspace binds in.Session to in.Host unless it is bound already,
// and answers the binding (the round's one question, W4).
func (a *Activities) BindWorkspace(ctx context.Context, in BindInput) (Binding, error) {
	tq := in.TaskQueue
	if tq == "" {
		tq = a.TaskQueue
	}
	return update(ctx, a.Client, tq, in.Session, UpdateBind, MoveInput{Host: in.Host})
}

// HostAlive reports whether a poller of in.Host's queue was seen within
// the timeout, by DescribeTaskQueue (W5).
func (a *Activities) HostAlive(ctx context.Context, in HostAliveInput) (HostAliveOutput, error) {
	if in.TaskQueue == "" {
		in.TaskQueue = a.TaskQueue
	}
	if in.Timeout <= 0 {
		in.Timeout = a.Timeout
	}
	return Alive(ctx, a.Client, in)
}

// Alive is HostAlive on c: the newest poller of the host's queue, of
// activities or of the worker's presence polls (Presence), seen within
// in.Timeout (DefaultHostTimeout when zero).
func Alive(ctx context.Context, c client.Client, in HostAliveInput) (HostAliveOutput, error) {
	if in.Timeout <= 0 {
		in.Timeout = DefaultHostTimeout
	}
	q := HostQueue(in.TaskQueue, in.Host)
	var out HostAliveOutput
	for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := c.DescribeTaskQueue(ctx, q, typ)
		if err != nil {
			return out, fmt.Errorf("describe task queue %s: %w", q, err)
		}
		for _, p := range resp.GetPollers() {
			if t := p.GetLastAccessTime().AsTime(); t.After(out.LastSeen) {
				out.LastSeen = t
			}
		}
	}
	out.Alive = !out.LastSeen.IsZero() && time.Since(out.LastSeen) <= in.Timeout
	return out, nil
}

// Bind is BindWorkspace from a client.
func Bind(ctx context.Context, c client.Client, taskQueue, session, host string) (Binding, error) {
	return update(ctx, c, taskQueue, session, UpdateBind, MoveInput{Host: host})
}

// Move rebinds session to host: an error of type host_unavailable
// (IsHostUnavailable) when host has no live poller.
func Move(ctx context.Context, c client.Client, taskQueue, session, host string) (Binding, error) {
	if err := CheckHostID(host); err != nil {
		return Binding{}, err
	}
	return update(ctx, c, taskQueue, session, UpdateMove, MoveInput{Host: host})
}

// Release lets session's binding go (its workspace was removed); with
// host set, only a binding to host. A session never bound has nothing to
// release.
func Release(ctx context.Context, c client.Client, session, host string) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: names.WorkspaceWorkflowID(session), UpdateName: UpdateRelease,
		Args: []any{ReleaseInput{Host: host}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// Get is session's binding; ok is false when it was never bound.
func Get(ctx context.Context, c client.Client, session string) (b Binding, ok bool, err error) {
	v, err := c.QueryWorkflow(ctx, names.WorkspaceWorkflowID(session), "", QueryBinding)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return b, false, nil
	}
	if err != nil {
		return b, false, err
	}
	if err := v.Get(&b); err != nil {
		return b, false, err
	}
	return b, b.Host != "", nil
}

// IsHostUnavailable reports whether err is move's refusal of a host with
// no live poller.
func IsHostUnavailable(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == ErrTypeHostUnavailable
}

// update runs an update on session's binding workflow, starting it when
// it does not run (update-with-start).
func update(ctx context.Context, c client.Client, taskQueue, session, name string, arg any) (Binding, error) {
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       names.WorkspaceWorkflowID(session),
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, WorkflowName, State{Session: session, TaskQueue: taskQueue})
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          client.UpdateWorkflowOptions{UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return Binding{}, err
	}
	var b Binding
	err = h.Get(ctx, &b)
	return b, err
}

// Presence keeps the host's queue's poller record fresh while the worker
// lives: a long poll of an idle queue is recorded only when it starts and
// ends, up to a minute apart, so besides its activity pollers each worker
// polls the workflow tasks of its host queue, where no workflow ever
// runs, in polls short enough that DescribeTaskQueue shows it within the
// host timeout. It returns when ctx ends.
func Presence(ctx context.Context, c client.Client, namespace, taskQueue, host string, timeout time.Duration, logger *slog.Logger) {
	q := HostQueue(taskQueue, host)
	each := PresencePoll(timeout)
	identity := fmt.Sprintf("presence:%s", q)
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, each)
		resp, err := c.WorkflowService().PollWorkflowTaskQueue(pctx, &workflowservice.PollWorkflowTaskQueueRequest{
			Namespace: namespace,
			TaskQueue: &taskqueuepb.TaskQueue{Name: q, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			Identity:  identity,
		})
		cancel()
		if err == nil && len(resp.GetTaskToken()) > 0 {
			logger.Error("a workflow task reached a host queue, which runs none; it is left to time out", "task_queue", q, "workflow_type", resp.GetWorkflowType().GetName())
		}
		if err != nil && ctx.Err() == nil && pctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// MinHostTimeout is the least WORKSPACE_HOST_TIMEOUT: a presence poll
// lasts at least 2.5 s (the server refuses long polls under 2 s).
const MinHostTimeout = 3 * time.Second

// PresencePoll is how long one presence poll lasts for a host timeout:
// half of it, from 2.5 s to 20 s.
func PresencePoll(timeout time.Duration) time.Duration {
	return min(max(timeout/2, 2500*time.Millisecond), 20*time.Second)
}
