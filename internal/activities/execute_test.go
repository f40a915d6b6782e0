package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// memBlobs is an in-memory blob store that can be made to fail.
type memBlobs struct {
	mu   sync.Mutex
	m    map[string]string
	fail error
}

func (b *memBlobs) Put(_ context.Context, content string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return "", b.fail
	}
	ref := fmt.Sprintf("toolround:blob:%d", len(b.m))
	b.m[ref] = content
	return ref, nil
}

func (b *memBlobs) Get(_ context.Context, ref string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.m[ref]
	if !ok {
		return "", errors.New("no blob " + ref)
	}
	return c, nil
}

// execute runs ExecuteTool as a regular activity, for a tool that returns
// content, with a LargeResult threshold of 1000 bytes.
func execute(t *testing.T, blobs BlobStore, content string) wire.ExecuteOutput {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "echo", SideEffect: tools.ReadOnly,
		Handler: func(context.Context, tools.Request) (tools.Result, error) { return tools.Result{Content: content}, nil }})
	a := &Activities{Registry: reg, Blobs: blobs, LargeResult: 1000, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	v, err := env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: "c1", Tool: "echo", Args: `{}`, SessionID: "s", RunID: "r", Round: 1, WorkflowID: "wf"})
	require.NoError(t, err)
	var out wire.ExecuteOutput
	require.NoError(t, v.Get(&out))
	return out
}

// TestExecuteToolKeepsLargeResultsOutOfHistory: a result above LargeResult
// goes to the blob store whole; the output carries its reference and a
// preview that names it. Results at the threshold stay as they are.
func TestExecuteToolKeepsLargeResultsOutOfHistory(t *testing.T) {
	blobs := &memBlobs{m: map[string]string{}}
	small := strings.Repeat("s", 1000)
	out := execute(t, blobs, small)
	require.Equal(t, small, out.Content)
	require.Empty(t, out.ContentRef)
	require.Empty(t, blobs.m, "a result at the threshold stays in history")

	large := "a" + strings.Repeat("é", 3000) + "end" // 6004 bytes, above the 2 KiB preview
	out = execute(t, blobs, large)
	require.NotEmpty(t, out.ContentRef, "a result above the threshold moves to the blob store")
	stored, err := blobs.Get(context.Background(), out.ContentRef)
	require.NoError(t, err)
	require.Equal(t, large, stored, "the blob store holds the whole result")
	require.Equal(t, round.StoredPreview(large, out.ContentRef, previewBytes), out.Content)
	require.Less(t, len(out.Content), len(large))
	require.Contains(t, out.Content, "stored as "+out.ContentRef)
	require.False(t, out.IsError)
}

// TestExecuteToolTruncatesLargeResultsWithoutABlobStore: without a blob
// store, or when it fails, a large result is cut to the threshold and says
// so; it never reaches history whole.
func TestExecuteToolTruncatesLargeResultsWithoutABlobStore(t *testing.T) {
	large := strings.Repeat("x", 5000)
	for name, blobs := range map[string]BlobStore{"none": nil, "failing": &memBlobs{m: map[string]string{}, fail: errors.New("redis down")}} {
		t.Run(name, func(t *testing.T) {
			out := execute(t, blobs, large)
			require.Empty(t, out.ContentRef)
			require.True(t, strings.HasPrefix(out.Content, strings.Repeat("x", 1000)+"\n[truncated: the result was 5000 bytes"), "%.80q...", out.Content[990:])
			require.Less(t, len(out.Content), 1200)
		})
	}
}

// unconfirmedBlobs stores as memBlobs does but no replica confirms a write.
type unconfirmedBlobs struct{ *memBlobs }

func (b unconfirmedBlobs) PutConfirmed(ctx context.Context, content string) (string, bool, error) {
	ref, err := b.Put(ctx, content)
	return ref, false, err
}

// TestUnconfirmedBlobStaysInHistoryO1: a large result whose blob write no
// replica confirmed stays in the output whole when it fits 4x LargeResult;
// a larger one keeps its reference and says stored: unconfirmed.
func TestUnconfirmedBlobStaysInHistoryO1(t *testing.T) {
	blobs := unconfirmedBlobs{&memBlobs{m: map[string]string{}}}
	fits := strings.Repeat("f", 4000)
	out := execute(t, blobs, fits)
	require.Equal(t, fits, out.Content, "4x LargeResult stays in history")
	require.Empty(t, out.ContentRef)

	large := strings.Repeat("l", 4001)
	out = execute(t, blobs, large)
	require.NotEmpty(t, out.ContentRef)
	require.Contains(t, out.Content, "[4001 bytes in all; stored as "+out.ContentRef+"; stored: unconfirmed")
	require.Less(t, len(out.Content), len(large))

	// A write that failed is not confirmed either.
	failing := &memBlobs{m: map[string]string{}, fail: errors.New("the master is gone")}
	out = execute(t, failing, fits)
	require.Equal(t, fits, out.Content, "4x LargeResult stays in history")
	require.Empty(t, out.ContentRef)
}
