package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoundInputAboveThePayloadLimit: Temporal refuses a payload above
// 2 MiB and a round's result repeats its input's assistant message; the
// starter refuses an input above 1.5 MiB in one clear line before it asks,
// instead of the server's blob-size or gRPC message-size errors.
func TestRoundInputAboveThePayloadLimit(t *testing.T) {
	e := newEnv(t)
	for _, size := range []int{1600 << 10, 3 << 20, 5 << 20} {
		in := e.input(1, "claude-code", nil, call("c1", "edit_file", map[string]any{"path": "x", "new_text": strings.Repeat("x", size)}))
		r := e.starter(context.Background(), mustJSON(t, in), "round", "-")
		require.Equal(t, 2, r.code, "%d bytes: %s", size, r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		require.Contains(t, r.stderr, "round input too large")
		require.Contains(t, r.stderr, "at most 1.5 MiB")
		require.NotContains(t, r.stderr, "rpc error")
		require.NotContains(t, r.stderr, "Blob data size")
		require.Empty(t, r.stdout)
	}
}

// TestStarterRefusesTrailingCloser: a stray ']' after the input is not JSON.
func TestStarterRefusesTrailingCloser(t *testing.T) {
	e := newEnv(t)
	r := e.starter(context.Background(), `{"session_id":"s","run_id":"r","round":1,"assistant":{"tool_calls":[]}} ]`, "round", "-")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "data after its JSON object")
}
