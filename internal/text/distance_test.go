package text

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditDistance(t *testing.T) {
	require.Equal(t, 0, EditDistance("", ""))
	require.Equal(t, 3, EditDistance("abc", ""))
	require.Equal(t, 1, EditDistance("ab", "ba"), "a swap of neighbours is one edit")
	require.Equal(t, 3, EditDistance("kitten", "sitting"))
	require.Equal(t, 1, EditDistance("asistant", "assistant"))
}

func TestClosest(t *testing.T) {
	known := []string{"approve", "deny", "pending", "progress"}
	for name, want := range map[string]string{
		"aprove": "approve", "APPROVE": "approve", "pendng": "pending", "progres": "progress",
		"dney": "deny", "den": "deny", "x": "", "frobnicate": "", "": "",
	} {
		require.Equal(t, want, Closest(name, known), name)
	}
}
