package text

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// "é" is 2 bytes, "€" 3 and "😀" 4.

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"", 5, ""},
		{"abc", -1, ""},
		{"abc", 0, ""},
		{"abc", 2, "ab"},
		{"abc", 3, "abc"},
		{"abc", 4, "abc"},
		{"aé", 1, "a"},
		{"aé", 2, "a"}, // inside é
		{"aé", 3, "aé"},
		{"€", 1, ""},
		{"€", 2, ""},
		{"x€y", 3, "x"},
		{"x€y", 4, "x€"},
		{"😀😀", 7, "😀"},
		{"😀😀", 8, "😀😀"},
	} {
		t.Run(fmt.Sprintf("%q/%d", tc.s, tc.n), func(t *testing.T) {
			got := Cut(tc.s, tc.n)
			require.Equal(t, tc.want, got)
			require.Equal(t, len(got), CutIndex(tc.s, tc.n))
			require.True(t, utf8.ValidString(got))
		})
	}
}

func TestCutStart(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 0, ""},
		{"abc", -2, ""},
		{"abc", 2, "bc"},
		{"abc", 3, "abc"},
		{"éa", 2, "a"}, // would start inside é
		{"éa", 3, "éa"},
		{"a😀", 4, "😀"},
		{"a😀", 3, ""},
	} {
		t.Run(fmt.Sprintf("%q/%d", tc.s, tc.n), func(t *testing.T) {
			require.Equal(t, tc.want, CutStart(tc.s, tc.n))
		})
	}
}

func TestTruncate(t *testing.T) {
	note := func(c int) string { return fmt.Sprintf("+%d", c) }
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc+1"},
		{"ab€", 3, "ab+3"},
		{"ab€", 0, "+5"},
	} {
		require.Equal(t, tc.want, Truncate(tc.s, tc.n, note), "%q/%d", tc.s, tc.n)
	}
	require.Equal(t, "ab\n[output truncated: 3 more bytes]", Truncate("ab€", 4, MoreBytes))
}

func TestHeadTail(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abcdef", 6, "abcdef"},
		{"abcdefgh", 6, "abc\n... 2 bytes omitted ...\nfgh"},
		{"abcdefg", 5, "ab\n... 2 bytes omitted ...\nefg"},
		// The head would end inside €; the tail starts right at é.
		{"a€bcdéz", 5, "a\n... 6 bytes omitted ...\néz"},
		// The head would end inside € and the tail start inside é.
		{"a€bcdéz", 4, "a\n... 8 bytes omitted ...\nz"},
	} {
		require.Equal(t, tc.want, HeadTail(tc.s, tc.n), "%q/%d", tc.s, tc.n)
	}
}

func TestPreview(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 10, ""},
		{"  a \n\t b  ", 10, "a b"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcdefg..."},
		{"abcdef€gh", 9, "abcdef..."},
		{"abcde€fgh", 9, "abcde..."}, // € does not fit before the dots
		{"abcd", 2, "..."},
	} {
		require.Equal(t, tc.want, Preview(tc.s, tc.n), "%q/%d", tc.s, tc.n)
	}
}

func TestTrimPartialRune(t *testing.T) {
	euro := []byte("€")
	for _, tc := range []struct {
		in, end, start string
	}{
		{"", "", ""},
		{"abc", "abc", "abc"},
		{"a" + string(euro[:2]), "a", "a" + string(euro[:2])},
		{string(euro[1:]) + "b", string(euro[1:]) + "b", "b"},
		{"a€", "a€", "a€"},
		{"\xff\xff", "\xff\xff", "\xff\xff"},
	} {
		require.Equal(t, tc.end, string(TrimPartialRune([]byte(tc.in))), "end of %q", tc.in)
		require.Equal(t, tc.start, string(TrimPartialRuneStart([]byte(tc.in))), "start of %q", tc.in)
	}
}

func write(w *Writer, chunks ...string) {
	for _, c := range chunks {
		n, err := w.Write([]byte(c))
		if err != nil || n != len(c) {
			panic(fmt.Sprintf("write %q: %d, %v", c, n, err))
		}
	}
}

func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w         *Writer
		chunks    []string
		want      string
		truncated bool
	}{
		{"empty", NewWriter(4), nil, "", false},
		{"exact", NewWriter(4), []string{"ab", "cd"}, "abcd", false},
		{"over", NewWriter(4), []string{"ab", "cdef"}, "abcd\n[output truncated: 2 more bytes]", true},
		{"rune at the cut", NewWriter(4), []string{"abc€"}, "abc\n[output truncated: 3 more bytes]", true},
		{"zero", NewWriter(0), []string{"ab"}, "\n[output truncated: 2 more bytes]", true},
		{"head tail fits", NewHeadTailWriter(6), []string{"abc", "def"}, "abcdef", false},
		{"head tail over", NewHeadTailWriter(6), []string{"ab", "cdefg", "hij"}, "abc\n... 4 bytes omitted ...\nhij", true},
		{"head tail one big write", NewHeadTailWriter(6), []string{strings.Repeat("x", 100) + "end"}, "xxx\n... 97 bytes omitted ...\nend", true},
		{"head tail many small writes", NewHeadTailWriter(4), strings.Split("abcdefghijklmnopqrstuvwxyz", ""), "ab\n... 22 bytes omitted ...\nyz", true},
		{"head tail runes at both cuts", NewHeadTailWriter(4), []string{"a€", "xx", "éz"}, "a\n... 7 bytes omitted ...\nz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.w, tc.chunks...)
			require.Equal(t, tc.want, tc.w.String())
			require.Equal(t, tc.truncated, tc.w.Truncated())
			require.Equal(t, int64(len(strings.Join(tc.chunks, ""))), tc.w.Total())
		})
	}
}

func TestHeadTailWriterKeepsBoundedMemory(t *testing.T) {
	w := NewHeadTailWriter(8)
	for i := 0; i < 1000; i++ {
		write(w, fmt.Sprintf("%03d", i%1000))
		require.LessOrEqual(t, cap(w.tail), 64)
	}
	require.Equal(t, "0000\n... 2992 bytes omitted ...\n8999", w.String())
	require.Equal(t, "0000", string(w.Head()))
	require.Equal(t, "8999", string(w.Tail()))
}

func TestStrictWriter(t *testing.T) {
	w := NewStrictWriter(4)
	write(w, "ab", "cd")
	n, err := w.Write([]byte("e"))
	require.ErrorIs(t, err, ErrFull)
	require.Zero(t, n)
	require.Equal(t, "abcd", w.String())
	require.False(t, w.Truncated())

	w = NewStrictWriter(3)
	_, err = w.Write([]byte("abcd"))
	require.ErrorIs(t, err, ErrFull)
	require.Equal(t, "", w.String())
}
