package round

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProviderNearMisses: a provider name one or two edits from a known one
// is refused with the known name; a name far from every known one is any
// other provider, as the contract allows (S1).
func TestProviderNearMisses(t *testing.T) {
	for given, want := range map[string]string{
		"claude_code": "claude-code",
		"Claude-Code": "claude-code",
		"claudecode":  "claude-code",
		"antropic":    "anthropic",
		"opneai":      "openai",
		"open-ai":     "openai",
	} {
		err := CheckProvider(given)
		require.ErrorIs(t, err, &Error{Code: CodeInvalidInput}, given)
		require.ErrorContains(t, err, `provider "`+given+`"`)
		require.ErrorContains(t, err, `did you mean "`+want+`"?`)

		in := Input{SessionID: "s", RunID: "r", Round: 1, Provider: given}
		require.ErrorContains(t, in.Validate(), `did you mean "`+want+`"?`, "a round input")
		a := AgentInput{SessionID: "s", RunID: "r", Task: "t", Provider: given}
		require.ErrorContains(t, a.Validate(), `did you mean "`+want+`"?`, "an agent request")
	}
	for _, ok := range append(knownProviders, "", "my-llm", "vllm-local", "llama.cpp") {
		require.NoError(t, CheckProvider(ok), ok)
	}
	in := Input{SessionID: "s", RunID: "r", Round: 1, Provider: "claude_code"}
	require.NoError(t, in.ValidateStarted(), "a workflow reads a started input as it is")
}
