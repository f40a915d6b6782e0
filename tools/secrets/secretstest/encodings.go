// Package secretstest gives tests the forms a secret takes when a server
// or a tool gives it back, to check that none of them leaks.
package secretstest

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strings"
	"unicode/utf16"
)

// Encodings gives v in each form a server or a tool may give it back, by
// name of the form.
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
	utf16Of := func(s string, big bool) string {
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
	hexWith := func(s, sep string) string {
		parts := make([]string, len(s))
		for i := range len(s) {
			parts[i] = fmt.Sprintf("%02X", s[i])
		}
		return strings.Join(parts, sep)
	}
	octal := func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, `\%03o`, s[i])
		}
		return b.String()
	}
	slashJSON := strings.ReplaceAll(jsonOf(v, true), "/", `\/`)
	return map[string]string{
		"raw":                    v,
		"json":                   jsonOf(v, true),
		"json without html":      jsonOf(v, false),
		"json with \\/":          slashJSON,
		"json ascii":             asciiJSON(v, false),
		"json ascii upper":       asciiJSON(v, true),
		"json twice":             jsonOf(jsonOf(v, true), true),
		"json twice ascii":       jsonOf(asciiJSON(v, false), false),
		"query":                  url.QueryEscape(v),
		"query lower":            lowerPercent(url.QueryEscape(v)),
		"path":                   url.PathEscape(v),
		"every byte":             allPercent(v),
		"form of json":           url.QueryEscape(jsonOf(v, true)),
		"json of query":          jsonOf(url.QueryEscape(v), true),
		"html":                   html.EscapeString(v),
		"template html":          template.HTMLEscapeString(v),
		"numeric html":           numericHTML(v),
		"html of json":           html.EscapeString(jsonOf(v, false)),
		"hex":                    hex.EncodeToString([]byte(v)),
		"HEX":                    strings.ToUpper(hex.EncodeToString([]byte(v))),
		"base64":                 b64(base64.StdEncoding, v),
		"base64 raw":             b64(base64.RawStdEncoding, v),
		"base64 url":             b64(base64.URLEncoding, v),
		"base64 url raw":         b64(base64.RawURLEncoding, v),
		"basic auth":             b64(base64.StdEncoding, "user:"+v),
		"basic auth 2":           b64(base64.StdEncoding, "me:"+v),
		"basic auth 3":           b64(base64.StdEncoding, "admin:"+v),
		"base64 url of json":     b64(base64.RawURLEncoding, `{"k":"`+v+`"}`),
		"base64 of escaped json": b64(base64.StdEncoding, `{"k":"`+jsonOf(v, true)+`"}`),
		"jwt-like payload":       b64(base64.RawURLEncoding, `{"sub":"`+jsonOf(v, false)+`"}`),
		"base64 in query":        url.QueryEscape(b64(base64.StdEncoding, "user:"+v)),
		"base64 in json escape":  strings.ReplaceAll(b64(base64.StdEncoding, "x:"+v), "/", `\/`),
		"base64 of base64":       b64(base64.StdEncoding, b64(base64.StdEncoding, v)),
		"base64 of basic auth":   b64(base64.RawURLEncoding, b64(base64.StdEncoding, "user:"+v)),
		"hex of base64":          hex.EncodeToString([]byte(b64(base64.RawStdEncoding, v))),
		"query of base64 twice":  url.QueryEscape(b64(base64.StdEncoding, b64(base64.StdEncoding, v))),
		"base64 of query":        b64(base64.StdEncoding, url.QueryEscape(v)),
		"base32":                 base32.StdEncoding.EncodeToString([]byte(v)),
		"base32 hex raw":         base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(v)),
		"utf-16le hex":           hex.EncodeToString([]byte(utf16Of(v, false))),
		"utf-16be base64":        b64(base64.StdEncoding, utf16Of(v, true)),
		"hex with colons":        hexWith(v, ":"),
		"octal escapes":          octal(v),
	}
}
