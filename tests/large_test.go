package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// historyStats reads a round's workflow history from the server.
type historyStats struct {
	total, largest int
	// raw is every event's encoding, to look for what history holds.
	raw []byte
}

func workflowHistory(t *testing.T, wfID string) historyStats {
	t.Helper()
	c, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(), Logger: testenv.QuietLogger()})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var st historyStats
	it := c.GetWorkflowHistory(ctx, wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		b, err := proto.Marshal(ev)
		require.NoError(t, err)
		st.total += len(b)
		st.largest = max(st.largest, len(b))
		st.raw = append(st.raw, b...)
	}
	return st
}

// emit is what the emit_bytes tools of tests/testworker return.
func emit(n int, fill string) string {
	return strings.Repeat(fill, n/len(fill)+1)[:n]
}

// TestLargeResultsStayOutOfHistory runs 5 MiB results through a local and
// a regular activity: history keeps a reference and a preview (well under
// 64 KiB per call), Redis keeps the content past the server's retention, and
// `starter round` prints it whole, also when the next round dedupes the call.
func TestLargeResultsStayOutOfHistory(t *testing.T) {
	const size = 5 << 20
	const perCall = 64 << 10
	e := newEnv(t)
	e.startWorkerBin(testWorkerBin)
	rdb := testenv.Redis(t)

	state := &round.RunState{Fetched: []string{"emit_bytes", "emit_bytes_remote"}}
	calls := []round.ToolCall{
		call("local", "emit_bytes", map[string]any{"bytes": size, "fill": "local-"}),
		call("remote", "emit_bytes_remote", map[string]any{"bytes": size, "fill": "remote-"}),
		call("small", "emit_bytes", map[string]any{"bytes": 100, "fill": "s"}),
	}
	want := map[string]string{"local": emit(size, "local-"), "remote": emit(size, "remote-"), "small": emit(100, "s")}

	in1 := e.input(1, "claude-code", state, calls...)
	res1 := e.round(in1)
	requireEveryCallOnce(t, in1, res1)
	refs := map[string]string{}
	for i, r := range res1.Results {
		require.Equal(t, round.StatusOK, r.Status, "%s: %.300s", r.CallID, r.Content)
		require.Equal(t, len(want[r.CallID]), len(r.Content), r.CallID)
		require.Equal(t, want[r.CallID], r.Content, "the round result holds the whole content")
		require.Equal(t, round.MessageContent(r.Tool, want[r.CallID]), res1.Messages[i].Content, "and so do the tool messages")
		require.Equal(t, res1.Messages[i], res1.History[i+1])
		if r.CallID == "small" {
			require.Empty(t, r.ContentRef, "small results stay in history")
			continue
		}
		require.True(t, strings.HasPrefix(r.ContentRef, cache.BlobPrefix), r.ContentRef)
		refs[r.CallID] = r.ContentRef
		ttl, err := rdb.TTL(context.Background(), r.ContentRef).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, 24*time.Hour, "the blob outlives the dev server's retention")
	}
	require.NotEqual(t, refs["local"], refs["remote"])

	h1 := workflowHistory(t, in1.WorkflowID())
	t.Logf("round 1: history %d bytes, largest event %d bytes", h1.total, h1.largest)
	require.Less(t, h1.total, perCall*len(calls), "history stays under 64 KiB per call")
	require.Less(t, h1.largest, perCall)
	for id, ref := range refs {
		require.Contains(t, string(h1.raw), ref, "history holds the reference of %s", id)
	}

	in2 := e.input(2, "claude-code", res1.State, calls[:2]...)
	res2 := e.round(in2)
	requireEveryCallOnce(t, in2, res2)
	for i, r := range res2.Results {
		require.Equal(t, round.StatusDeduped, r.Status, "%s: %.300s", r.CallID, r.Content)
		require.Equal(t, refs[r.CallID], r.ContentRef, "the dedupe entry keeps the reference")
		require.Equal(t, want[r.CallID], r.Content, "a deduped large result is whole too")
		require.NotNil(t, r.Repeat, "%s: a repeat says what it repeats (U3)", r.CallID)
		require.Equal(t, 1, r.Repeat.Round)
		require.True(t, res2.Messages[i].Content == round.MessageContent(r.Tool, r.Repeat.Note()+"\n"+want[r.CallID]),
			"%s: the tool message is the repeat note and the whole result", r.CallID)
	}
	h2 := workflowHistory(t, in2.WorkflowID())
	t.Logf("round 2: history %d bytes, largest event %d bytes", h2.total, h2.largest)
	require.Less(t, h2.total, perCall*len(in2.Assistant.ToolCalls))
}
