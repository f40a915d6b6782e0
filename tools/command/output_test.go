package command

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCapBuffer(t *testing.T) {
	long := strings.Repeat("0123456789", 7) // 70 bytes
	tests := []struct {
		name  string
		limit int
		data  string
		want  string
	}{
		{"empty", 10, "", ""},
		{"fits", 10, "abcdefghij", "abcdefghij"},
		{"head and tail", 10, long, "01234\n... 60 bytes omitted ...\n56789"},
		{"one over", 10, "abcdefghijk", "abcde\n... 1 bytes omitted ...\nghijk"},
		{"odd limit", 7, long, "012\n... 63 bytes omitted ...\n6789"},
		{"cut runes are dropped", 8, "ééééééé", "éé\n... 6 bytes omitted ...\néé"},
		{"cut inside a rune", 6, "aéééééé", "aé\n... 8 bytes omitted ...\né"},
		{"binary is left alone", 4, "\x80\x80\x80\x80\x80\x80", "\x80\x80\n... 2 bytes omitted ...\n\x80\x80"},
	}
	for _, tt := range tests {
		// Every chunking of the same data gives the same result.
		for _, chunk := range []int{1, 2, 3, 4, 7, 11, 100} {
			b := newCapBuffer(tt.limit)
			for i := 0; i < len(tt.data); i += chunk {
				n, err := b.Write([]byte(tt.data[i:min(i+chunk, len(tt.data))]))
				require.NoError(t, err)
				require.Equal(t, min(chunk, len(tt.data)-i), n)
			}
			require.Equal(t, tt.want, b.String(), "%s, chunks of %d", tt.name, chunk)
			require.Equal(t, int64(len(tt.data)), b.Total())
		}
	}
}

func TestCapBufferSection(t *testing.T) {
	b := newCapBuffer(4)
	require.Equal(t, "no output", b.section())
	_, _ = b.Write([]byte("ab"))
	require.Equal(t, "output (2 bytes, stdout and stderr combined):\nab", b.section())
	_, _ = b.Write([]byte("cdefg"))
	require.Equal(t, "output (7 bytes, stdout and stderr combined; only the first 2 and the last 2 are shown):\nab\n... 3 bytes omitted ...\nfg", b.section())
}
