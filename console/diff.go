package console

import "strings"

// DiffLine is one line of a line diff: Op is ' ' (kept), '-' (removed) or
// '+' (added).
type DiffLine struct {
	Op   byte
	Text string
}

// maxDiffCells bounds the LCS table; larger inputs are shown as all of the
// old text removed and all of the new text added.
const maxDiffCells = 4 << 20

// Diff is the line diff of old and new text by longest common subsequence,
// with common leading and trailing lines trimmed first.
func Diff(oldText, newText string) []DiffLine {
	a, b := splitLines(oldText), splitLines(newText)
	var head, tail []DiffLine
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		head = append(head, DiffLine{' ', a[0]})
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		tail = append([]DiffLine{{' ', a[len(a)-1]}}, tail...)
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	out := head
	if (len(a)+1)*(len(b)+1) > maxDiffCells {
		for _, l := range a {
			out = append(out, DiffLine{'-', l})
		}
		for _, l := range b {
			out = append(out, DiffLine{'+', l})
		}
		return append(out, tail...)
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffLine{' ', a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, DiffLine{'-', a[i]})
			i++
		default:
			out = append(out, DiffLine{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, DiffLine{'-', a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, DiffLine{'+', b[j]})
	}
	return append(out, tail...)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
