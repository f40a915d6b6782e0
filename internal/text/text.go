// Package text cuts text to a size without splitting a UTF-8 character:
// truncation, head and tail capping, previews and capped writers; the edit
// distance that suggests the closest known name; what a plain name is
// (PlainName) and an error's innermost message (RootMessage); one copy each.
package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CutIndex is the length of the longest prefix of s that has at most n
// bytes and does not end inside a multi-byte character: len(s) when s fits,
// 0 when n <= 0.
func CutIndex(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Cut returns s cut to at most n bytes at a character boundary.
func Cut(s string, n int) string { return s[:CutIndex(s, n)] }

// CutStart returns the end of s cut to at most n bytes at a character
// boundary: the tail counterpart of Cut.
func CutStart(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Truncate returns s as it is when it fits in n bytes; otherwise s cut at a
// character boundary (Cut) followed by note(the number of bytes cut). The
// note does not count towards n.
func Truncate(s string, n int, note func(cut int) string) string {
	c := CutIndex(s, n)
	if c == len(s) {
		return s
	}
	return s[:c] + note(len(s)-c)
}

// MoreBytes is the usual note of Truncate: "\n[output truncated: N more bytes]".
func MoreBytes(cut int) string { return fmt.Sprintf("\n[output truncated: %d more bytes]", cut) }

// HeadTail returns s as it is when it fits in n bytes; otherwise its first
// n/2 and last n-n/2 bytes, at character boundaries, joined by a line that
// says how many bytes were left out (see Writer.String).
func HeadTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := Cut(s, n/2)
	tail := CutStart(s, n-n/2)
	return headTail(head, tail, int64(len(s)-len(head)-len(tail)))
}

func headTail[T string | []byte](head, tail T, omitted int64) string {
	return fmt.Sprintf("%s\n... %d bytes omitted ...\n%s", head, omitted, tail)
}

// Preview is s on one line (every run of white space folded to a space),
// cut at a character boundary so that it and the "..." that marks a cut fit
// in n bytes.
func Preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return Cut(s, n-len("...")) + "..."
}

// TrimPartialRune drops a character cut short at the end of b. Bytes that
// are not UTF-8 at all are left as they are.
func TrimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return b
			}
			return b[:i]
		}
	}
	return b
}

// TrimPartialRuneStart drops the continuation bytes of a character cut at
// the start of b. Bytes that are not UTF-8 at all are left as they are.
func TrimPartialRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
