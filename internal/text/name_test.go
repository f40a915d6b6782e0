package text

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainName(t *testing.T) {
	for _, ok := range []string{"a", "host-1", "S1.b_c", "0x"} {
		require.True(t, PlainName(ok), ok)
	}
	for _, bad := range []string{"", ".hidden", "-x", "_x", "a/b", "a b", "é", "a\x00", ".."} {
		require.False(t, PlainName(bad), bad)
	}
}
