package agentrun_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// formatRound answers every call of a round in any format, reading its
// calls as the round does.
func formatRound(_ workflow.Context, in round.Input) (round.Output, error) {
	calls, err := in.TurnCalls()
	if err != nil {
		return round.Output{}, err
	}
	st := in.State.Clone()
	st.Seq++
	out := round.Output{WorkflowID: in.WorkflowID(), SessionID: in.SessionID, RunID: in.RunID, Round: in.Round, State: st}
	for i, c := range calls {
		status := round.StatusOK
		if i == 1 {
			status = round.StatusError
		}
		out.Results = append(out.Results, round.CallResult{CallID: c.ID, Tool: c.Function.Name, Status: status, Content: "did " + c.ID})
	}
	return out, nil
}

// TestAgentRunAnthropic: a Messages API turn with thinking and two
// tool_use blocks runs as an anthropic round given the turn unchanged; the
// results join the conversation with is_error; a pause_turn goes back and
// the model is asked again without a round; end_turn is the answer.
func TestAgentRunAnthropic(t *testing.T) {
	h := newAgentHarness(t)
	h.roundFn = formatRound
	turn := `{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"calculate","input":{"expression":"6*7"}},{"type":"tool_use","id":"toolu_2","name":"calculate","input":{"expression":"1/0"}}]}`
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		switch in.Call {
		case 1:
			return wire.ModelOutput{Stop: round.StopTools, FinishReason: "tool_use", Tokens: 10, Message: round.AgentMessage{
				Role: "assistant", Format: round.FormatAnthropic, Raw: json.RawMessage(turn),
				ToolCalls: []round.ToolCall{{ID: "toolu_1", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"6*7"}`}},
					{ID: "toolu_2", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"1/0"}`}}}}}
		case 2:
			return wire.ModelOutput{Stop: round.StopPause, FinishReason: "pause_turn", Message: round.AgentMessage{
				Role: "assistant", Format: round.FormatAnthropic, Raw: json.RawMessage(`{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}]}`)}}
		}
		return wire.ModelOutput{Stop: round.StopAnswer, FinishReason: "end_turn", Message: round.AgentMessage{
			Role: "assistant", Content: "42", Format: round.FormatAnthropic, Raw: json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"42"}]}`)}}
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, "42", st.Final)
	require.Equal(t, 3, st.ModelCalls)
	require.Equal(t, 1, st.Round, "a paused turn runs no round")
	require.Len(t, h.rounds, 1)
	require.Equal(t, round.FormatAnthropic, h.rounds[0].Format)
	require.JSONEq(t, turn, string(h.rounds[0].Turn), "the round gets the turn as the model gave it")
	require.Equal(t, "user,assistant,tool,tool,assistant,assistant", roles(st.Conversation))
	require.Equal(t, "toolu_2", st.Conversation[3].ToolCallID)
	require.True(t, st.Conversation[3].IsError)
	require.False(t, st.Conversation[2].IsError)
	require.Len(t, h.inputs[2].Messages, 5, "the paused turn goes back in the next call")
	require.Contains(t, string(h.inputs[2].Messages[4].Raw), "server_tool_use")
}

// TestAgentRunResponsesTruncated: a Responses turn runs as a responses
// round; a turn cut off ends the run truncated, never taken as the answer,
// and its calls do not run.
func TestAgentRunResponsesTruncated(t *testing.T) {
	h := newAgentHarness(t)
	h.roundFn = formatRound
	items := `[{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"enc"},{"type":"function_call","call_id":"call_1","name":"calculate","arguments":"{\"expression\":\"6*7\"}"}]`
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		if in.Call == 1 {
			return wire.ModelOutput{Stop: round.StopTools, FinishReason: "response.completed", Message: round.AgentMessage{
				Role: "assistant", Format: round.FormatResponses, Raw: json.RawMessage(items),
				ToolCalls: []round.ToolCall{{ID: "call_1", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"6*7"}`}}}}}
		}
		return wire.ModelOutput{Stop: round.StopTruncated, FinishReason: "response.incomplete max_output_tokens", Message: round.AgentMessage{
			Role: "assistant", Content: "The answer is", Format: round.FormatResponses, Raw: json.RawMessage(`[{"type":"function_call","call_id":"call_2","name":"calculate","arguments":"{\"expr"}]`),
			ToolCalls: []round.ToolCall{{ID: "call_2", Type: "function", Function: round.FunctionCall{Name: "calculate", Arguments: `{"expr`}}}}}
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentTruncated, st.Status)
	require.Empty(t, st.Final)
	require.Contains(t, st.Reason, "max_output_tokens")
	require.Len(t, h.rounds, 1)
	require.Equal(t, round.FormatResponses, h.rounds[0].Format)
	require.JSONEq(t, items, string(h.rounds[0].Output))
}

// TestAgentRunChatStops: on chat completions, finish_reason length ends
// the run truncated and content_filter refused.
func TestAgentRunChatStops(t *testing.T) {
	for stop, status := range map[string]string{round.StopTruncated: round.AgentTruncated, round.StopRefused: round.AgentRefused} {
		h := newAgentHarness(t)
		h.reply = func(in wire.ModelInput) wire.ModelOutput {
			return wire.ModelOutput{Stop: stop, FinishReason: "x", Message: round.AgentMessage{Role: "assistant", Content: "partial"}}
		}
		st := h.run(t, agentInput())
		require.Equal(t, status, st.Status)
		require.Empty(t, st.Final)
		require.Empty(t, h.rounds)
	}
}
