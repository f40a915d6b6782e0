package text

import "strings"

// EditDistance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and swaps of neighbours.
func EditDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Closest is the name of known closest to name (case aside) within a few
// edits, a third of the longer name's length from one to three; "" when
// none is that close. It is the "did you mean" of every input error.
func Closest(name string, known []string) string {
	return ClosestWithin(name, known, func(a, b string) int { return min(max(max(len(a), len(b))/3, 1), 3) })
}

// ClosestWithin is Closest with limit giving, for name and a known name,
// how many edits apart they may be.
func ClosestWithin(name string, known []string, limit func(name, known string) int) string {
	best, bestD := "", -1
	for _, k := range known {
		d := EditDistance(strings.ToLower(name), strings.ToLower(k))
		if d <= limit(name, k) && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}
