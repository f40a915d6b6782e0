package decision

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// page builds a document of n filler paragraphs with the given paragraphs
// inserted at their indexes.
func page(n int, insert map[int]string) string {
	var paras []string
	for i := range n {
		if p, ok := insert[i]; ok {
			paras = append(paras, p)
			continue
		}
		paras = append(paras, fmt.Sprintf("Filler paragraph %d talks about weather, gardens and the colour of autumn leaves in some detail.", i))
	}
	return strings.Join(paras, "\n\n")
}

func TestExtractiveFilter(t *testing.T) {
	e := Extractive{MaxChars: 1000, PassThroughChars: 200}
	doc := page(60, map[int]string{
		10: "Pricing: the Pro plan costs 20 dollars a month.",
		40: "Enterprise pricing is negotiated; the plan includes support.",
	})
	tests := []struct {
		name    string
		query   string
		content string
		want    []string // substrings, in this order
		notWant []string
	}{
		{
			name:    "short content passes through",
			query:   "pricing",
			content: "A short page about nothing much.",
			want:    []string{"A short page about nothing much."},
		},
		{
			name:    "matching passages kept in original order",
			query:   "Pricing plans",
			content: doc,
			want:    []string{"[kept 2 of 60 passages for \"Pricing plans\"]", "Pro plan costs 20", "[…]", "Enterprise pricing"},
			notWant: []string{"Filler paragraph"},
		},
		{
			name:    "empty query keeps the head",
			query:   "  ",
			content: doc,
			want:    []string{"Filler paragraph 0 ", "more characters not shown]"},
			notWant: []string{"Enterprise pricing"},
		},
		{
			name:    "no match shows the start with a note",
			query:   "kubernetes",
			content: doc,
			want:    []string{"[no passage mentions \"kubernetes\"; showing the start of the content]", "Filler paragraph 0 "},
		},
		{
			name:    "stop words alone are no query",
			query:   "what is the",
			content: doc,
			want:    []string{"Filler paragraph 0 "},
			notWant: []string{"[kept"},
		},
		{
			name:    "plural query meets singular text",
			query:   "prices",
			content: page(40, map[int]string{25: "The price list is below."}),
			want:    []string{"The price list is below."},
			notWant: []string{"Filler paragraph"},
		},
		{
			name:    "Chinese query matches Chinese text",
			query:   "價格",
			content: page(40, map[int]string{5: "本產品的價格是每月二十元。"}),
			want:    []string{"本產品的價格是每月二十元。"},
			notWant: []string{"Filler paragraph"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Filter(context.Background(), tt.query, tt.content)
			require.NoError(t, err)
			require.LessOrEqual(t, len(got), 1000)
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				require.GreaterOrEqual(t, i, 0, "want %q (in order) in:\n%s", w, got)
				rest = rest[i+len(w):]
			}
			for _, nw := range tt.notWant {
				require.NotContains(t, got, nw)
			}
		})
	}
}

func TestExtractiveRanksRarerAndMoreTerms(t *testing.T) {
	// Only one passage fits: the one holding both terms must win over those
	// repeating one common term.
	e := Extractive{MaxChars: 160, PassThroughChars: 10}
	doc := page(30, map[int]string{
		3:  "Go go go: the word go, again go, and go.",
		12: "Install the Go toolchain with the official installer.",
		20: "Go is fun. Go is fast.",
	})
	got, err := e.Filter(context.Background(), "go installer", doc)
	require.NoError(t, err)
	require.Contains(t, got, "official installer")
	require.NotContains(t, got, "Go go go")
}

func TestExtractiveStaysWithinBound(t *testing.T) {
	huge := strings.Repeat("x", 50_000) // one word, no place to cut
	words := strings.Repeat("alpha beta gamma ", 5000)
	lines := strings.Repeat("alpha line\n", 6000)
	for _, max := range []int{300, 1000, 6000} {
		e := Extractive{MaxChars: max}
		for _, content := range []string{huge, words, lines, "é" + strings.Repeat("語", 20_000)} {
			for _, q := range []string{"", "alpha", "語", "x"} {
				got, err := e.Filter(context.Background(), q, content)
				require.NoError(t, err)
				require.LessOrEqual(t, len(got), max, "max %d query %q", max, q)
				require.True(t, utf8Valid(got), "cut inside a character")
				require.NotEmpty(t, got)
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestSplitBoundsPassages(t *testing.T) {
	content := strings.Repeat("word ", 1000) + "\n\n" + strings.Repeat("a line\n", 400) + "\n\nlast"
	ps := split(content)
	require.Greater(t, len(ps), 3)
	for _, p := range ps {
		require.LessOrEqual(t, len(p), passageChars)
		require.NotEmpty(t, p)
	}
	require.Equal(t, "last", ps[len(ps)-1])
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What is the PRICE of Libraries?", []string{"price", "library"}},
		{"running tests", []string{"runn", "test"}},
		{"class access", []string{"class", "access"}},
		{"價格表", []string{"價格", "格表"}},
		{"Go 1.26 release", []string{"go", "26", "release"}},
		{"", nil},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, terms(tt.in), tt.in)
	}
}
