package seam

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckpoint(t *testing.T) {
	Checkpoint(context.Background(), "none set") // no hook: nothing happens
	var seen []string
	ctx := WithCheckpoint(context.Background(), func(p string) { seen = append(seen, p) })
	Checkpoint(ctx, "edit_file:before_write")
	require.Equal(t, []string{"edit_file:before_write"}, seen)
}

func TestWithActivity(t *testing.T) {
	orig := func(n int) int { return n }
	ctx := WithActivity(context.Background(), "Double", func(f func(int) int) func(int) int {
		return func(n int) int { return 2 * f(n) }
	})
	ctx = WithActivity(ctx, "Other", func(f func(string) string) func(string) string { return f })
	swaps := Swaps(ctx)
	require.Len(t, swaps, 2)
	require.Equal(t, "Double", swaps[0].Name)
	fn, err := swaps[0].Wrap(orig)
	require.NoError(t, err)
	require.Equal(t, 6, fn.(func(int) int)(3))

	_, err = swaps[1].Wrap(orig)
	require.EqualError(t, err, `seam: activity "Other" is a func(int) int, not a func(string) string`)
	require.Empty(t, Swaps(context.Background()))
}
