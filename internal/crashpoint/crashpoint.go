// Package crashpoint names the points where the crash matrix (L1) stops a
// process: an activity's handler before and after it runs, the gRPC calls
// that record a task's completion once they return, and the workflows'
// own steps.
//
// The points cost nothing in a normal build: Hit is empty. A build with
// the tag crashpoints (tests/crashmatrix_test.go builds the worker so)
// reads, at the first Hit:
//
//   - CRASH_TRACE: a file each Hit appends its name to, one per line, so
//     a run lists its points in order;
//   - CRASH_AT: NAME#N, the N-th Hit of NAME (from 1) in this process, where
//     it stops;
//   - CRASH_REACHED: a file it writes NAME#N to when it stops there;
//   - CRASH_ACTION: kill (the default) kills the process with SIGKILL
//     right after; pause waits until CRASH_REACHED is removed (the
//     harness kills and restarts another process meanwhile: the Temporal
//     server, Redis, a tool worker) and goes on.
package crashpoint

import (
	"context"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
)

// Hit marks the point name.
func Hit(name string) { hit(name) }

// Step marks a workflow's step: only when the workflow runs it for the
// first time, never while it replays its history.
func Step(ctx workflow.Context, name string) {
	if Enabled() && !workflow.IsReplaying(ctx) {
		hit("workflow." + name)
	}
}

// WorkerInterceptor marks activity.before:TYPE and activity.after:TYPE
// around each activity's handler; nil in a normal build.
func WorkerInterceptor() interceptor.WorkerInterceptor {
	if !Enabled() {
		return nil
	}
	return &workerInterceptor{}
}

// DialOptions mark grpc.after:METHOD once a call that records a task's
// completion (RespondActivityTaskCompleted, RespondActivityTaskFailed,
// RespondWorkflowTaskCompleted) returns; none in a normal build.
func DialOptions() []grpc.DialOption {
	if !Enabled() {
		return nil
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary)}
}

func unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if name, ok := recorded[method]; ok && err == nil {
		hit("grpc.after:" + name)
	}
	return err
}

// recorded are the calls whose return is a point, by their full method.
var recorded = map[string]string{
	"/temporal.api.workflowservice.v1.WorkflowService/RespondActivityTaskCompleted": "RespondActivityTaskCompleted",
	"/temporal.api.workflowservice.v1.WorkflowService/RespondActivityTaskFailed":    "RespondActivityTaskFailed",
	"/temporal.api.workflowservice.v1.WorkflowService/RespondWorkflowTaskCompleted": "RespondWorkflowTaskCompleted",
}

type workerInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (w *workerInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &activityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type activityInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *activityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	typ := activityType(ctx)
	hit("activity.before:" + typ)
	if out, ok := recordFirst(ctx, typ, in, a.Next); ok {
		hit("activity.after:" + typ)
		return out, nil
	}
	out, err := a.Next.ExecuteActivity(ctx, in)
	hit("activity.after:" + typ)
	return out, err
}
