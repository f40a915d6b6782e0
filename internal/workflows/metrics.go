package workflows

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
)

// The workflow's metrics (SPEC M) go through workflow.GetMetricsHandler,
// which drops what a replay emits again, so each round, call and decision
// is counted once. The Prometheus exporter adds the _total and _seconds
// suffixes: toolround_rounds_total, toolround_tool_calls_total,
// toolround_approvals_requested_total, toolround_approvals_decided_total,
// toolround_approval_wait_seconds.
const (
	metricRounds           = "toolround_rounds"
	metricToolCalls        = "toolround_tool_calls"
	metricApprovalsAsked   = "toolround_approvals_requested"
	metricApprovalsDecided = "toolround_approvals_decided"
	metricApprovalWait     = "toolround_approval_wait"
	unknownToolLabel       = "unknown"
	outcomeOK              = "ok"
	outcomeWithFailures    = "partial"
	outcomeCancelled       = "cancelled"
	decisionApproved       = "approved"
	decisionDenied         = "denied"
	decisionTimedOut       = "timeout"
	decisionRoundCancelled = "cancelled"
	attrRoundOutcome       = "toolround.outcome"
	attrRoundCalls         = "toolround.calls"
	attrRoundNotOK         = "toolround.calls_not_ok"
)

// MetricDescriptions are the HELP texts of the workflow's metrics, by
// instrument name: the SDK's metrics handler takes none, so the worker's
// meter view adds them (engine/metrics.go).
var MetricDescriptions = map[string]string{
	metricRounds:           "Rounds that ended with a result, by outcome: ok (every call ok), partial (some call was not) or cancelled.",
	metricToolCalls:        "Calls by tool and final status (and queue, for a user tool), counted once per call when its round ends.",
	metricApprovalsAsked:   "Confirmations raised at the confirm gate, by tool.",
	metricApprovalsDecided: "Decisions on calls that waited at the confirm gate, by tool and decision: approved, denied, timeout or cancelled.",
	metricApprovalWait:     "How long a decided confirmation waited for its decision.",
}

// toolLabel is a call's tool as a label value: a name of the round's
// catalog snapshot, or "unknown" for a name the model made up.
func (r *run) toolLabel(tool string) string {
	if _, ok := r.snap.Tools[tool]; ok {
		return tool
	}
	return unknownToolLabel
}

// metricRoundDone counts the round by outcome and each of its calls by tool
// and final status, and puts the same on the round's span (the SDK tracing
// interceptor's RunWorkflow span; a no-op span on replay or without traces).
func (r *run) metricRoundDone(ctx workflow.Context, res *round.Output) {
	m := workflow.GetMetricsHandler(ctx)
	notOK := 0
	for _, c := range res.Results {
		if c.Status != round.StatusOK {
			notOK++
		}
		tags := map[string]string{"tool": r.toolLabel(c.Tool), "status": string(c.Status)}
		if q := r.queueOf(c.Tool); q != "" {
			tags["queue"] = q // a user tool's queue (Y2)
		}
		m.WithTags(tags).Counter(metricToolCalls).Inc(1)
	}
	outcome := outcomeOK
	switch {
	case ctx.Err() != nil:
		outcome = outcomeCancelled
	case notOK > 0:
		outcome = outcomeWithFailures
	}
	m.WithTags(map[string]string{"outcome": outcome}).Counter(metricRounds).Inc(1)
	if span, ok := temporalotel.SpanFromWorkflowContext(ctx); ok {
		span.SetAttributes(attribute.String(attrRoundOutcome, outcome), attribute.Int(attrRoundCalls, len(res.Results)),
			attribute.Int(attrRoundNotOK, notOK), attribute.String("toolround.workflow_id", r.scope.WorkflowID))
	}
}

// metricApprovalRequested counts a confirmation the gate raised.
func (r *run) metricApprovalRequested(ctx workflow.Context, c *Call) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"tool": r.toolLabel(c.Tool)}).Counter(metricApprovalsAsked).Inc(1)
}

// metricApprovalDecided counts a decision on a call that waits at the gate
// (call it before pending is cleared), records how long the call waited,
// and adds an event to the round's span.
func (r *run) metricApprovalDecided(ctx workflow.Context, c *Call, decision string) {
	if c.pending == nil {
		return
	}
	wait := workflow.Now(ctx).Sub(c.pending.Since)
	tool := r.toolLabel(c.Tool)
	m := workflow.GetMetricsHandler(ctx)
	m.WithTags(map[string]string{"tool": tool, "decision": decision}).Counter(metricApprovalsDecided).Inc(1)
	m.Timer(metricApprovalWait).Record(wait)
	if span, ok := temporalotel.SpanFromWorkflowContext(ctx); ok {
		span.AddEvent("approval decided", trace.WithTimestamp(workflow.Now(ctx)), trace.WithAttributes(
			attribute.String("toolround.tool", tool), attribute.String("toolround.call_id", c.CallID),
			attribute.String("toolround.decision", decision), attribute.Float64("toolround.approval_wait_seconds", wait.Seconds())))
	}
}

// decision is the label of an approve or deny signal.
func decision(approve bool) string {
	if approve {
		return decisionApproved
	}
	return decisionDenied
}

// gateEnd is the label of a call the gate settles without a signal.
func gateEnd(cancelled bool) string {
	if cancelled {
		return decisionRoundCancelled
	}
	return decisionTimedOut
}
