package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestAgentRunTakesTheBudget (B3): every model call asks for the budget;
// the results a call shortened stay shortened in the conversation and
// their references reach the next round's run state, the only ones
// read_result serves; a call whose budget is exceeded ends the run
// context_exceeded.
func TestAgentRunTakesTheBudget(t *testing.T) {
	h := newAgentHarness(t)
	next := toolsUntil(99)
	h.reply = func(in round.ModelInput) round.ModelOutput {
		switch in.Call {
		case 4:
			out := next(in)
			out.Budgeted = []round.BudgetedResult{{Msg: 2, Ref: "toolround:blob:b1", Content: "preview of c1"}}
			return out
		case 6:
			return round.ModelOutput{ContextExceeded: true}
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
