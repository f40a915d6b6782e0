package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// setToolResultHandler registers the tool_result update (Y5): a client
// tool's result, as the signal carries it, validated first. A handler
// writes no command, and no history recorded before it holds such an
// update, so old rounds replay as they ran.
func (r *run) setToolResultHandler(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, names.UpdateToolResult,
		func(ctx workflow.Context, t round.ToolResult) error {
			r.onExternal(ctx, names.UpdateToolResult, round.KindToolResult, t.CallID, func(*round.Pending) *wire.ExecuteOutput {
				return &wire.ExecuteOutput{Content: t.Content, IsError: t.IsError}
			})
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, t round.ToolResult) error {
			return r.checkToolResult(t)
		}})
}

// checkToolResult refuses a result for a call that does not wait for one,
// or for another of its waits.
func (r *run) checkToolResult(t round.ToolResult) error {
	i, known := r.index[t.CallID]
	if !known || !r.calls[i].waitsFor(round.KindToolResult) {
		return temporal.NewNonRetryableApplicationError("the call "+t.CallID+" does not wait for a tool result", string(round.CodeNotWaiting), nil)
	}
	if p := r.calls[i].pending; t.WaitID != "" && t.WaitID != p.WaitID {
		return temporal.NewNonRetryableApplicationError("the call "+t.CallID+" waits as "+p.WaitID+", not "+t.WaitID, string(round.CodeStaleWait), nil)
	}
	return nil
}
