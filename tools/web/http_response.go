package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	txt "github.com/toolround/toolround/internal/text"
)

// The text of an http_request result: the status, the headers shown, and
// the body as text, or a summary when it is binary.

// shownHeaders are the response headers a result lists; the rest (cookies
// above all) stay out.
var shownHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Content-Disposition", "Location",
	"Last-Modified", "ETag", "Cache-Control", "Expires", "Retry-After", "Link", "Allow",
	"WWW-Authenticate", "X-Total-Count", "X-Request-Id",
}

// formatResponse renders a successful exchange; sent is the URL as sent,
// secrets expanded. Every expanded secret is scrubbed from the result.
func (w *web) formatResponse(method, sent string, resp *response, secrets *secretSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", resp.proto, resp.status)
	for _, h := range shownHeaders {
		for _, v := range resp.header.Values(h) {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	var rate []string
	for k := range resp.header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ratelimit-") || strings.HasPrefix(lk, "ratelimit") {
			rate = append(rate, k)
		}
	}
	sort.Strings(rate)
	for _, k := range rate {
		fmt.Fprintf(&b, "%s: %s\n", k, resp.header.Get(k))
	}
	if resp.finalURL != sent {
		fmt.Fprintf(&b, "[redirected to %s]\n", resp.finalURL)
	}
	b.WriteString("\n")
	red := secrets.redactor()
	switch {
	case method == http.MethodHead:
		b.WriteString("(HEAD: no body)")
	case len(resp.body) == 0:
		b.WriteString("(empty body)")
	default:
		text, cut, binary := bodyText(resp)
		if binary {
			b.WriteString(binarySummary(resp, red.Contains(string(resp.body)+string(resp.more))))
			break
		}
		// Redact before cutting: a value the cut goes through is replaced
		// whole, since the text runs a redaction margin past the cut.
		head := b.String()
		b.Reset()
		b.WriteString(red.RedactPrefix(head+text, len(head)+cut))
		if resp.truncated {
			size := "more"
			if resp.length > 0 {
				size = fmt.Sprintf("%d bytes in all", resp.length)
			}
			fmt.Fprintf(&b, "\n[truncated: the body is larger than %d bytes (%s); only the first %d are shown. "+
				"Ask for less (paging, a Range header, filter parameters) or save it with download_file.]",
				len(resp.body), size, len(resp.body))
		}
		return b.String()
	}
	return red.Redact(b.String())
}

// bodyText decodes a text body to UTF-8, what was read past the limit
// included; cut is where the limit falls in text. binary reports a body
// that is not text.
func bodyText(resp *response) (text string, cut int, binary bool) {
	ct := resp.header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	if isBinaryType(mt) || (!isTextType(mt) && looksBinary(resp.body)) {
		return "", 0, true
	}
	all := append(resp.body[:len(resp.body):len(resp.body)], resp.more...)
	if cs := params["charset"]; cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		if full, ok := decodeCharset(cs, all); ok {
			if !resp.truncated {
				return full, len(full), false
			}
			if shown, ok := decodeCharset(cs, resp.body); ok {
				return full, min(len(shown), len(full)), false
			}
		}
	}
	if !resp.truncated {
		text = strings.ToValidUTF8(string(all), "\uFFFD")
		return text, len(text), false
	}
	// The limit may have split the last character shown.
	shown := txt.TrimPartialRune(resp.body)
	text = strings.ToValidUTF8(string(shown), "\uFFFD")
	cut = len(text)
	return text + strings.ToValidUTF8(string(all[len(shown):]), "\uFFFD"), cut, false
}

func decodeCharset(label string, b []byte) (string, bool) {
	r, err := charset.NewReaderLabel(label, bytes.NewReader(b))
	if err != nil {
		return "", false
	}
	decoded, err := io.ReadAll(r)
	if err != nil {
		return "", false
	}
	return strings.ToValidUTF8(string(decoded), "\uFFFD"), true
}

func isTextType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-www-form-urlencoded", mt == "application/yaml", mt == "application/x-yaml",
		mt == "application/graphql", mt == "application/x-ndjson", mt == "application/csv":
		return true
	}
	return false
}

func isBinaryType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "image/") && mt != "image/svg+xml",
		strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"),
		mt == "application/octet-stream", mt == "application/pdf", mt == "application/zip",
		mt == "application/gzip", mt == "application/x-gzip", mt == "application/x-tar",
		mt == "application/x-protobuf", mt == "application/protobuf", mt == "application/wasm",
		mt == "application/msword", strings.HasPrefix(mt, "application/vnd.openxmlformats"):
		return true
	}
	return false
}

// looksBinary sniffs a body: a NUL byte or invalid UTF-8 near the start.
func looksBinary(b []byte) bool {
	head := b[:min(len(b), 8192)]
	if strings.IndexByte(string(head), 0) >= 0 {
		return true
	}
	// Trim a character the sniff window may have split.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// binarySummary describes a body that is not text. Its digest is left out
// when the body holds a secret: anyone could test a guess against it.
func binarySummary(resp *response, holdsSecret bool) string {
	mt := resp.header.Get("Content-Type")
	if mt == "" {
		mt = http.DetectContentType(resp.body)
	}
	size := fmt.Sprintf("%d bytes", len(resp.body))
	if resp.truncated {
		size = fmt.Sprintf("more than %d bytes", len(resp.body))
		if resp.length > 0 {
			size = fmt.Sprintf("%d bytes", resp.length)
		}
	}
	sum := sha256.Sum256(resp.body)
	hash := "sha256 " + hex.EncodeToString(sum[:])
	if resp.truncated {
		hash = "sha256 of the first " + fmt.Sprint(len(resp.body)) + " bytes " + hex.EncodeToString(sum[:])
	}
	if holdsSecret {
		hash = "digest not shown: the body holds a secret"
	}
	return fmt.Sprintf("[binary body not shown: %s, %s, %s. Save it with download_file to use it.]", mt, size, hash)
}

// excerpt is the start of an error body, on one line and scrubbed of
// secrets, for a failure message.
func excerpt(resp *response, n int, secrets *secretSet) string {
	text, cut, binary := bodyText(resp)
	if binary {
		return "(binary body)"
	}
	text = strings.Join(strings.Fields(secrets.redactor().RedactPrefix(text, cut)), " ")
	if text == "" {
		return "(empty body)"
	}
	if len(text) > n {
		text = txt.Cut(text, n) + "…"
	}
	return text
}
