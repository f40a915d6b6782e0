package agentrun_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestAgentRunTakesTheBudget (B3): every model call asks for the budget;
// the results a call shortened stay shortened in the conversation and
// their references reach the next round's run state, the only ones
// read_result serves; a call whose budget is exceeded ends the run
// context_exceeded.
func TestAgentRunTakesTheBudget(t *testing.T) {
	h := newAgentHarness(t)
	next := toolsUntil(99)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		switch in.Call {
		case 4:
			out := next(in)
			out.Budgeted = []wire.BudgetedResult{{Msg: 2, Ref: "toolround:blob:b1", Content: "preview of c1"}}
			return out
		case 6:
			return wire.ModelOutput{ContextExceeded: true}
		}
		return next(in)
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentContextExceeded, st.Status)
	require.NotEmpty(t, st.Reason)
	require.Equal(t, 6, st.ModelCalls)
	require.Equal(t, 5, st.Round, "the exceeded call starts no round")
	for _, in := range h.inputs {
		require.True(t, in.Budget, "call %d asks for the budget", in.Call)
	}
	m := st.Conversation[2]
	require.True(t, m.Budgeted)
	require.Equal(t, "preview of c1", m.Content)
	require.Equal(t, "toolround:blob:b1", m.ContentRef)
	require.Empty(t, h.rounds[2].State.ResultRefs, "round 3 started before the budget replaced anything")
	require.Equal(t, []string{"toolround:blob:b1"}, h.rounds[3].State.ResultRefs)
	require.Equal(t, []string{"toolround:blob:b1"}, h.rounds[4].State.ResultRefs, "the refs stay in the run state")
	require.True(t, h.inputs[4].Messages[2].Budgeted, "the next call gets the result shortened")
}

// TestAgentRunRefreshesItsRefsAtContinueAsNew (B3): at continue-as-new the
// references the next execution carries (a result the budget replaced, a
// content fit stored, the run state's) get the store's TTL again, each
// once; each call is estimated from the size of the one before, which the
// next execution carries too.
func TestAgentRunRefreshesItsRefsAtContinueAsNew(t *testing.T) {
	h := newAgentHarness(t)
	next := toolsUntil(99)
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		out := next(in)
		out.Request = &round.RequestSize{Bytes: 1000 * in.Call, InputTokens: int64(300 * in.Call)}
		if in.Call == 3 {
			out.Budgeted = []wire.BudgetedResult{{Msg: 2, Ref: "toolround:blob:b1", Content: "preview of c1"}}
		}
		return out
	}
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		out := fakeRound(in, round.StatusOK)
		if in.Round == 1 {
			out.Results[0].Content = strings.Repeat("x", 40<<10) // fit stores it
		}
		if in.Round == 3 {
			h.env.SetCurrentHistoryLength(5000)
		}
		return out, nil
	}
	in := agentInput()
	in.MaxRounds = 10
	h.env.ExecuteWorkflow(names.AgentWorkflowName, in)
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(h.env.GetWorkflowError(), &can), "want continue-as-new, got %v", h.env.GetWorkflowError())
	var carried round.AgentInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &carried))

	require.Nil(t, h.inputs[0].Last, "the first call has nothing to go by")
	require.Equal(t, &round.RequestSize{Bytes: 1000, InputTokens: 300}, h.inputs[1].Last)
	require.Equal(t, &round.RequestSize{Bytes: 3000, InputTokens: 900}, carried.Carry.LastRequest)
	require.Equal(t, []string{"toolround:blob:b1"}, carried.Carry.State.ResultRefs)

	require.Len(t, h.refreshed, 1, "one refresh, at continue-as-new")
	stored := carried.Carry.Conversation[2].ContentRef
	require.NotEmpty(t, stored, "round 1's large result was stored by fit")
	refs := h.refreshed[0]
	require.Contains(t, refs, "toolround:blob:b1")
	require.Contains(t, refs, stored)
	require.True(t, slices.IsSorted(refs))
	require.Equal(t, len(refs), len(slices.Compact(slices.Clone(refs))), "each ref once")

	h2 := newAgentHarness(t)
	h2.reply = toolsUntil(5)
	st := h2.run(t, carried)
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, &round.RequestSize{Bytes: 3000, InputTokens: 900}, h2.inputs[0].Last, "the next execution estimates from the last request")
}
