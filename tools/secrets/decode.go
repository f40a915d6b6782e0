package secrets

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// view is text decoded by one or two escape schemes, with where each of its
// bytes came from in the original text, so that a value found in the view
// is replaced in the original. The identity view has nil start and end.
type view struct {
	text       string
	start, end []int32 // start[i], end[i]: the original bytes that gave byte i
}

func (v *view) origin(i, j int) (int, int) {
	if v.start == nil {
		return i, j
	}
	return int(v.start[i]), int(v.end[j-1])
}

// search appends the original spans of p's occurrences in the view.
func (v *view) search(p pattern, name string, spans []span) []span {
	text := v.text
	for at := 0; ; {
		k := strings.Index(text[at:], p.text)
		if k < 0 {
			return spans
		}
		i, j := at+k, at+k+len(p.text)
		if p.left && i > 0 && isBase64Char(text[i-1]) {
			i--
		}
		if p.right && j < len(text) && isBase64Char(text[j]) {
			j++
		}
		for pad := 0; p.base64 && pad < 2 && j < len(text) && text[j] == '='; pad++ {
			j++
		}
		from, to := v.origin(i, j)
		spans = append(spans, span{from: from, to: to, name: name})
		at += k + 1
	}
}

// decoder decodes one escape scheme leniently: anything that is not a
// valid escape stays as it is.
type decoder struct {
	leader string // the text holds an escape only if it holds one of these
	decode func(src string, out *builder)
}

// A + for a space (forms, query strings) is not decoded: the value with
// + for its spaces is one of the patterns instead, which spares a view.
var decoders = []decoder{
	{leader: `\`, decode: decodeJSON},
	{leader: `%`, decode: decodePercent},
	{leader: `&`, decode: decodeHTML},
}

// views returns text itself and its decodings by one scheme and by two in
// a row (such as JSON escapes inside a percent-encoded query), skipping
// schemes whose escapes the text does not hold.
func views(text string) []*view {
	out := []*view{{text: text}}
	level := out
	for range 2 {
		var next []*view
		for _, parent := range level {
			for _, d := range decoders {
				if !strings.Contains(parent.text, d.leader) {
					continue
				}
				if v := decodeView(parent, d); v != nil {
					next = append(next, v)
				}
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

func decodeView(parent *view, d decoder) *view {
	b := &builder{start: make([]int32, 0, len(parent.text)), end: make([]int32, 0, len(parent.text))}
	b.text.Grow(len(parent.text))
	d.decode(parent.text, b)
	if !b.changed {
		return nil
	}
	v := &view{text: b.text.String(), start: b.start, end: b.end}
	if parent.start != nil {
		for i := range v.start {
			v.start[i] = parent.start[v.start[i]]
			v.end[i] = parent.end[v.end[i]-1]
		}
	}
	return v
}

// builder collects decoded bytes and where each came from.
type builder struct {
	text       strings.Builder
	start, end []int32
	changed    bool
}

func (b *builder) emit(s string, from, to int) {
	b.text.WriteString(s)
	for range len(s) {
		b.start = append(b.start, int32(from))
		b.end = append(b.end, int32(to))
	}
	if to-from != len(s) {
		b.changed = true
	}
}

func (b *builder) emitRune(r rune, from, to int) {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	b.emit(string(buf[:n]), from, to)
}

// decodeJSON decodes the escapes of JSON strings (and \xHH), wherever they
// are: a reader that looks for a value cares about content, not syntax.
func decodeJSON(s string, out *builder) {
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			out.emit(s[i:i+1], i, i+1)
			i++
			continue
		}
		switch c := s[i+1]; c {
		case '"', '\\', '/', '\'':
			out.emit(string(c), i, i+2)
			i += 2
		case 'b', 'f', 'n', 'r', 't':
			out.emit(string("\b\f\n\r\t"[strings.IndexByte("bfnrt", c)]), i, i+2)
			i += 2
		case 'u':
			r, ok := hexValue(s, i+2, 4)
			if !ok {
				out.emit(`\`, i, i+1)
				i++
				continue
			}
			n := 6
			if utf16.IsSurrogate(rune(r)) {
				if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
					if lo, ok := hexValue(s, i+8, 4); ok {
						if p := utf16.DecodeRune(rune(r), rune(lo)); p != utf8.RuneError {
							r, n = int(p), 12
						}
					}
				}
			}
			out.emitRune(rune(r), i, i+n)
			i += n
		case 'x':
			v, ok := hexValue(s, i+2, 2)
			if !ok {
				out.emit(`\`, i, i+1)
				i++
				continue
			}
			out.emit(string([]byte{byte(v)}), i, i+4)
			i += 4
		default:
			out.emit(`\`, i, i+1)
			i++
		}
	}
}

// decodePercent decodes %HH.
func decodePercent(s string, out *builder) {
	for i := 0; i < len(s); {
		if s[i] == '%' {
			if v, ok := hexValue(s, i+1, 2); ok {
				out.emit(string([]byte{byte(v)}), i, i+3)
				i += 3
				continue
			}
		}
		out.emit(s[i:i+1], i, i+1)
		i++
	}
}

var htmlEntities = map[string]string{
	"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'",
	"AMP": "&", "LT": "<", "GT": ">", "QUOT": `"`, "nbsp": "\u00a0",
}

// decodeHTML decodes numeric character references and the entities that
// escaping functions produce.
func decodeHTML(s string, out *builder) {
	for i := 0; i < len(s); {
		if s[i] == '&' {
			if r, n, ok := htmlEntity(s[i:]); ok {
				out.emit(r, i, i+n)
				i += n
				continue
			}
		}
		out.emit(s[i:i+1], i, i+1)
		i++
	}
}

// htmlEntity reads one entity at the start of s ("&..."): its text and
// length. The ';' may be missing, as browsers allow.
func htmlEntity(s string) (string, int, bool) {
	if len(s) > 2 && s[1] == '#' {
		base, j := 10, 2
		if s[2] == 'x' || s[2] == 'X' {
			base, j = 16, 3
		}
		v, start := 0, j
		for j < len(s) && j-start < 10 {
			d := digitValue(s[j], base)
			if d < 0 {
				break
			}
			v = v*base + d
			j++
		}
		if j == start || v == 0 || v > utf8.MaxRune || utf16.IsSurrogate(rune(v)) {
			return "", 0, false
		}
		if j < len(s) && s[j] == ';' {
			j++
		}
		return string(rune(v)), j, true
	}
	for name, text := range htmlEntities {
		if strings.HasPrefix(s[1:], name) {
			n := 1 + len(name)
			if n < len(s) && s[n] == ';' {
				n++
			}
			return text, n, true
		}
	}
	return "", 0, false
}

func hexValue(s string, at, n int) (int, bool) {
	if at+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[at : at+n]) {
		d := digitValue(c, 16)
		if d < 0 {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func digitValue(c byte, base int) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case base == 16 && c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case base == 16 && c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
