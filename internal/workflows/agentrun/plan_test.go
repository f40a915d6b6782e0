package agentrun

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

func TestPlanConversation(t *testing.T) {
	msg := func(n int) round.AgentMessage {
		return round.AgentMessage{Role: "tool", Content: strings.Repeat("x", n)}
	}
	stored := msg(50 << 10)
	stored.ContentRef = "toolround:blob:1"
	call := func(n int) round.AgentMessage {
		return round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{ID: "c", Function: round.FunctionCall{Name: "edit_file", Arguments: round.Arguments(strings.Repeat("a", n))}}}}
	}
	storedCall := call(50 << 10)
	storedCall.ArgRefs = []string{"toolround:blob:2"}
	tests := []struct {
		name   string
		conv   []round.AgentMessage
		budget int
		want   []piece
	}{
		{"small fits", []round.AgentMessage{msg(10), msg(3000)}, 1 << 20, nil},
		{"above inline", []round.AgentMessage{msg(10), msg(20 << 10), msg(3000)}, 1 << 20, []piece{{1, -1, 20 << 10}}},
		{"stored stays", []round.AgentMessage{stored, msg(10)}, 1 << 20, nil},
		{"largest first until the budget", []round.AgentMessage{msg(4000), msg(9000), msg(8000), msg(500)}, 12000, []piece{{1, -1, 9000}, {2, -1, 8000}}},
		{"tool-call arguments", []round.AgentMessage{call(20 << 10), msg(10)}, 1 << 20, []piece{{0, 0, 20 << 10}}},
		{"stored arguments stay", []round.AgentMessage{storedCall}, 1 << 20, nil},
		{"previews are never moved", []round.AgentMessage{msg(1000), msg(1000)}, 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, planConversation(tt.conv, 16<<10, tt.budget))
		})
	}
}
