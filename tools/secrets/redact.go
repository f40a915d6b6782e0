package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	txt "github.com/toolround/toolround/internal/text"
)

// MinValueChars is the shortest value store_secret accepts. Redaction
// replaces every occurrence of a value, in every encoding: a value of one or
// a few characters would be found everywhere and would destroy every result
// it is redacted from, so it is refused instead.
const MinValueChars = 8

// Redactor replaces stored values in text with [secret:NAME], in every form
// a server or a tool is likely to give them back: raw; JSON-escaped (\" \\
// \/ \uXXXX in either case, surrogate pairs), \xHH and octal \ooo escapes;
// percent-encoded (path, query, form with + for space); HTML-escaped (named,
// decimal and hex entities); hex in either case, its bytes together or
// apart by ':', '-', ' ' or '+'; base64 in the standard and URL alphabets,
// padded or not, on its own or inside a longer base64 text such as that of
// "user:value"; base32 in the standard and hex alphabets (upper case),
// padded or not; the value in UTF-16 (either byte order) under any of these
// binary encodings.
//
// The depth is stated: a value is found under any two of these encodings
// one inside the other (base64 of base64, hex of base64, percent-encoded
// base64, base64 of JSON, base32 of hex, ...), and under three when the
// innermost is hex or base64 of the value. A binary encoding is read only
// while what it decodes to is text (mostly printable ASCII, or UTF-8, or
// UTF-16): a value inside an image, a compressed or encrypted body, or any
// other binary data is not promised, nor one cut into pieces.
//
// A nil *Redactor redacts nothing.
type Redactor struct {
	items    []item
	margin   int
	minBytes int // the length of the shortest pattern
}

type item struct {
	name     string
	patterns []pattern
}

// pattern is a literal form of a value searched for in every decoded view
// of the text. A base64 form found inside a longer base64 text also takes
// the character it shares with its neighbours on each side.
type pattern struct {
	text        string
	left, right bool
	base64      bool // takes the padding that follows
}

// NewRedactor returns a redactor of values, keyed by secret name. Empty
// values are ignored; nil when none is left.
func NewRedactor(values map[string]string) *Redactor {
	names := make([]string, 0, len(values))
	for name, v := range values {
		if v != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	// Longer values first, so that a value holding another is named as itself.
	sort.Slice(names, func(i, j int) bool {
		if a, b := len(values[names[i]]), len(values[names[j]]); a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	r := &Redactor{}
	for _, name := range names {
		v := values[name]
		it := item{name: name, patterns: patternsOf(v)}
		r.items = append(r.items, it)
		r.margin = max(r.margin, maxExpansion*len(v)+64)
		for _, p := range it.patterns {
			if r.minBytes == 0 || len(p.text) < r.minBytes {
				r.minBytes = len(p.text)
			}
		}
	}
	return r
}

// maxExpansion bounds how many bytes of text one byte of a value takes in
// the encodings the redactor reads (a byte inside a percent-encoded JSON
// \u escape takes 8, an HTML hex entity of a JSON escape 10).
const maxExpansion = 12

// Margin is how many bytes past a cut a reader must have read so that no
// value that starts before the cut is itself cut (see RedactPrefix).
func (r *Redactor) Margin() int {
	if r == nil {
		return 0
	}
	return r.margin
}

// Redact returns text with every value replaced by [secret:NAME].
func (r *Redactor) Redact(text string) string {
	return r.RedactPrefix(text, len(text))
}

// RedactPrefix redacts text and returns what stood in its first n bytes. A
// value that starts before n and ends after it is replaced whole, so that
// cutting never leaves the start of a value behind; text should run at
// least Margin bytes past n (when there is that much) for this to hold.
func (r *Redactor) RedactPrefix(text string, n int) string {
	n = txt.CutIndex(text, n)
	if r == nil {
		return text[:n]
	}
	spans := r.find(text)
	var b strings.Builder
	at := 0
	for _, s := range spans {
		if s.from >= n {
			break
		}
		b.WriteString(text[at:s.from])
		b.WriteString("[secret:" + s.name + "]")
		at = s.to
	}
	if at < n {
		b.WriteString(text[at:n])
	}
	return b.String()
}

// Contains reports whether text holds a value in any encoding Redact finds.
func (r *Redactor) Contains(text string) bool {
	return r != nil && len(r.find(text)) > 0
}

type span struct {
	from, to int
	name     string
}

// find returns the spans of text that hold a value, sorted and merged.
func (r *Redactor) find(text string) []span {
	var spans []span
	for _, v := range views(text, r.minBytes) {
		for _, it := range r.items {
			for _, p := range it.patterns {
				spans = v.search(p, it.name, spans)
			}
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	merged := spans[:1]
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if s.from < last.to {
			last.to = max(last.to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// patternsOf lists the literal forms of v searched in every view.
func patternsOf(v string) []pattern {
	seen := map[string]bool{}
	var out []pattern
	add := func(p pattern) {
		if p.text == "" || seen[p.text] {
			return
		}
		seen[p.text] = true
		out = append(out, p)
	}
	add(pattern{text: v})
	add(pattern{text: strings.ReplaceAll(v, " ", "+")}) // a form's + for a space
	// UTF-16 in either byte order, as a binary view (hex, base64) gives it.
	add(pattern{text: utf16Of(v, false)})
	add(pattern{text: utf16Of(v, true)})
	h := hex.EncodeToString([]byte(v))
	add(pattern{text: h})
	add(pattern{text: strings.ToUpper(h)})
	// A value inside a longer base64 text starts at one of three offsets in
	// a 3-byte group. Its characters that depend on the value alone are the
	// same whatever surrounds it; the one it shares with a neighbour on each
	// side goes with it.
	// The base64 of a JSON text (a token's payload) holds the value
	// JSON-escaped.
	for _, form := range uniq(v, jsonContent(v, true), jsonContent(v, false)) {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				full := enc.EncodeToString(append(make([]byte, k), form...))
				from := (8*k + 5) / 6
				to := (8*k + 8*len(form)) / 6
				if to-from < 4 {
					continue
				}
				add(pattern{text: full[from:to], left: (8*k)%6 != 0, right: (8*k+8*len(form))%6 != 0, base64: true})
			}
		}
	}
	return out
}

// jsonContent is v as the content of a JSON string.
func jsonContent(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(v) != nil {
		return v
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// utf16Of is v in UTF-16, little- or big-endian.
func utf16Of(v string, big bool) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(v)) {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

func uniq(forms ...string) []string {
	var out []string
	for _, f := range forms {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}
