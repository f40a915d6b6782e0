package text

import (
	"fmt"
	"strings"
	"unicode"
)

// Hidden reports whether r would change how text around it looks, or act
// on a terminal, without being seen itself: control characters but tab
// and newline (the ASCII ones, DEL and the 8-bit ones), format characters (bidi overrides, isolates
// and marks, zero-width characters, the byte order mark, soft hyphens,
// tag characters), line and paragraph separators, spaces other than the
// plain space (a no-break space looks like a word break that a shell does
// not make), variation selectors, private-use and unassigned code points,
// and the letters and marks that draw nothing (Hangul fillers, the
// combining grapheme joiner, Khmer's inherent vowels, the braille blank).
func Hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return false
	case r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0 || r == 0x034F ||
		r == 0x17B4 || r == 0x17B5 || r == 0x2800:
		return true
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Variation_Selector):
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// Visible is s with every Hidden character written as its code point,
// \uXXXX (or \UXXXXXXXX past the first plane), as Go and JSON escape it:
// what a person reads before deciding is what runs (T14).
func Visible(s string) string {
	if strings.IndexFunc(s, Hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !Hidden(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
