package workflows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// bigResult is a round's output with n results of size bytes each and a
// state with m dedupe entries of size bytes each.
func bigResult(n, m, size int) *round.Output {
	res := &round.Output{Assistant: round.Message{Role: "assistant"}, State: &round.RunState{Dedupe: map[string]round.DedupeEntry{}}}
	for i := range n {
		id := fmt.Sprintf("c%02d", i)
		content := fmt.Sprintf("%02d", i) + strings.Repeat("x", size-2)
		res.Results = append(res.Results, round.CallResult{CallID: id, Tool: "read_files", Status: round.StatusOK, Content: content})
	}
	for i := range m {
		res.State.Dedupe[fmt.Sprintf("k%02d", i)] = round.DedupeEntry{Tool: "read_files", Content: fmt.Sprintf("e%02d", i) + strings.Repeat("y", size-3)}
	}
	return res
}

func stored(contents []string, withRef bool) []wire.StoredContent {
	out := make([]wire.StoredContent, len(contents))
	for i, c := range contents {
		out[i].Content = round.PreviewOf(c, 2048) + "\n[stored]"
		if withRef {
			out[i].Ref = fmt.Sprintf("ref-%d", i)
		}
	}
	return out
}

func TestPlanFitLeavesRoundsThatFitAlone(t *testing.T) {
	require.Empty(t, planFit(bigResult(10, 2, 10<<10)).contents)
}

func TestPlanFitBringsTheResultUnderItsBudget(t *testing.T) {
	res := bigResult(20, 0, 120<<10)
	require.Greater(t, EncodedLen(res), ResultBudget)
	plan := planFit(res)
	require.NotEmpty(t, plan.contents)
	require.Less(t, len(plan.contents), 20, "only as many as it takes")
	applyFit(res, plan.contents, stored(plan.contents, true))
	require.LessOrEqual(t, EncodedLen(res), ResultBudget)
	moved := 0
	full := res.Result()
	for i, r := range res.Results {
		require.Equal(t, round.MessageContent(r.Tool, r.Content), full.Messages[i].Content, "message %d follows its result", i)
		if r.ContentRef != "" {
			moved++
			require.Contains(t, r.Content, "[stored]")
		}
	}
	require.Equal(t, len(plan.contents), moved)
}

func TestPlanFitBringsTheStateUnderItsBudget(t *testing.T) {
	res := bigResult(1, 6, 80<<10)
	require.Greater(t, EncodedLen(res.State), StateBudget)
	require.Less(t, EncodedLen(res), ResultBudget)
	plan := planFit(res)
	require.NotEmpty(t, plan.contents)
	for _, c := range plan.contents {
		require.True(t, strings.HasPrefix(c, "e"), "only dedupe entries move when only the state is too large")
	}
	applyFit(res, plan.contents, stored(plan.contents, true))
	require.LessOrEqual(t, EncodedLen(res.State), StateBudget)
	require.Len(t, res.State.Dedupe, 6, "entries stay, with a reference")

	res = bigResult(1, 6, 80<<10)
	applyFit(res, plan.contents, stored(plan.contents, false))
	require.Len(t, res.State.Dedupe, 6-len(plan.contents), "without a blob store a cut entry is dropped, never served as the whole answer")
}

func TestPlanFitShrinksPreviewsForManyResults(t *testing.T) {
	res := bigResult(900, 0, 3<<10)
	require.Greater(t, EncodedLen(res), ResultBudget)
	plan := planFit(res)
	require.Less(t, plan.preview, 2<<10, "900 previews of 2 KiB would not fit")
	contents := plan.contents
	st := make([]wire.StoredContent, len(contents))
	for i, c := range contents {
		st[i] = wire.StoredContent{Ref: "r", Content: round.PreviewOf(c, plan.preview) + "\n[3072 bytes in all; stored as toolround:blob:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef]"}
	}
	applyFit(res, contents, st)
	require.LessOrEqual(t, EncodedLen(res), ResultBudget)
}

func TestPlanFitIsDeterministic(t *testing.T) {
	a, b := planFit(bigResult(30, 8, 90<<10)), planFit(bigResult(30, 8, 90<<10))
	require.Equal(t, a, b)
}

func TestPreviewOfCutsAtACharacterBoundary(t *testing.T) {
	require.Equal(t, "ab", round.PreviewOf("abé", 3))
	require.Equal(t, "abé", round.PreviewOf("abé", 4))
	require.Equal(t, "", round.PreviewOf("é", 1))
}

func TestTrimEventsOnlyWhenTheResultIsStillTooLarge(t *testing.T) {
	small := bigResult(3, 0, 100)
	small.Events = []round.Event{{Type: round.EventCallStarted}, {Type: round.EventToolResult}, {Type: round.EventRoundFinished, Detail: "ok=3"}}
	require.False(t, trimEvents(small))
	require.Len(t, small.Events, 3)

	res := bigResult(2000, 0, 40)
	res.Events = append(res.Events, round.Event{Type: round.EventRoundStarted})
	for _, r := range res.Results {
		res.Events = append(res.Events,
			round.Event{Type: round.EventCallStarted, ID: strings.Repeat("w", 200) + "/" + r.CallID + "/started", CallID: r.CallID, SessionID: strings.Repeat("s", 120)},
			round.Event{Type: round.EventToolResult, ID: strings.Repeat("w", 200) + "/" + r.CallID + "/result", CallID: r.CallID, SessionID: strings.Repeat("s", 120), Detail: r.Content})
	}
	res.Events = append(res.Events, round.Event{Type: round.EventRoundFinished, Detail: "ok=2000"})
	require.Greater(t, EncodedLen(res), ResultBudget)
	require.True(t, trimEvents(res))
	require.LessOrEqual(t, EncodedLen(res), ResultBudget)
	require.Equal(t, round.EventRoundStarted, res.Events[0].Type)
	last := res.Events[len(res.Events)-1]
	require.Equal(t, round.EventRoundFinished, last.Type)
	require.Contains(t, last.Detail, "call events are on the session's event stream only")
	for _, e := range res.Events {
		require.NotEqual(t, round.EventCallStarted, e.Type, "call_started events go first")
	}
}

func TestStringLenIsTheEncodedLength(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uo\te`, "tab\tnl\nctl\x01", "<b>&amp;</b>", "é中😀", "bad\xffutf8\xc3", "line\u2028sep\u2029", strings.Repeat("x", 1000)} {
		require.Equal(t, EncodedLen(s), stringLen(s), "%q", s)
	}
}
