package decision

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolround/toolround/internal/text"
)

// Extractive keeps the passages of the content that share the most terms with
// the query, in their original order, up to MaxChars. It needs no model and
// gives the same answer for the same input. The zero value uses the defaults
// of Config.
type Extractive struct {
	// MaxChars bounds the result. Default 6000.
	MaxChars int
	// PassThroughChars: content this short is returned unchanged. Default 1500.
	PassThroughChars int
}

// passageChars bounds one passage, so that a page without blank lines still
// splits into pieces that can be chosen one by one.
const passageChars = 800

func (e Extractive) limits() (maxChars, passThrough int) {
	maxChars, passThrough = e.MaxChars, e.PassThroughChars
	if maxChars <= 0 {
		maxChars = defaultMaxChars
	}
	if passThrough <= 0 {
		passThrough = defaultPassThroughChars
	}
	return maxChars, min(passThrough, maxChars)
}

// Filter never fails; the error is there to satisfy Filter.
func (e Extractive) Filter(_ context.Context, query, content string) (string, error) {
	return e.filter(query, content), nil
}

func (e Extractive) filter(query, content string) string {
	maxChars, passThrough := e.limits()
	content = strings.TrimSpace(content)
	if len(content) <= passThrough {
		return content
	}
	qterms := unique(terms(query))
	if len(qterms) == 0 {
		return head(content, maxChars)
	}
	passages := split(content)
	scores := score(qterms, passages)

	order := make([]int, 0, len(passages))
	for i, s := range scores {
		if s > 0 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		note := fmt.Sprintf("[no passage mentions %q; showing the start of the content]\n\n", query)
		return note + head(content, maxChars-len(note))
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })

	// The note is counted in the bound so that the whole result stays within it.
	budget := maxChars - 80 - len(query)
	keep := make([]bool, len(passages))
	kept, used := 0, 0
	for _, i := range order {
		cost := len(passages[i]) + len("\n\n[…]\n\n")
		if used+cost > budget {
			continue
		}
		keep[i] = true
		kept++
		used += cost
	}
	if kept == 0 {
		// The best passage alone is larger than the bound: keep its start.
		best := order[0]
		return fmt.Sprintf("[kept the start of the best of %d passages for %q]\n\n", len(passages), query) +
			text.Cut(passages[best], max(budget, 0))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[kept %d of %d passages for %q]\n\n", kept, len(passages), query)
	last := -1
	for i, p := range passages {
		if !keep[i] {
			continue
		}
		if last >= 0 {
			if i != last+1 {
				b.WriteString("\n\n[…]\n\n")
			} else {
				b.WriteString("\n\n")
			}
		}
		b.WriteString(p)
		last = i
	}
	return b.String()
}

// head returns the start of content within maxChars, cut at a paragraph,
// line or word boundary where one is near, with a note of what was left out.
func head(content string, maxChars int) string {
	if len(content) <= maxChars {
		return content
	}
	note := func(rest int) string { return fmt.Sprintf("\n\n[… %d more characters not shown]", rest) }
	limit := max(maxChars-len(note(len(content))), 0)
	cut := text.CutIndex(content, limit)
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(content[:cut], sep); i > limit/2 {
			cut = i
			break
		}
	}
	return strings.TrimRight(content[:cut], " \n") + note(len(content)-cut)
}

// split cuts content into passages: paragraphs separated by blank lines,
// with long paragraphs cut at line ends, and long lines at spaces.
func split(content string) []string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if len(para) <= passageChars {
			out = append(out, para)
			continue
		}
		var cur strings.Builder
		flush := func() {
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
		for _, line := range strings.Split(para, "\n") {
			for _, piece := range splitLine(line) {
				if cur.Len() > 0 && cur.Len()+len(piece)+1 > passageChars {
					flush()
				}
				if cur.Len() > 0 {
					cur.WriteByte('\n')
				}
				cur.WriteString(piece)
			}
		}
		flush()
	}
	return out
}

func splitLine(line string) []string {
	var out []string
	for len(line) > passageChars {
		cut := text.CutIndex(line, passageChars)
		if i := strings.LastIndexByte(line[:cut], ' '); i > passageChars/2 {
			cut = i
		}
		if cut == 0 {
			cut = len(line)
		}
		out = append(out, strings.TrimSpace(line[:cut]))
		line = strings.TrimSpace(line[cut:])
	}
	return append(out, line)
}

// score weighs each passage by the query terms it holds: rarer terms count
// more (inverse document frequency), repeats count a little, and a passage
// holding more of the distinct terms wins over one repeating a single term.
func score(qterms []string, passages []string) []float64 {
	counts := make([]map[string]int, len(passages))
	df := map[string]int{}
	for i, p := range passages {
		c := map[string]int{}
		for _, t := range terms(p) {
			c[t]++
		}
		counts[i] = c
		for _, q := range qterms {
			if c[q] > 0 {
				df[q]++
			}
		}
	}
	n := float64(len(passages))
	out := make([]float64, len(passages))
	for i, c := range counts {
		var s float64
		distinct := 0
		for _, q := range qterms {
			tf := c[q]
			if tf == 0 {
				continue
			}
			distinct++
			s += math.Log(1+n/float64(df[q])) * (1 + math.Log(float64(tf)))
		}
		out[i] = s * float64(distinct)
	}
	return out
}

// terms returns the normalised words of s, stop words left out. Letters of
// scripts written without spaces (Han, Kana, Hangul) become overlapping
// pairs, so that a Chinese query still matches Chinese text.
func terms(s string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			w := string(word)
			if len(w) > 1 && !stopWords[w] {
				out = append(out, stem(w))
			}
			word = word[:0]
		}
	}
	flushCJK := func() {
		switch {
		case len(cjk) == 1:
			out = append(out, string(cjk))
		case len(cjk) > 1:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

func unique(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// stem strips a few English endings so that "prices" meets "price" and
// "libraries" meets "library"; it is not a full stemmer.
func stem(w string) string {
	for _, suf := range []string{"ies", "ing", "s"} {
		if strings.HasSuffix(w, suf) && !strings.HasSuffix(w, "ss") && utf8.RuneCountInString(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" {
				w += "y"
			}
			break
		}
	}
	return w
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have how i if in into is it its
		of on or that the their there these this to was what when where which who why will with you your
		do does did can could should would about me my we our they them he she his her not no yes so than then`) {
		m[w] = true
	}
	return m
}()
