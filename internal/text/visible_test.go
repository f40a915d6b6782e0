package text

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tabs\tand\nlines":       "plain text, tabs\tand\nlines",
		"accents: é, ü, 日本語, עברית, emoji 🙂": "accents: é, ü, 日本語, עברית, emoji 🙂",
		"rm -rf ~ #\u202esafe":               `rm -rf ~ #\u202esafe`,
		"a\u00a0b\u3000c":                    `a\u00a0b\u3000c`,
		"tag\U000E0041s":                     `tag\U000e0041s`,
		"esc\x1b[2Jcsi\u009bdel\x7f":         `esc\u001b[2Jcsi\u009bdel\u007f`,
		"fill\u3164er, zw\u200bsp":           `fill\u3164er, zw\u200bsp`,
		"bad \uFFFD stays":                   "bad \uFFFD stays",
	} {
		require.Equal(t, want, Visible(in), "%q", in)
	}
}
