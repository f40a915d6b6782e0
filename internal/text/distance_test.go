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
