package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func render(d []DiffLine) string {
	var b strings.Builder
	for _, l := range d {
		b.WriteByte(l.Op)
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"create", "", "a\nb\n", "+a\n+b\n"},
		{"same", "a\nb", "a\nb", " a\n b\n"},
		{"change middle", "a\nb\nc\n", "a\nB\nc\n", " a\n-b\n+B\n c\n"},
		{"insert", "a\nc", "a\nb\nc", " a\n+b\n c\n"},
		{"delete all", "x\ny", "", "-x\n-y\n"},
		{"reorder", "a\nb\nc\nd", "b\na\nd\nc", "-a\n b\n-c\n+a\n d\n+c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, render(Diff(tc.old, tc.new)))
		})
	}
}

func TestDiffLargeFallsBack(t *testing.T) {
	var a, b []string
	for i := range 3000 {
		a = append(a, "old"+strings.Repeat("x", i%7))
		b = append(b, "new"+strings.Repeat("y", i%5))
	}
	d := Diff(strings.Join(a, "\n"), strings.Join(b, "\n"))
	require.Len(t, d, 6000)
	require.Equal(t, byte('-'), d[0].Op)
	require.Equal(t, byte('+'), d[5999].Op)
}
