package cache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecentForgetsTheOldest(t *testing.T) {
	r := newRecent(3)
	require.True(t, r.add("a"))
	require.False(t, r.add("a"), "a duplicate is dropped")
	for i := 0; i < 3; i++ {
		require.True(t, r.add(fmt.Sprint(i)))
	}
	require.True(t, r.add("a"), "a was forgotten once three newer ids came")
	require.Len(t, r.ids, 3, "memory stays bounded")
}
