package secrets

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools/secrets/secretstest"
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

func TestRedactEveryEncoding(t *testing.T) {
	r := NewRedactor(testValues)
	for name, v := range testValues {
		for form, enc := range secretstest.Encodings(v) {
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
	for form, enc := range secretstest.Encodings(v) {
		require.NotContains(t, text, enc, "%s form found", form)
	}
}

// A cut through the middle of an encoded value keeps nothing of it: the
// value is redacted before the text is cut.
func TestRedactPrefixNeverLeavesAPrefix(t *testing.T) {
	values := map[string]string{"QUOTE": testValues["QUOTE"], "UNICODE": testValues["UNICODE"]}
	r := NewRedactor(values)
	for name, v := range values {
		for form, enc := range secretstest.Encodings(v) {
			text := "head " + enc + " tail"
			spans := r.find(text)
			require.Len(t, spans, 1, form)
			// Base64 of "user:value" or of a JSON text starts with
			// characters of what comes before the value.
			from, to := spans[0].from, spans[0].to
			require.LessOrEqual(t, from-len("head "), 12, form)
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
		for form, enc := range secretstest.Encodings(v) {
			require.LessOrEqual(t, len(enc), r.Margin(), form)
		}
	}
	require.Zero(t, (*Redactor)(nil).Margin())
}
