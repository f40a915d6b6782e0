package agentrun_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// TestCancellingAnAgentRunCancelsItsBackgroundSubagents (G2): a cancelled
// run asks for the cancel of every background subagent its state lists.
func TestCancellingAnAgentRunCancelsItsBackgroundSubagents(t *testing.T) {
	h := newAgentHarness(t)
	var cancelled []string
	h.env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(func(_, id, _ string) error {
		cancelled = append(cancelled, id)
		return nil
	})
	h.env.RegisterDelayedCallback(func() { h.env.CancelWorkflow() }, time.Hour)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		if in.Call == 1 {
			return toolsUntil(2)(in)
		}
		return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: "w", Type: "function",
			Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"1"}`}}}}}
	}
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		out := fakeRound(in, round.StatusOK)
		out.State.Children = []string{"agentrun/s1/sub-aaaaaaaaaaaaaaaaaaaaaaaa"}
		if in.Round >= 2 {
			_ = workflow.Sleep(ctx, 2*time.Hour) // the run is cancelled meanwhile
		}
		return out, nil
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCancelled, st.Status)
	require.Equal(t, []string{"agentrun/s1/sub-aaaaaaaaaaaaaaaaaaaaaaaa"}, cancelled)
}
