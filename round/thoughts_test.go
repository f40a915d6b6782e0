package round

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A thinking block or reasoning item that holds a stored secret's value is
// kept sealed in the turn and opens back to the block as given (F2).
func TestSealThoughtsKeepsOnlyTheSealedForm(t *testing.T) {
	const value = "pw-4711-xyz"
	holds := func(s string) bool { return strings.Contains(s, value) }
	seal := func(s string) (string, error) { return "sealed:" + strings.ReplaceAll(s, value, "VALUE"), nil }
	open := func(s string) (string, error) {
		return strings.ReplaceAll(strings.TrimPrefix(s, "sealed:"), "VALUE", value), nil
	}
	anthropic := Input{Format: FormatAnthropic, Turn: json.RawMessage(`{"role":"assistant","content":[
		{"type":"thinking","thinking":"the key is ` + value + `","signature":"sig1"},
		{"type":"thinking","thinking":"nothing here","signature":"sig2"},
		{"type":"tool_use","id":"toolu_1","name":"store_secret","input":{"name":"k","value":"sealed:v1:x"}}]}`)}
	responses := Input{Format: FormatResponses, Output: json.RawMessage(`[
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"store ` + value + `"}],"encrypted_content":"enc"},
		{"type":"reasoning","id":"rs_2","summary":[]},
		{"type":"function_call","call_id":"call_1","name":"store_secret","arguments":"{}"}]`)}
	for _, in := range []Input{anthropic, responses} {
		t.Run(string(in.Format), func(t *testing.T) {
			given := string(in.TurnJSON())
			sealed := in
			require.NoError(t, sealed.SealThoughts(holds, seal))
			require.Equal(t, given, string(in.TurnJSON()), "the original input is not changed")
			require.NotContains(t, string(sealed.TurnJSON()), value)
			require.Contains(t, string(sealed.TurnJSON()), `"sealed":"sealed:`)
			calls, err := sealed.TurnCalls()
			require.NoError(t, err)
			require.Len(t, calls, 1, "the calls stay")
			require.NotContains(t, string(sealed.TurnJSON()), "nothing here\",\"sealed", "a block without the value is kept as given")

			opened := sealed
			require.NoError(t, opened.OpenThoughts(open))
			require.JSONEq(t, given, string(opened.TurnJSON()))

			none := in
			require.NoError(t, none.SealThoughts(func(string) bool { return false }, seal))
			require.Equal(t, given, string(none.TurnJSON()), "nothing to seal: the turn stays byte for byte")
		})
	}
}
