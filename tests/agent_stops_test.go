package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// stopTurn is a Messages API answer with its text, a run_command call
// when command is set, and its stop_reason.
func stopTurn(text, command, stop string) scripted.Turn {
	t := scripted.Turn{Text: text, Stop: stop}
	if command != "" {
		t.Calls = []scripted.Call{modelRunTool("toolu_1", "run_command", map[string]any{"command": command})}
	}
	return t
}

// TestAgentRunStopsOnTheMessagesAPI (F4) through the binaries: a turn cut
// off at max_tokens ends the run truncated and its call does not run; a
// refusal ends it refused; both exit 1 with a one-line reason. A
// pause_turn goes back to the model as it is and the run goes on.
func TestAgentRunStopsOnTheMessagesAPI(t *testing.T) {
	for _, tc := range []struct {
		name   string
		turn   scripted.Turn
		status string
		reason string
	}{
		{"max_tokens", stopTurn("I will write", "echo cut >> log.txt", "max_tokens"), round.AgentTruncated, "cut off (max_tokens)"},
		{"refusal", stopTurn("", "", "refusal"), round.AgentRefused, "refused (refusal)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModelServer(t, turns(tc.turn, stopTurn("never asked", "", "end_turn")), scripted.Options{})
			e := newAgentEnv(t, m, "LLM_API=anthropic")
			r := e.runAgent("--run", "run-1", "--auto-approve", "write to log.txt")
			require.Equal(t, 1, r.code, r.stderr)
			require.Empty(t, r.stdout)
			line := strings.TrimSpace(r.stderr)
			require.NotContains(t, line, "\n", "one line: %s", r.stderr)
			require.Contains(t, line, "(status "+tc.status+")")
			require.Contains(t, line, tc.reason)
			require.Len(t, m.requests(), 1, "the run asked the model once")
			st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
			require.Equal(t, tc.status, st.Status)
			require.Equal(t, 0, st.Round, "no round ran")
			_, err := os.Stat(filepath.Join(e.workdir, "log.txt"))
			require.True(t, os.IsNotExist(err), "the cut-off call did not run")
		})
	}
	t.Run("pause_turn", func(t *testing.T) {
		m := newModelServer(t, turns(stopTurn("Searching first.", "", "pause_turn"), stopTurn("done", "", "end_turn")), scripted.Options{})
		e := newAgentEnv(t, m, "LLM_API=anthropic")
		r := e.runAgent("--run", "run-1", "--auto-approve", "look it up")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "done\n", r.stdout)
		got := m.requests()
		require.Len(t, got, 2, "the paused turn was continued once")
		last := got[1].Messages[len(got[1].Messages)-1]
		require.Equal(t, "assistant", last.Role, "the paused turn goes back as the last message")
		require.Equal(t, "Searching first.", last.Content)
		st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
		require.Equal(t, round.AgentCompleted, st.Status)
	})
}
