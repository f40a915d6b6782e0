package placement

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
)

// State is the binding workflow's input and what it carries across
// continue-as-new.
type State struct {
	Session string `json:"session"`
	// TaskQueue is the task queue whose host queues the binding names
	// (HostQueue), for move's HostAlive.
	TaskQueue string  `json:"task_queue"`
	Binding   Binding `json:"binding"`
}

// MaxUpdates is how many updates one execution takes before it
// continues as new, so its history stays short.
const MaxUpdates = 100

// ErrTypeHostUnavailable is the application error type of a move to a
// host with no poller seen within the host timeout (W5).
const ErrTypeHostUnavailable = string(round.CodeHostUnavailable)

// Workflow holds one session's binding (W4): bind, move and release are
// its updates, binding its query. It runs until continue-as-new.
func Workflow(ctx workflow.Context, st State) error {
	updates := 0
	if err := workflow.SetQueryHandler(ctx, QueryBinding, func() (Binding, error) { return st.Binding, nil }); err != nil {
		return err
	}
	check := func(_ workflow.Context, in MoveInput) error { return CheckHostID(in.Host) }
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateBind, func(ctx workflow.Context, in MoveInput) (Binding, error) {
		updates++
		if st.Binding.Host == "" {
			st.Binding.Host = in.Host
			st.Binding.Generation++
		}
		return st.Binding, nil
	}, workflow.UpdateHandlerOptions{Validator: check}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateMove, func(ctx workflow.Context, in MoveInput) (Binding, error) {
		updates++
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 10 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		})
		var alive HostAliveOutput
		if err := workflow.ExecuteLocalActivity(lctx, ActivityHostAlive, HostAliveInput{TaskQueue: st.TaskQueue, Host: in.Host}).Get(ctx, &alive); err != nil {
			return st.Binding, err
		}
		if !alive.Alive {
			return st.Binding, temporal.NewNonRetryableApplicationError(
				"host "+in.Host+" has no worker polling "+HostQueue(st.TaskQueue, in.Host)+" within the host timeout", ErrTypeHostUnavailable, nil)
		}
		if in.Host != st.Binding.Host { // a move to the bound host changes nothing
			st.Binding.Host = in.Host
			st.Binding.Generation++
		}
		return st.Binding, nil
	}, workflow.UpdateHandlerOptions{Validator: check}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateRelease, func(ctx workflow.Context, in ReleaseInput) (Binding, error) {
		updates++
		if st.Binding.Host != "" && (in.Host == "" || in.Host == st.Binding.Host) {
			st.Binding.Host = ""
			st.Binding.Generation++
		}
		return st.Binding, nil
	}); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return updates >= MaxUpdates && workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, WorkflowName, st)
}
