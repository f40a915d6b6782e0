package activities

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

func executeImages(t *testing.T, blobs BlobStore, images []round.Image) wire.ExecuteOutput {
	t.Helper()
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "shot", SideEffect: tools.ReadOnly,
		Handler: func(context.Context, tools.Request) (tools.Result, error) {
			return tools.Result{Content: "[image image/png]", Images: images}, nil
		}})
	a := &Activities{Registry: reg, Blobs: blobs, LargeResult: 1000, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	v, err := env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: "c1", Tool: "shot", Args: `{}`, SessionID: "s", RunID: "r", Round: 1, WorkflowID: "wf"})
	require.NoError(t, err)
	var out wire.ExecuteOutput
	require.NoError(t, v.Get(&out))
	return out
}

// TestExecuteToolKeepsImagesInTheBlobStore: with a blob store, an image's
// bytes go there (base64) and the output, which history records, holds
// only its MIME type, size and reference.
func TestExecuteToolKeepsImagesInTheBlobStore(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}
	blobs := &memBlobs{m: map[string]string{}}
	out := executeImages(t, blobs, []round.Image{{MIMEType: "image/png", Size: len(png), Data: png}})
	require.Equal(t, "[image image/png]", out.Content)
	require.Len(t, out.Images, 1)
	im := out.Images[0]
	require.Empty(t, im.Data, "the bytes stay out of history")
	require.Equal(t, "image/png", im.MIMEType)
	require.Equal(t, len(png), im.Size)
	stored, err := blobs.Get(context.Background(), im.Ref)
	require.NoError(t, err)
	require.Equal(t, base64.StdEncoding.EncodeToString(png), stored)
}

// TestExecuteToolImagesWithoutABlobStore: without a blob store a small
// image stays in the output (its base64 within LargeResult), a larger one
// keeps only its type and size; when the store fails, the same holds.
func TestExecuteToolImagesWithoutABlobStore(t *testing.T) {
	small := make([]byte, 700) // 936 bytes of base64
	large := make([]byte, 800) // 1068
	out := executeImages(t, nil, []round.Image{{MIMEType: "image/png", Size: 700, Data: small}, {MIMEType: "image/gif", Size: 800, Data: large}})
	require.Equal(t, []round.Image{{MIMEType: "image/png", Size: 700, Data: small}, {MIMEType: "image/gif", Size: 800}}, out.Images)

	out = executeImages(t, &memBlobs{m: map[string]string{}, fail: errors.New("redis down")}, []round.Image{{MIMEType: "image/png", Size: 700, Data: small}, {MIMEType: "image/gif", Size: 800, Data: large}})
	require.Equal(t, []round.Image{{MIMEType: "image/png", Size: 700, Data: small}, {MIMEType: "image/gif", Size: 800}}, out.Images)
}
