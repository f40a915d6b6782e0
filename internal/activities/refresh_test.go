package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/wire"
)

// refreshBlobs is a blob store that refreshes: it records what it was
// asked and reports the refs it does not hold.
type refreshBlobs struct {
	storeBlobs
	asked [][]string
}

func (b *refreshBlobs) Refresh(_ context.Context, refs []string) ([]string, error) {
	b.asked = append(b.asked, refs)
	var missing []string
	for _, r := range refs {
		if _, ok := b.m[r]; !ok {
			missing = append(missing, r)
		}
	}
	return missing, nil
}

// TestRefreshContents (B3): the references go to a store that refreshes,
// those it lost are reported; a store that cannot refresh, or no store,
// refreshes nothing and fails nothing.
func TestRefreshContents(t *testing.T) {
	blobs := &refreshBlobs{storeBlobs: storeBlobs{m: map[string]string{"toolround:blob:1": "x"}}}
	a := &Activities{Blobs: blobs}
	out, err := a.RefreshContents(context.Background(), wire.RefreshContentsInput{Refs: []string{"toolround:blob:1", "toolround:blob:2"}})
	require.NoError(t, err)
	require.Equal(t, wire.RefreshContentsOutput{Refreshed: 1, Missing: []string{"toolround:blob:2"}}, out)
	require.Equal(t, [][]string{{"toolround:blob:1", "toolround:blob:2"}}, blobs.asked)

	out, err = (&Activities{Blobs: &storeBlobs{m: map[string]string{}}}).RefreshContents(context.Background(), wire.RefreshContentsInput{Refs: []string{"toolround:blob:1"}})
	require.NoError(t, err)
	require.Zero(t, out.Refreshed)
	out, err = (&Activities{}).RefreshContents(context.Background(), wire.RefreshContentsInput{Refs: []string{"toolround:blob:1"}})
	require.NoError(t, err)
	require.Zero(t, out.Refreshed)
}
