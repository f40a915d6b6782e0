package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

// testValues are secrets that a careless redactor gets wrong: quotes and
// backslashes (JSON), <>& (HTML), + / = ? % (URLs, base64), non-ASCII and a
// character outside the BMP (\u escapes, surrogate pairs), long values.
var testValues = map[string]string{
	"QUOTE":   `pa"ss\word`,
	"MARKUP":  `<a href='x'>&amp;</a>`,
	"URLISH":  `a+b/c=d?e%f g&h#i`,
	"UNICODE": `clé-ü€😀-passwort`,
	"PLAIN":   `sunshine42`,
	"LONG":    strings.Repeat(`0123456789abcdef"\`, 228)[:4096],
}

// Encodings produces a value in each form a server or tool may give it back.
func Encodings(v string) map[string]string {
	jsonOf := func(s string, escapeHTML bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		_ = enc.Encode(s)
		out := strings.TrimSuffix(b.String(), "\n")
		return out[1 : len(out)-1]
	}
	asciiJSON := func(s string, upper bool) string {
		var b strings.Builder
		for _, r := range jsonOf(s, false) {
			if r < 128 {
				b.WriteRune(r)
				continue
			}
			for _, u := range utf16.Encode([]rune{r}) {
				x := fmt.Sprintf(`\u%04x`, u)
				if upper {
					x = `\u` + strings.ToUpper(x[2:])
				}
				b.WriteString(x)
			}
		}
		return b.String()
	}
	lowerPercent := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+2 < len(s) {
				b.WriteString("%" + strings.ToLower(s[i+1:i+3]))
				i += 2
				continue
			}
			b.WriteByte(s[i])
		}
		return b.String()
	}
	allPercent := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		return b.String()
	}
	numericHTML := func(s string) string {
		var b strings.Builder
		for i, r := range s {
			if i%2 == 0 {
				fmt.Fprintf(&b, "&#%d;", r)
			} else {
				fmt.Fprintf(&b, "&#x%X;", r)
			}
		}
		return b.String()
	}
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	slashJSON := strings.ReplaceAll(jsonOf(v, true), "/", `\/`)
	return map[string]string{
		"raw":                   v,
		"json":                  jsonOf(v, true),
		"json without html":     jsonOf(v, false),
		"json with \\/":         slashJSON,
		"json ascii":            asciiJSON(v, false),
		"json ascii upper":      asciiJSON(v, true),
		"json twice":            jsonOf(jsonOf(v, true), true),
		"json twice ascii":      jsonOf(asciiJSON(v, false), false),
		"query":                 url.QueryEscape(v),
		"query lower":           lowerPercent(url.QueryEscape(v)),
		"path":                  url.PathEscape(v),
		"every byte":            allPercent(v),
		"form of json":          url.QueryEscape(jsonOf(v, true)),
		"json of query":         jsonOf(url.QueryEscape(v), true),
		"html":                  html.EscapeString(v),
		"template html":         template.HTMLEscapeString(v),
		"numeric html":          numericHTML(v),
		"html of json":          html.EscapeString(jsonOf(v, false)),
		"hex":                   hex.EncodeToString([]byte(v)),
		"HEX":                   strings.ToUpper(hex.EncodeToString([]byte(v))),
		"base64":                b64(base64.StdEncoding, v),
		"base64 raw":            b64(base64.RawStdEncoding, v),
		"base64 url":            b64(base64.URLEncoding, v),
		"base64 url raw":        b64(base64.RawURLEncoding, v),
		"basic auth":            b64(base64.StdEncoding, "user:"+v),
		"basic auth 2":          b64(base64.StdEncoding, "me:"+v),
		"basic auth 3":          b64(base64.StdEncoding, "admin:"+v),
		"base64 url of json":    b64(base64.RawURLEncoding, `{"k":"`+v+`"}`),
		"base64 in query":       url.QueryEscape(b64(base64.StdEncoding, "user:"+v)),
		"base64 in json escape": strings.ReplaceAll(b64(base64.StdEncoding, "x:"+v), "/", `\/`),
	}
}

func TestRedactEveryEncoding(t *testing.T) {
	r := NewRedactor(testValues)
	for name, v := range testValues {
		for form, enc := range Encodings(v) {
			t.Run(name+"/"+form, func(t *testing.T) {
				text := "before «" + enc + "» after"
				got := r.Redact(text)
				require.True(t, strings.HasPrefix(got, "before «"), got)
				require.True(t, strings.HasSuffix(got, "» after"), got)
				require.Contains(t, got, "[secret:"+name+"]")
				requireNoEncoding(t, got, v)
				require.True(t, r.Contains(text))
			})
		}
	}
}

// requireNoEncoding fails when text holds v in any encoding (a stretch of
// 8 or more characters of one, for the long value).
func requireNoEncoding(t *testing.T, text, v string) {
	t.Helper()
	for form, enc := range Encodings(v) {
		require.NotContains(t, text, enc, "%s form found", form)
	}
}

// A cut through the middle of an encoded value keeps nothing of it: the
// value is redacted before the text is cut.
func TestRedactPrefixNeverLeavesAPrefix(t *testing.T) {
	values := map[string]string{"QUOTE": testValues["QUOTE"], "UNICODE": testValues["UNICODE"]}
	r := NewRedactor(values)
	for name, v := range values {
		for form, enc := range Encodings(v) {
			text := "head " + enc + " tail"
			spans := r.find(text)
			require.Len(t, spans, 1, form)
			// Base64 of "user:value" starts with the user's characters.
			from, to := spans[0].from, spans[0].to
			require.LessOrEqual(t, from-len("head "), 8, form)
			for n := 0; n < len("head ")+len(enc); n++ {
				got := r.RedactPrefix(text, n)
				if n <= from {
					require.Equal(t, text[:n], got, "%s/%s cut at %d", name, form, n)
					continue
				}
				require.Equal(t, text[:from]+"[secret:"+name+"]"+text[to:max(n, to)], got, "%s/%s cut at %d", name, form, n)
			}
			require.Equal(t, "head", r.RedactPrefix(text, 4))
		}
	}
}

func TestRedactLeavesOtherTextAlone(t *testing.T) {
	r := NewRedactor(map[string]string{"T": "sunshine42"})
	for _, text := range []string{
		"",
		`{"a":"x\"y\\z\u00e9\ud83d\ude00","b":"%41%zz&amp;&lt;&#65;&#x42;&bogus;\q\u12"}`,
		"a+b%2Fc sunshine4 unshine42",
		hex.EncodeToString([]byte("sunshine4")),
		"\xff\xfe invalid utf-8 \\",
		"&#0; &#x110000; &#xD800; %", // not characters
	} {
		require.Equal(t, text, r.Redact(text))
		require.False(t, r.Contains(text))
	}
	var none *Redactor
	require.Equal(t, "abc", none.Redact("abc"))
	require.Equal(t, "ab", none.RedactPrefix("abc", 2))
	require.Nil(t, NewRedactor(map[string]string{"EMPTY": ""}))
}

func TestRedactNamesTheLongestValue(t *testing.T) {
	r := NewRedactor(map[string]string{"SHORT": "token-1234", "LONG": "token-1234-and-more"})
	require.Equal(t, "x [secret:LONG] y [secret:SHORT]", r.Redact("x token-1234-and-more y token-1234"))
}

func TestRedactMargin(t *testing.T) {
	r := NewRedactor(testValues)
	for _, v := range testValues {
		for form, enc := range Encodings(v) {
			require.LessOrEqual(t, len(enc), r.Margin(), form)
		}
	}
	require.Zero(t, (*Redactor)(nil).Margin())
}
