package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

var httpRequestSchema = tools.Schema(`{
  "type": "object",
  "properties": {
    "url": {"type": "string", "minLength": 1, "maxLength": 8192,
      "description": "Absolute http:// or https:// URL. May hold {{secret:NAME}} placeholders."},
    "method": {"type": "string", "pattern": "^[A-Za-z]{1,16}$",
      "description": "HTTP method: GET (the default), HEAD, OPTIONS, POST, PUT, PATCH or DELETE."},
    "headers": {"type": "object", "additionalProperties": {"type": "string"},
      "description": "Request headers, name to value. Values may hold {{secret:NAME}} placeholders, such as {\"Authorization\": \"Bearer {{secret:GITHUB_TOKEN}}\"}."},
    "body": {"type": "string", "maxLength": 1048576,
      "description": "Request body. Content-Type defaults to application/json when the body is JSON, text/plain otherwise. May hold {{secret:NAME}} placeholders: inside a JSON string the value is JSON-escaped, in a form body percent-encoded."}
  },
  "required": ["url"],
  "additionalProperties": false
}`)

type httpRequestArgs struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

var methodToken = regexp.MustCompile(`^[A-Z]{1,16}$`)

// cachedNote starts a result that came from the result cache.
const cachedNote = "[from cache: the same request was answered in this session within the last 30 minutes]\n"

func (w *web) httpRequestDef() tools.Definition {
	return tools.Definition{
		Name: "http_request",
		Description: fmt.Sprintf("Send an HTTP request and return the status line, the main response headers and the body "+
			"(at most %d KiB shown; binary bodies are summarised, not shown). "+
			"Put credentials in url, headers or body as {{secret:NAME}} placeholders: they are filled from secrets stored with store_secret and never shown. "+
			"GET, HEAD and OPTIONS change nothing and run without confirmation; other methods ask first. "+
			"A 4xx or 5xx status is a failure. GET results are cached for 30 minutes in the session.",
			w.cfg.MaxResponseBytes>>10),
		Parameters:     httpRequestSchema,
		Concurrent:     true,
		SideEffect:     tools.AtMostOnce,
		Effect:         w.httpRequestEffect,
		Subject:        httpRequestSubject,
		Rules:          approval.KindRequest,
		CacheKey:       tools.HTTPRequestCacheKey,
		ConcurrencyKey: tools.HostKey("url"),
		KeyLimit:       w.cfg.HostConcurrency,
		KeyLimitFor:    w.hostLimit,
		Timeout:        w.cfg.Timeout + requestAllowance,
		Source:         tools.SourceBuiltin,
		Handler:        tools.Typed(w.httpRequest),
	}
}

// normMethod is the upper-cased method, GET when absent.
func normMethod(m string) string {
	m = strings.ToUpper(strings.TrimSpace(m))
	if m == "" {
		return http.MethodGet
	}
	return m
}

func methodEffect(method string) tools.SideEffect {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return tools.ReadOnly
	case http.MethodPut, http.MethodDelete:
		return tools.Idempotent
	}
	return tools.AtMostOnce
}

// httpRequestEffect classifies one call by its method: a GET never asks for
// confirmation and is retried, a POST is neither (C4, P2.4), unless it
// goes to a host that honours Idempotency-Key (Config.IdempotentHosts):
// every attempt carries the same key, so a retry takes effect once.
func (w *web) httpRequestEffect(args json.RawMessage) tools.SideEffect {
	var a struct {
		Method *string `json:"method"`
		URL    string  `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil {
		return tools.AtMostOnce
	}
	if a.Method == nil {
		return tools.ReadOnly
	}
	e := methodEffect(normMethod(*a.Method))
	if e == tools.AtMostOnce && w.honoursIdempotencyKey(a.URL) {
		return tools.Idempotent
	}
	return e
}

// honoursIdempotencyKey reports whether rawURL's host is one of
// Config.IdempotentHosts: its host name alone, or with its port. A URL
// with a secret placeholder in its host is never one.
func (w *web) honoursIdempotencyKey(rawURL string) bool {
	if len(w.cfg.IdempotentHosts) == 0 {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || strings.Contains(u.Host, "{{") {
		return false
	}
	host, hostPort := strings.ToLower(u.Hostname()), strings.ToLower(u.Host)
	for _, h := range w.cfg.IdempotentHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && (h == host || h == hostPort) {
			return true
		}
	}
	return false
}

func httpRequestSubject(args json.RawMessage) string {
	var a httpRequestArgs
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return normMethod(a.Method) + " " + strings.TrimSpace(a.URL)
}

func (w *web) httpRequest(ctx context.Context, req tools.Request, a httpRequestArgs) (tools.Result, error) {
	method := normMethod(a.Method)
	rawURL := strings.TrimSpace(a.URL)
	origin := method + " " + rawURL
	if !methodToken.MatchString(method) {
		return tools.Result{}, fmt.Errorf("%s: method %q is not an HTTP method", origin, a.Method)
	}
	effect := methodEffect(method)

	// Pass 3 writes this cache for read-only calls (P3.4, K2); the handler only reads it.
	if effect == tools.ReadOnly && w.cfg.Cache != nil {
		if content, ok := w.cacheGet(ctx, tools.HTTPRequestCacheKey(req.SessionID, string(req.Args))); ok {
			return tools.Result{Content: cachedNote + strings.TrimPrefix(content, cachedNote), FromCache: true}, nil
		}
	}

	secrets := newSecretSet(w.cfg.Secrets, req.SessionID)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", origin, secrets.redact(fmt.Sprintf(format, args...)))
	}
	expandedURL, basic, err := expandURL(ctx, secrets, rawURL)
	if err != nil {
		return tools.Result{}, fail("%v", err)
	}
	if _, err := w.client.checkURL(expandedURL); err != nil {
		return tools.Result{}, fail("%v", err)
	}
	body, err := expandBody(ctx, secrets, a.Body, headerValue(a.Headers, "Content-Type"))
	if err != nil {
		return tools.Result{}, fail("%v", err)
	}
	hreq, err := http.NewRequest(method, expandedURL, strings.NewReader(body))
	if err != nil {
		return tools.Result{}, fail("%v", err)
	}
	if body == "" {
		hreq.Body, hreq.ContentLength = http.NoBody, 0
	}
	g := &guard{body: body != a.Body}
	names := make([]string, 0, len(a.Headers))
	for k := range a.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		before := a.Headers[k]
		v, err := secrets.expand(ctx, before, nil)
		if err != nil {
			return tools.Result{}, fail("header %s: %v", k, err)
		}
		name := strings.TrimSpace(k)
		if !validHeaderName(name) || strings.ContainsAny(v, "\r\n") {
			return tools.Result{}, fail("header %q: a name is a token and a value is one line", k)
		}
		if v != before {
			g.headers = append(g.headers, name)
		}
		switch http.CanonicalHeaderKey(name) {
		case "Host":
			hreq.Host = v
		case "Content-Length":
			// The body sets it.
		default:
			hreq.Header.Set(name, v)
		}
	}
	if basic != "" && hreq.Header.Get("Authorization") == "" {
		// As net/http does with user info, but under our control: the
		// header is dropped on a redirect to another host and redacted.
		hreq.Header.Set("Authorization", basic)
		g.headers = append(g.headers, "Authorization")
	}
	if effect != tools.ReadOnly && req.OperationID != "" && hreq.Header.Get(round.IdempotencyHeader) == "" {
		// An unsafe method carries the call's operation id, so that a server
		// that honours the header applies a repeated request once (SPEC R).
		hreq.Header.Set(round.IdempotencyHeader, req.OperationID)
	}
	if body != "" && hreq.Header.Get("Content-Type") == "" {
		if json.Valid([]byte(body)) {
			hreq.Header.Set("Content-Type", "application/json")
		} else {
			hreq.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}

	g.extra = int64(secrets.redactor().Margin())
	resp, err := w.client.exchange(ctx, hreq, w.cfg.MaxResponseBytes, g)
	if err != nil {
		msg, transient := w.client.describe(ctx, err)
		err = fail("%s", msg)
		if transient && effect != tools.AtMostOnce {
			err = tools.Transient(err)
		}
		return tools.Result{}, err
	}
	if resp.code >= 400 {
		err := fail("%s: %s", resp.status, excerpt(resp, 300, secrets))
		if effect != tools.AtMostOnce && retryableStatus(resp.code) {
			err = tools.Transient(err)
		}
		return tools.Result{}, err
	}
	return tools.Text(w.formatResponse(method, hreq.URL.String(), resp, secrets)), nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 127 || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// retryableStatus is a status that may go away by itself.
func retryableStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
}

// cacheGet and cacheSet use the result cache with a short deadline, so that
// a slow cache is skipped (K5).
func (w *web) cacheGet(ctx context.Context, key string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.CacheTimeout)
	defer cancel()
	return w.cfg.Cache.Get(ctx, key)
}

func (w *web) cacheSet(ctx context.Context, key, content string) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.CacheTimeout)
	defer cancel()
	w.cfg.Cache.Set(ctx, key, content, tools.ResultCacheTTL)
}

// expandURL fills the placeholders of a URL, each value percent-encoded.
// User info (user:password@) is taken out of the URL and returned as the
// value of an Authorization header, as net/http would send it: the URL
// then never shows it, and the header, like any secret header, is
// redacted and dropped on a redirect to another host.
func expandURL(ctx context.Context, s *secretSet, raw string) (expanded, basic string, err error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		u, err := s.expand(ctx, raw, escapeURL)
		return u, "", err
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		info, err := s.expand(ctx, rest[:at], escapeURL)
		if err != nil {
			return "", "", err
		}
		user, pass, _ := strings.Cut(info, ":")
		if user, err = url.PathUnescape(user); err != nil {
			return "", "", fmt.Errorf("the user name in the URL is not valid percent-encoding")
		}
		if pass, err = url.PathUnescape(pass); err != nil {
			return "", "", fmt.Errorf("the password in the URL is not valid percent-encoding")
		}
		basic = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		rest = rest[at+1:]
	}
	expanded, err = s.expand(ctx, scheme+"://"+rest, escapeURL)
	return expanded, basic, err
}

// expandBody fills the placeholders of a body. In a JSON body whose
// placeholders all stand inside strings a value is JSON-escaped, and in a
// form it is percent-encoded, so that a quote or an & in a value leaves the
// body as it was meant; elsewhere it goes in as it is.
func expandBody(ctx context.Context, s *secretSet, body, contentType string) (string, error) {
	var escape func(string) string
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case !approval.SecretPlaceholder.MatchString(body):
	case mt == "application/x-www-form-urlencoded":
		escape = url.QueryEscape
	case mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json"):
		// A bare x is not JSON: the body stays JSON only if every
		// placeholder is inside a string.
		if json.Valid([]byte(approval.SecretPlaceholder.ReplaceAllString(body, "x"))) {
			escape = jsonEscape
		}
	}
	return s.expand(ctx, body, escape)
}

// jsonEscape is v as the content of a JSON string.
func jsonEscape(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return v
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// headerValue is the value of the header named name in any letter case.
func headerValue(headers map[string]string, name string) string {
	for k, v := range headers {
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return v
		}
	}
	return ""
}
