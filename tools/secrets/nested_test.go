package secrets

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

// layer is one encoding the redactor promises to see through.
type layer struct {
	name string
	enc  func(string) string
}

func b64(e *base64.Encoding) func(string) string {
	return func(s string) string { return e.EncodeToString([]byte(s)) }
}

func b32(e *base32.Encoding) func(string) string {
	return func(s string) string { return e.EncodeToString([]byte(s)) }
}

func sepHex(sep string, upper bool) func(string) string {
	return func(s string) string {
		parts := make([]string, len(s))
		for i := range len(s) {
			parts[i] = hex.EncodeToString([]byte{s[i]})
			if upper {
				parts[i] = strings.ToUpper(parts[i])
			}
		}
		return strings.Join(parts, sep)
	}
}

func utf16Bytes(s string, big bool) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

func escapeEach(format string) func(string) string {
	return func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, format, s[i])
		}
		return b.String()
	}
}

// layers are the promised encodings: one of them, or any two in a row.
var layers = []layer{
	{"raw", func(s string) string { return s }},
	{"json", func(s string) string { return jsonContent(s, true) }},
	{"query", url.QueryEscape},
	{"path", url.PathEscape},
	{"html", html.EscapeString},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
	{"hex:", sepHex(":", false)},
	{"HEX-", sepHex("-", true)},
	{"hex space", sepHex(" ", false)},
	{"HEX:", sepHex(":", true)},
	{"base64", b64(base64.StdEncoding)},
	{"base64 raw", b64(base64.RawStdEncoding)},
	{"base64 url", b64(base64.URLEncoding)},
	{"base64 url raw", b64(base64.RawURLEncoding)},
	{"basic auth", func(s string) string { return base64.StdEncoding.EncodeToString([]byte("user:" + s)) }},
	{"base32", b32(base32.StdEncoding)},
	{"base32 raw", b32(base32.StdEncoding.WithPadding(base32.NoPadding))},
	{"base32 hex", b32(base32.HexEncoding)},
	{"base32 hex raw", b32(base32.HexEncoding.WithPadding(base32.NoPadding))},
	{"octal escapes", escapeEach(`\%03o`)},
	{"\\x escapes", escapeEach(`\x%02x`)},
	{"utf-16le hex", func(s string) string { return hex.EncodeToString([]byte(utf16Bytes(s, false))) }},
	{"utf-16be hex", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(utf16Bytes(s, true)))) }},
	{"utf-16le base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(utf16Bytes(s, false))) }},
	{"utf-16be base64", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(utf16Bytes(s, true))) }},
}

// Every promised encoding, and every two of them one inside the other
// (base64 of base64, hex of base64, percent-encoded base64, base64 of
// JSON, base32 of hex, ...), is found and replaced.
func TestRedactTwoLayersOfEveryEncoding(t *testing.T) {
	values := map[string]string{"PLAIN": "sunshine42", "QUOTE": `pa"ss\word`, "URLISH": `a+b/c=d?e%f g&h#i`, "UNICODE": `clé-ü€😀-passwort`}
	r := NewRedactor(values)
	for name, v := range values {
		for _, inner := range layers {
			for _, outer := range layers {
				enc := outer.enc(inner.enc(v))
				t.Run(name+"/"+outer.name+"("+inner.name+")", func(t *testing.T) {
					text := "before «" + enc + "» after"
					got := r.Redact(text)
					require.Contains(t, got, "[secret:"+name+"]", "%q", enc)
					require.True(t, strings.HasPrefix(got, "before «"), got)
					require.True(t, strings.HasSuffix(got, "» after"), got)
					require.NotContains(t, got, enc)
					require.True(t, r.Contains(text))
				})
			}
		}
	}
}

// The nested forms are found inside longer texts too: a JSON document, a
// URL path, a header line, after text glued to them.
func TestRedactNestedInContext(t *testing.T) {
	const v = "s3cret-tok3n-value"
	r := NewRedactor(map[string]string{"T": v})
	bb := base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(v))))
	hb := hex.EncodeToString([]byte(base64.RawURLEncoding.EncodeToString([]byte("user:" + v))))
	for _, text := range []string{
		`{"data":"` + bb + `","n":1}`,
		"GET /api/v1/" + bb + "/items HTTP/1.1",
		"X-Blob: id-" + base64.RawURLEncoding.EncodeToString([]byte(base64.RawURLEncoding.EncodeToString([]byte(v)))),
		"token=" + url.QueryEscape(bb) + "&x=1",
		"hex " + hb + " end",
		"ab" + base64.StdEncoding.EncodeToString([]byte(`{"a":"`+jsonContent(v, true)+`"}`)),
		"key: " + sepHex(":", false)(v) + "\n",
		"b32 " + base32.StdEncoding.EncodeToString([]byte("prefix:"+v+":suffix")) + " x",
		`"\163\063\143\162\145\164-tok3n-value"`,
	} {
		got := r.Redact(text)
		require.Contains(t, got, "[secret:T]", text)
		require.False(t, strings.Contains(got, bb) || strings.Contains(got, hb), got)
	}
}

func TestRedactNestedLeavesOtherTextAlone(t *testing.T) {
	r := NewRedactor(map[string]string{"T": "sunshine42"})
	rng := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, 4096)
	for i := range blob {
		blob[i] = byte(rng.UintN(256))
	}
	for _, text := range []string{
		base64.StdEncoding.EncodeToString(blob),
		hex.EncodeToString(blob),
		sepHex(":", true)(string(blob[:300])),
		base32.StdEncoding.EncodeToString(blob),
		base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte("sunshine4")))),
		"implementation internationalization ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 de:ad:be:ef 00-11-22",
		`\141\142 \x41 \9 \400 \`,
	} {
		require.Equal(t, text, r.Redact(text))
	}
}

// benchText is about 1 MB of mixed text: prose, JSON, base64 and hex.
func benchText() string {
	rng := rand.New(rand.NewPCG(3, 4))
	blob := make([]byte, 48<<10)
	for i := range blob {
		blob[i] = byte(rng.UintN(256))
	}
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(`{"text":"The implementation of the internationalization layer \u00e9 &amp; 100% done","id":12345}` + "\n")
		b.WriteString(base64.StdEncoding.EncodeToString(blob[:rng.IntN(len(blob))]) + "\n")
		b.WriteString(hex.EncodeToString(blob[:rng.IntN(4096)]) + "\n")
	}
	return b.String()
}

func BenchmarkRedact1MB(b *testing.B) {
	text := benchText()
	r := NewRedactor(map[string]string{"A": "sunshine42", "B": `pa"ss\word`, "C": strings.Repeat("x9", 32)})
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Redact(text)
	}
}

// Short values (NewRedactor takes any) and texts of random bytes from
// every decoder's alphabet never make the redactor panic.
func TestRedactAnyTextNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alphabet = "AZaz09+/-_=%&#;:\\x\\u0 \x00\xff\xc3\xa9"
	for _, values := range []map[string]string{{"A": "a"}, {"A": "ab", "B": "\x00"}, {"A": "sunshine42"}} {
		r := NewRedactor(values)
		for range 2000 {
			b := make([]byte, rng.IntN(300))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			text := string(b)
			require.NotPanics(t, func() {
				r.Redact(text)
				r.RedactPrefix(text, len(text)/2)
			}, "%q", text)
		}
	}
}
