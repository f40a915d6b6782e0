package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

const plain = "sunshine42"

func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	return key
}

func input(calls ...round.ToolCall) *round.Input {
	return &round.Input{SessionID: "s1", RunID: "r1", Round: 1, Provider: "openai",
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
}

func toolCall(id, name, args string) round.ToolCall {
	return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}}
}

// The bypasses: an escaped name inside run_tool's arguments and a
// key spelled in another case went to history in clear.
func TestSealToolCallsEveryPath(t *testing.T) {
	key := testKey(t)
	in := input(
		toolCall("c1", "store_secret", `{"name":"A","value":"`+plain+`"}`),
		toolCall("c2", "run_tool", `{"name":"store\u005fsecret","args":{"name":"B","value":"`+plain+`"}}`),
		toolCall("c3", "run_tool", `{"name":"store_secret","args":"{\"name\":\"C\",\"Value\":\"`+plain+`\"}"}`),
		toolCall("c4", "store_secret", `{"name":"D","VALUE":"`+plain+`"}`),
		toolCall("c5", "read_files", `{"paths":["a.txt"]}`),
	)
	require.NoError(t, SealToolCalls(key, in.Assistant.ToolCalls))
	b, err := json.Marshal(in)
	require.NoError(t, err)
	require.NotContains(t, string(b), plain)
	require.Equal(t, `{"paths":["a.txt"]}`, string(in.Assistant.ToolCalls[4].Function.Arguments))

	bad := input(toolCall("c1", "run_tool", `{"name":"store\u005fsecret","args":{"value":"`+plain+`"}`))
	err = SealToolCalls(key, bad.Assistant.ToolCalls)
	require.ErrorContains(t, err, "call c1")
	require.NotContains(t, err.Error(), plain)
}

// A round's digest for attaching cannot be tested against guesses without
// the key, and is the same for the same input.
func TestInputDigestIsKeyed(t *testing.T) {
	key := testKey(t)
	in := input(toolCall("c1", "store_secret", `{"name":"A","value":"`+plain+`"}`))
	d1, err := InputDigest(key, in)
	require.NoError(t, err)
	d2, err := InputDigest(key, input(toolCall("c1", "store_secret", `{"name":"A","value":"`+plain+`"}`)))
	require.NoError(t, err)
	require.Equal(t, d1, d2)

	other, err := InputDigest(testKey(t), in)
	require.NoError(t, err)
	require.NotEqual(t, d1, other)
	_, sum, _ := strings.Cut(d1, ":")
	_, sumOther, _ := strings.Cut(other, ":")
	require.NotEqual(t, sum, sumOther)

	// The unsalted hash of the issue is not what is stored any more.
	b, err := json.Marshal(in)
	require.NoError(t, err)
	bare := sha256.Sum256(b)
	require.NotContains(t, d1, hex.EncodeToString(bare[:]))

	changed, err := InputDigest(key, input(toolCall("c1", "store_secret", `{"name":"A","value":"sunshine43"}`)))
	require.NoError(t, err)
	require.NotEqual(t, d1, changed)

	// A caller that sealed the input first (the console) gets the same
	// digest, so that its resubmission attaches.
	sealed := input(toolCall("c1", "store_secret", `{"name":"A","value":"`+plain+`"}`))
	require.NoError(t, SealToolCalls(key, sealed.Assistant.ToolCalls))
	d3, err := InputDigest(key, sealed)
	require.NoError(t, err)
	require.Equal(t, d1, d3)
	require.Contains(t, string(in.Assistant.ToolCalls[0].Function.Arguments), plain, "the input itself is left alone")
}

func TestSameInput(t *testing.T) {
	key := testKey(t)
	in := input(toolCall("c1", "read_files", `{"paths":["a.txt"]}`))
	digest, err := InputDigest(key, in)
	require.NoError(t, err)
	otherDigest, err := InputDigest(key, input(toolCall("c1", "read_files", `{"paths":["b.txt"]}`)))
	require.NoError(t, err)
	foreign, err := InputDigest(testKey(t), in)
	require.NoError(t, err)
	legacy, err := legacyInputHash(in)
	require.NoError(t, err)

	tests := []struct {
		name  string
		memo  map[string]string
		clash bool
	}{
		{"same digest", map[string]string{memoInputDigest: digest}, false},
		{"other input", map[string]string{memoInputDigest: otherDigest}, true},
		{"digest under another key: cannot tell, attach", map[string]string{memoInputDigest: foreign}, false},
		{"a round started before digests were keyed", map[string]string{legacyMemoInputHash: legacy}, false},
		{"such a round with another input", map[string]string{legacyMemoInputHash: strings.Repeat("0", 64)}, true},
		{"no memo", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same, err := sameInput(tt.memo, key, in)
			require.NoError(t, err)
			require.Equal(t, !tt.clash, same)
		})
	}
}
