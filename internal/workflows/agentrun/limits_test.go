package agentrun_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// TestAgentRunEndsPastMaxModelTokens (B1): the model tokens each call
// reports are counted in the run state; past max_model_tokens the run
// ends limit_reached with its state kept, and its rounds carry its limits.
func TestAgentRunEndsPastMaxModelTokens(t *testing.T) {
	h := newAgentHarness(t)
	script := toolsUntil(100)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		out := script(in)
		out.Tokens = 400
		return out
	}
	in := agentInput()
	in.Limits = &round.Limits{MaxModelTokens: 1000, MaxCalls: 50}
	st := h.run(t, in)
	require.Equal(t, round.AgentLimitReached, st.Status)
	require.Len(t, h.inputs, 3, "400, 800, then 1200 tokens: past the limit after the third call")
	require.Equal(t, 2, st.Round, "the third call's tool calls did not run")
	require.Contains(t, st.Reason, "max_model_tokens")
	require.Contains(t, st.Reason, "1200")
	require.Contains(t, st.Limits, round.LimitCount{Limit: round.LimitModelTokens, Count: 1200, Max: 1000})
	for _, r := range h.rounds {
		require.Equal(t, int64(50), r.Limits.MaxCalls, "every round takes the run's limits")
	}
	require.Equal(t, int64(800), h.rounds[1].State.Usage.ModelTokens, "the count travels in the run state")
	require.NotEmpty(t, st.Conversation, "the final state is kept")
}

// TestAgentRunEndsPastMaxSeconds (B1): wall time from the run's start.
func TestAgentRunEndsPastMaxSeconds(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(100)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		_ = workflow.Sleep(ctx, 40*time.Second) // a person takes their time
		return fakeRound(in, round.StatusOK), nil
	}
	in := agentInput()
	in.Limits = &round.Limits{MaxSeconds: 100}
	st := h.run(t, in)
	require.Equal(t, round.AgentLimitReached, st.Status)
	require.Equal(t, 3, st.Round, "after 120 s of rounds the next model call is not made")
	require.Len(t, h.inputs, 3)
	require.Contains(t, st.Reason, "max_seconds")
}

// TestAgentRunEndsWhenALimitWaitExpires (B1).
func TestAgentRunEndsWhenALimitWaitExpires(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(100)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		out := fakeRound(in, round.StatusExpired)
		for i := range out.Results {
			out.Results[i].Approval = &round.Approval{Decision: round.DecisionExpired, Limits: []string{round.LimitCalls}}
		}
		return out, nil
	}
	in := agentInput()
	in.Limits = &round.Limits{MaxCalls: 1}
	st := h.run(t, in)
	require.Equal(t, round.AgentLimitReached, st.Status)
	require.Equal(t, 1, st.Round)
	require.Contains(t, st.Reason, "max_calls")
	require.Equal(t, "tool", st.Conversation[len(st.Conversation)-1].Role, "the round's results joined the conversation")
}

// TestAgentRunWithoutLimitsIsUnbounded: no limits, no limit_reached, and
// the tokens are still counted.
func TestAgentRunWithoutLimitsIsUnbounded(t *testing.T) {
	h := newAgentHarness(t)
	script := toolsUntil(4)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		out := script(in)
		out.Tokens = 1_000_000
		return out
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, int64(3_000_000), h.rounds[2].State.Usage.ModelTokens)
}
