package workflows

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
	tests := []struct {
		name   string
		conv   []round.AgentMessage
		budget int
		want   []int
	}{
		{"small fits", []round.AgentMessage{msg(10), msg(3000)}, 1 << 20, nil},
		{"above inline", []round.AgentMessage{msg(10), msg(20 << 10), msg(3000)}, 1 << 20, []int{1}},
		{"stored stays", []round.AgentMessage{stored, msg(10)}, 1 << 20, nil},
		{"largest first until the budget", []round.AgentMessage{msg(4000), msg(9000), msg(8000), msg(500)}, 12000, []int{1, 2}},
		{"previews are never moved", []round.AgentMessage{msg(1000), msg(1000)}, 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, planConversation(tt.conv, 16<<10, tt.budget))
		})
	}
}
