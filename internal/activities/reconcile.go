package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/tools"
)

// Reconcile asks the tool's reconciler whether a lost attempt of the call
// took effect (SPEC R). Its verdict is "unknown" unless the reconciler
// proves more; an error retries the activity.
func (a *Activities) Reconcile(ctx context.Context, in wire.ReconcileInput) (wire.ReconcileOutput, error) {
	info := activity.GetInfo(ctx)
	def, ok := a.Registry.Lookup(in.Call.Tool)
	if !ok || def.Reconcile == nil {
		return wire.ReconcileOutput{Verdict: wire.VerdictUnknown, Content: fmt.Sprintf("%s has no reconciler on this worker", in.Call.Tool)}, nil
	}
	c := in.Call
	req := tools.Request{
		Tool: c.Tool, CallID: c.CallID, SessionID: c.SessionID, RunID: c.RunID, Round: c.Round,
		WorkflowID: c.WorkflowID, Args: json.RawMessage(c.Args),
		OperationID: operationID(info, c), Generation: c.Generation,
	}
	res, err := def.Reconcile(tools.WithSession(ctx, c.SessionID), req)
	if err != nil {
		return wire.ReconcileOutput{}, fmt.Errorf("reconcile %s %s: %w", c.Tool, c.CallID, err)
	}
	out := wire.ReconcileOutput{Verdict: wire.VerdictUnknown, Content: res.Content, Touched: res.Touched}
	switch res.Verdict {
	case tools.VerdictApplied:
		out.Verdict = wire.VerdictApplied
	case tools.VerdictAbsent:
		out.Verdict = wire.VerdictAbsent
	}
	a.logger().Info("reconciled a lost attempt", "tool", c.Tool, "call_id", c.CallID, "operation_id", req.OperationID, "verdict", out.Verdict)
	return out, nil
}
