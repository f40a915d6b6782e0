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

// decoder decodes one scheme leniently: anything that is not a valid
// escape stays as it is. A binary decoder (radix) gives only what it
// decoded, the runs of its digits, one after another.
type decoder struct {
	leader string // the text holds an escape only if it holds one of these
	decode func(src string, out *builder)
	radix  *radix
}

// A + for a space (forms, query strings) is not decoded: the value with
// + for its spaces is one of the patterns instead, which spares a view.
var decoders = []decoder{
	{leader: `\`, decode: decodeJSON},
	{leader: `%`, decode: decodePercent},
	{leader: `&`, decode: decodeHTML},
	{radix: base64Radix},
	{radix: hexRadix},
	{radix: base32Radix},
	{radix: base32HexRadix},
}

// maxDepth is how many decoders in a row a view applies: with the
// encodings the patterns hold (base64 and hex of the value), a value is
// found under any two of the promised encodings, and under three when the
// innermost is one the patterns hold.
const maxDepth = 2

// views returns text itself and its decodings by one scheme and by two in
// a row (such as JSON escapes inside a percent-encoded query, or base64
// inside hex), skipping schemes whose escapes the text does not hold.
// minBytes is the length of the shortest pattern: a run of binary digits
// too short to decode to that many bytes is not decoded.
func views(text string, minBytes int) []*view {
	out := []*view{{text: text}}
	level := out
	for range maxDepth {
		var next []*view
		for _, parent := range level {
			for i := range decoders {
				d := &decoders[i]
				if d.leader != "" && !strings.Contains(parent.text, d.leader) {
					continue
				}
				v := decodeView(parent, d, minBytes)
				if v == nil {
					continue
				}
				next = append(next, v)
				// Text in UTF-16 that a binary encoding held is read in the
				// same step, as if the two were one encoding.
				if d.radix != nil && strings.Contains(v.text, "\x00") {
					for _, big := range []bool{false, true} {
						if u := decodeView(v, &decoder{decode: func(s string, out *builder) { decodeUTF16(s, big, minBytes, out) }}, minBytes); u != nil {
							next = append(next, u)
						}
					}
				}
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

func decodeView(parent *view, d *decoder, minBytes int) *view {
	b := &builder{}
	switch {
	case d.radix != nil:
		d.radix.decode(parent.text, minBytes, b)
	case d.leader == "":
		d.decode(parent.text, b) // sparse
	default:
		b.start, b.end = make([]int32, 0, len(parent.text)), make([]int32, 0, len(parent.text))
		b.text.Grow(len(parent.text))
		d.decode(parent.text, b)
	}
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

// radix is a binary-to-text encoding whose digits each carry bits bits:
// base64 (both alphabets at once), hex (in either case, the bytes run
// together or apart by one of sep), base32 in either alphabet (upper case).
type radix struct {
	bits  int
	digit [256]int8 // -1: not a digit of this encoding
	sep   string    // what may stand between two bytes (hex only)
}

func base64Both() *radix {
	r := newRadix(6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "", false)
	r.digit['-'], r.digit['_'] = 62, 63
	return r
}

func newRadix(bits int, alphabet, sep string, fold bool) *radix {
	r := &radix{bits: bits, sep: sep}
	for i := range r.digit {
		r.digit[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		r.digit[alphabet[i]] = int8(i)
		if fold {
			r.digit[strings.ToLower(alphabet[i : i+1])[0]] = int8(i)
		}
	}
	return r
}

var (
	// Both alphabets: + and - are 62, / and _ are 63.
	base64Radix    = base64Both()
	hexRadix       = newRadix(4, "0123456789ABCDEF", ":- +", true) // + for a space in a query
	base32Radix    = newRadix(5, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "", false)
	base32HexRadix = newRadix(5, "0123456789ABCDEFGHIJKLMNOPQRSTUV", "", false)
)

// decode appends the bytes of every run of digits in s that is long
// enough to give minBytes bytes, read from each digit a byte may start at
// (a value inside a longer encoded text need not start at the text's
// start), with where each byte came from.
func (r *radix) decode(s string, minBytes int, out *builder) {
	perByte := (8 + r.bits - 1) / r.bits // digits one byte takes, at most
	// The digit offsets at which a byte can start: every one for base64's
	// 4 digits per 3 bytes, base32's 8 per 5, hex's 2 per 1.
	group := 8
	for group%r.bits != 0 {
		group += 8
	}
	group /= r.bits
	minDigits := max(minBytes*8/r.bits, perByte)
	var pos []int32
	flush := func() {
		if len(pos) >= minDigits {
			for a := range min(group, len(pos)) {
				r.emit(s, pos[a:], out)
			}
		}
		pos = pos[:0]
	}
	for i := 0; i < len(s); i++ {
		if r.digit[s[i]] >= 0 {
			pos = append(pos, int32(i))
			continue
		}
		// A separator between two bytes of hex: after an even number of
		// digits, before a digit.
		if r.sep != "" && len(pos) > 0 && len(pos)%2 == 0 && strings.IndexByte(r.sep, s[i]) >= 0 &&
			i+1 < len(s) && r.digit[s[i+1]] >= 0 {
			continue
		}
		flush()
	}
	flush()
}

// emit decodes the digits at pos, dropping the bits that do not fill a
// byte at the end. It stops where a stretch of 64 bytes past the first 64
// is not text (see isText): at a wrong offset, or in an image or a key,
// the rest is noise, which no value in the promised encodings hides in
// (each of their layers is text) but which would cost every view under it.
func (r *radix) emit(s string, pos []int32, out *builder) {
	acc, n, first, emitted := 0, 0, 0, 0
	window := make([]byte, 0, 64)
	for k, p := range pos {
		acc = acc<<r.bits | int(r.digit[s[p]])
		n += r.bits
		if n < 8 {
			continue
		}
		n -= 8
		c := byte(acc >> n)
		out.emitByte(c, int(pos[first]), int(p)+1)
		out.changed = true
		emitted++
		acc &= 1<<n - 1
		first = k
		if n == 0 {
			first = k + 1
		}
		if window = append(window, c); len(window) == cap(window) {
			if emitted > 2*cap(window) && !isText(window) {
				return
			}
			window = window[:0]
		}
	}
}

// isText is true of bytes that are mostly printable ASCII, tabs, line
// breaks or zero bytes (the other half of UTF-16), or that are UTF-8 (but
// for a character cut at either end).
func isText(b []byte) bool {
	n := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r' || c == 0 {
			n++
		}
	}
	if 2*n >= len(b) {
		return true
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.Valid(b[:len(b)-i+1]) {
			return true
		}
	}
	return false
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

// same copies s from i up to the next leader after i, each byte from
// itself, and returns where it stopped.
func (b *builder) same(s string, i int, leader byte) int {
	j := len(s)
	if k := strings.IndexByte(s[i+1:], leader); k >= 0 {
		j = i + 1 + k
	}
	b.text.WriteString(s[i:j])
	for k := i; k < j; k++ {
		b.start = append(b.start, int32(k))
		b.end = append(b.end, int32(k+1))
	}
	return j
}

func (b *builder) emitByte(c byte, from, to int) {
	b.text.WriteByte(c)
	b.start = append(b.start, int32(from))
	b.end = append(b.end, int32(to))
	if to-from != 1 {
		b.changed = true
	}
}

func (b *builder) emitRune(r rune, from, to int) {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	b.emit(string(buf[:n]), from, to)
}

// decodeUTF16 gives the runs of ASCII text in UTF-16 (little-endian: each
// character then a zero byte) at least minBytes characters long.
func decodeUTF16(s string, big bool, minBytes int, out *builder) {
	var run []int
	flush := func() {
		if len(run) >= max(minBytes, 1) {
			for _, at := range run {
				c := s[at]
				if big {
					c = s[at+1]
				}
				out.emitByte(c, at, at+2)
			}
		}
		run = run[:0]
	}
	for i := 0; i+1 < len(s); {
		c, z := s[i], s[i+1]
		if big {
			c, z = z, c
		}
		if z == 0 && c > 0 && c < 0x80 {
			run = append(run, i)
			i += 2
			continue
		}
		flush()
		i++
	}
	flush()
}

// decodeJSON decodes the escapes of JSON strings (and \xHH and octal
// \ooo), wherever they are: a reader that looks for a value cares about content, not syntax.
func decodeJSON(s string, out *builder) {
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			i = out.same(s, i, '\\')
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
		case '0', '1', '2', '3':
			// \141: an octal escape of C, Python, shells.
			v, ok := octalValue(s, i+1, 3)
			if !ok {
				out.emit(`\`, i, i+1)
				i++
				continue
			}
			out.emitByte(byte(v), i, i+4)
			i += 4
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
		i = out.same(s, i, '%')
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
		i = out.same(s, i, '&')
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

func octalValue(s string, at, n int) (int, bool) {
	if at+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[at : at+n]) {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v<<3 | int(c-'0')
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
