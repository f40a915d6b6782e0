package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestStarterRefusesUnknownFieldsU8: a misspelt field of a round input is
// refused before anything starts (exit 2, the field and the closest known
// name), so the same round number then runs, corrected (U8).
func TestStarterRefusesUnknownFieldsU8(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	good := mustJSON(t, e.input(1, "openai", nil, call("t1", "write_todo", map[string]any{"items": []any{}})))

	for _, c := range []struct{ from, to, line string }{
		{`"assistant":`, `"asistant":`, `starter: unknown field "asistant" in the round input; did you mean "assistant"?`},
		{`"tool_calls":`, `"tool_call":`, `starter: unknown field "tool_call" in assistant of the round input; did you mean "tool_calls"?`},
		{`"arguments":`, `"args":`, `starter: unknown field "args" in assistant.tool_calls[0].function of the round input`},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		require.NotEqual(t, good, bad)
		// Refused at once, before it looks for a worker (there is none yet).
		bctx, bcancel := context.WithTimeout(ctx, 15*time.Second)
		r := e.starter(bctx, bad, "round", "-")
		bcancel()
		require.Equal(t, 2, r.code, r.stderr)
		require.Equal(t, c.line, strings.TrimSpace(r.stderr))
		require.Empty(t, r.stdout)
	}
	// Nothing was started: no round of that number exists.
	wfID := round.WorkflowID(e.session, "run-1", 1)
	r := e.starter(ctx, "", "pending", wfID)
	require.Contains(t, r.stderr, "does not exist yet")

	e.startWorker()
	r = e.starter(ctx, good, "round", "-")
	res := decodeResult(t, r)
	require.Equal(t, wfID, res.WorkflowID)
	require.Len(t, res.Results, 1)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
}
