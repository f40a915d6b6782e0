package engine

import (
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// The SDK's tracing interceptor starts its RunWorkflow span whenever the
// workflow function starts, replay or not (its other workflow spans check
// for replay). A worker that replays a round from the start, after a
// restart or when its cache evicted the round, would report that round's
// span a second time. replaySafeTracing skips the interceptor's
// RunWorkflow span when the workflow starts in replay; everything else
// (activity, signal, child spans, all replay-aware) goes through it.

// clientTracing is the interceptor on the client side only: given to
// client.Options it must not reach the worker as well.
type clientTracing struct {
	interceptor.ClientInterceptor
}

type replaySafeTracing struct {
	interceptor.WorkerInterceptor // the tracing interceptor
}

// ReplaySafeTracing wraps the SDK's tracing interceptor so that a round
// replayed from its start reports no second round span.
func ReplaySafeTracing(traced interceptor.WorkerInterceptor) interceptor.WorkerInterceptor {
	return &replaySafeTracing{traced}
}

func (r *replaySafeTracing) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &replaySafeInbound{WorkflowInboundInterceptor: r.WorkerInterceptor.InterceptWorkflow(ctx, next), plain: next}
}

type replaySafeInbound struct {
	interceptor.WorkflowInboundInterceptor // the tracing interceptor's
	plain                                  interceptor.WorkflowInboundInterceptor
}

func (i *replaySafeInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if workflow.IsReplaying(ctx) {
		return i.plain.ExecuteWorkflow(ctx, in)
	}
	return i.WorkflowInboundInterceptor.ExecuteWorkflow(ctx, in)
}

// The interceptor's update spans do not check for replay either: an update
// that a replay applies again would be reported twice.
func (i *replaySafeInbound) ValidateUpdate(ctx workflow.Context, in *interceptor.UpdateInput) error {
	if workflow.IsReplaying(ctx) {
		return i.plain.ValidateUpdate(ctx, in)
	}
	return i.WorkflowInboundInterceptor.ValidateUpdate(ctx, in)
}

func (i *replaySafeInbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if workflow.IsReplaying(ctx) {
		return i.plain.ExecuteUpdate(ctx, in)
	}
	return i.WorkflowInboundInterceptor.ExecuteUpdate(ctx, in)
}
