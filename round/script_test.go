package round

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The documented scripts (examples/scripted) read in each format, and
// each of their turns is the same chat-completions message.
func TestModelScriptTurnsInEachFormat(t *testing.T) {
	for _, name := range []string{"chat.json", "anthropic.json", "responses.json"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("../examples/scripted", name))
			require.NoError(t, err)
			s, err := ParseModelScript(b)
			require.NoError(t, err)
			require.Len(t, s.Turns, 3)
			first, err := s.Turn(1)
			require.NoError(t, err)
			require.Len(t, first.ToolCalls, 1)
			require.Equal(t, "find_tools", first.ToolCalls[0].Function.Name)
			require.JSONEq(t, `{"query": "select:calculate"}`, string(first.ToolCalls[0].Function.Arguments))
			second, err := s.Turn(2)
			require.NoError(t, err)
			require.Equal(t, "run_tool", second.ToolCalls[0].Function.Name)
			last, err := s.Turn(3)
			require.NoError(t, err)
			require.Equal(t, "6*7 is 42.", last.Content)
			require.Empty(t, last.ToolCalls)
			_, err = s.Turn(4)
			require.ErrorContains(t, err, "the script has 3 turns and the model is asked for turn 4")
		})
	}
}

// A script that cannot be played is refused with what is wrong and where.
func TestParseModelScriptRefusesWhatItCannotPlay(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"not JSON", `{"format": "openai",`, "the script is not valid JSON"},
		{"after the object", `{"turns": [{"role": "assistant", "content": "x"}]} {}`, "data after its JSON object"},
		{"unknown field", `{"format": "openai", "turn": []}`, `unknown field "turn" in the script; did you mean "turns"?`},
		{"unknown format", `{"format": "antropic", "turns": [{}]}`, `did you mean "anthropic"?`},
		{"no turns", `{"format": "openai", "turns": []}`, "the script has no turns"},
		{"wrong type", `{"turns": {}}`, `field "turns" must be`},
		{"openai turn in anthropic", `{"format": "anthropic", "turns": [{"role": "assistant", "content": "x"}]}`, "turn 1 of the script"},
		{"typo in a call", `{"format": "anthropic", "turns": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "calculate", "inptu": {}}]}]}`,
			`did you mean "input"?`},
		{"responses without output", `{"format": "responses", "turns": [{"role": "assistant", "content": "x"}]}`, `a turn is {"output": [...]}`},
		{"second turn", `{"turns": [{"role": "assistant", "content": "x"}, {"role": "assistant", "tool_call": []}]}`, "turn 2 of the script"},
		{"too large", `{"turns": [{"role": "assistant", "content": "` + string(make([]byte, maxScriptBytes)) + `"}]}`, "at most 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseModelScript([]byte(tc.script))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// An agent input's script is checked at the edge.
func TestAgentInputValidatesItsScript(t *testing.T) {
	in := AgentInput{SessionID: "s", RunID: "r", Task: "t", Provider: "openai", Script: &ModelScript{Format: "openai"}}
	require.ErrorContains(t, in.Validate(), "the script has no turns")
}
