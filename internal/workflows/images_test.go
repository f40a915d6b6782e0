package workflows_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/round"
)

// TestToolImagesReachTheResult: the image of a call's output reaches its
// result (by reference: the worker has a blob store, which holds its
// base64), and so does the same round's repeat of the call; a call
// without images has none (F2).
func TestToolImagesReachTheResult(t *testing.T) {
	h := newHarness(t, 4)
	h.reg.MustRegister(shotTool())
	in := input(call("s1", "shot", `{"n":1}`), call("s2", "shot", `{"n":1}`), call("c1", "calculate", `{"expression":"1+1"}`))
	in.State.Fetched = append(in.State.Fetched, "shot")
	res := h.run(t, in)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Len(t, res.Results[0].Images, 1)
	im := res.Results[0].Images[0]
	require.Equal(t, "image/png", im.MIMEType)
	require.Equal(t, len(shotPNG), im.Size)
	require.Empty(t, im.Data, "the bytes stay in the blob store")
	stored, err := h.acts.Blobs.Get(context.Background(), im.Ref)
	require.NoError(t, err)
	require.Equal(t, base64.StdEncoding.EncodeToString(shotPNG), stored)
	require.Equal(t, round.StatusDeduped, res.Results[1].Status)
	require.Equal(t, res.Results[0].Images, res.Results[1].Images, "the repeat carries the image too")
	require.Empty(t, res.Results[2].Images)
}

// TestToolImagesHistory: the recorded round with an image result
// (testdata/tool_images.json) records the change tool-images and its
// results carry the image's reference; no older recording asks for it.
func TestToolImagesHistory(t *testing.T) {
	found := false
	for _, h := range loadHistories(t) {
		asked := false
		for _, e := range h.history.GetEvents() {
			a := e.GetMarkerRecordedEventAttributes()
			if a == nil || a.GetMarkerName() != "Version" {
				continue
			}
			var id string
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetDetails()["change-id"], &id))
			asked = asked || id == "tool-images"
		}
		if h.name != "tool_images" {
			require.False(t, asked, "%s asks for tool-images", h.name)
			continue
		}
		found = true
		require.True(t, asked, "the round with an image result records tool-images")
		for _, i := range []int{0, 1} {
			r := h.result.Results[i]
			require.Len(t, r.Images, 1, r.CallID)
			require.Equal(t, len(shotPNG), r.Images[0].Size)
			require.NotEmpty(t, r.Images[0].Ref)
		}
		require.Empty(t, h.result.Results[2].Images)
	}
	require.True(t, found, "testdata/tool_images.json is missing")
}
