package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestLargeTurnGoesToTheBlobStore (F4): an agent run's turn above
// LARGE_RESULT_BYTES, a long thinking block, is in no event of the run's or
// its round's history; its call runs, and the next model call gets the
// whole turn back, thinking and signature as the model wrote them.
func TestLargeTurnGoesToTheBlobStore(t *testing.T) {
	const marker = "zebra-thought-6c1f"
	long := strings.Repeat("a long line of thought about "+marker+". ", 300) // about 14 KB
	m := newModelServer(t, func(r scripted.Request) (scripted.Turn, error) {
		if step(r) == 1 {
			return scripted.Turn{Thinking: long, Signature: "sig-long", Calls: []scripted.Call{modelFindTools("toolu_f", "calculate")}}, nil
		}
		return scripted.Turn{Text: "loaded"}, nil
	}, scripted.Options{})
	e := newAgentEnv(t, m, "LLM_API=anthropic", "LARGE_RESULT_BYTES=4096")
	r := e.runAgent("--run", "run-1", "--auto-approve", "load the calculator")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "loaded\n", r.stdout)
	sentBack := turnsSentBack(t, m, 2)
	require.Len(t, sentBack, 1)
	require.Contains(t, sentBack[0], long, "the model gets the whole turn back")
	require.Contains(t, sentBack[0], `"signature":"sig-long"`)
	var st round.AgentStatus
	status := e.starter(t.Context(), "", "agent-status", names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, 0, status.code, status.stderr)
	require.NoError(t, json.Unmarshal([]byte(status.stdout), &st))
	require.NotEmpty(t, st.Conversation[1].RawRef, "the turn is kept by reference")
	require.Contains(t, st.Conversation[2].Content, "calculate", "its call ran")
	requireNotInHistory(t, marker, names.AgentWorkflowID(e.session, "run-1"), names.WorkflowID(e.session, "run-1", 1))
}
