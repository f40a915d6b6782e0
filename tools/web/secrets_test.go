package web

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// leakValues are stored secrets that break naive redaction.
var leakValues = map[string]string{
	"QUOTE":   `pa"ss\word`,
	"MARKUP":  `<b>&amp;'x'</b>`,
	"UNICODE": `clé-ü€😀 pass+/=`,
	"LONG":    strings.Repeat(`0123456789abcdef"\`, 228)[:4096],
}

// received is the secret a request carried, wherever it was put.
func received(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass
	}
	if v := r.Header.Get("X-Token"); v != "" {
		return v
	}
	if v := r.URL.Query().Get("k"); v != "" {
		return v
	}
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// echoServer gives back what it received in the encoding ?form= names,
// with a 4xx or 5xx status when ?status= says so.
func echoServer(t *testing.T) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		v := received(r)
		enc, ok := secretstest.Encodings(v)[r.URL.Query().Get("form")]
		if !ok {
			http.Error(w, "no such form", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", enc[:min(len(enc), 200)])
		if code, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
			w.WriteHeader(code)
		}
		fmt.Fprintf(w, `{"you sent": "%s", "auth": %q}`, enc, r.Header.Get("Authorization"))
	})
}

func TestHTTPRequestRedactsEveryEncoding(t *testing.T) {
	srv := echoServer(t)
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: leakValues}, MaxResponseBytes: 256 << 10})
	host := strings.TrimPrefix(srv.URL, "http://")
	for name, v := range leakValues {
		ways := map[string]func(form string) map[string]any{
			"header": func(form string) map[string]any {
				return map[string]any{"url": srv.URL + "/?form=" + form, "headers": map[string]string{"X-Token": "{{secret:" + name + "}}"}}
			},
			"query": func(form string) map[string]any {
				return map[string]any{"url": srv.URL + "/?k={{secret:" + name + "}}&form=" + form}
			},
			"userinfo": func(form string) map[string]any {
				return map[string]any{"url": "http://user:{{secret:" + name + "}}@" + host + "/?form=" + form}
			},
			"body": func(form string) map[string]any {
				return map[string]any{"url": srv.URL + "/?form=" + form, "method": "POST", "body": "{{secret:" + name + "}}"}
			},
		}
		for way, args := range ways {
			for form := range secretstest.Encodings(v) {
				t.Run(name+"/"+way+"/"+form, func(t *testing.T) {
					form := url.QueryEscape(form)
					res, err := call(t, defs["http_request"], "s1", args(form))
					require.NoError(t, err)
					require.Contains(t, res.Content, "[secret:"+name+"]")
					requireNoLeak(t, res.Content, v)

					a := args(form)
					a["url"] = a["url"].(string) + "&status=500"
					_, err = call(t, defs["http_request"], "s1", a)
					require.ErrorContains(t, err, "500 Internal Server Error")
					requireNoLeak(t, err.Error(), v)
				})
			}
		}
	}
}

// requireNoLeak fails when text holds v in any encoding.
func requireNoLeak(t *testing.T, text, v string) {
	t.Helper()
	for form, enc := range secretstest.Encodings(v) {
		require.NotContains(t, text, enc, "the %s form leaked", form)
	}
}

// A cut through a value, at any byte, leaves nothing of it: the body is
// redacted before it is cut.
func TestHTTPRequestRedactsBeforeTheCut(t *testing.T) {
	const limit = 1000
	v := leakValues["UNICODE"]
	forms := secretstest.Encodings(v)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		at, _ := strconv.Atoi(r.URL.Query().Get("at"))
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("x", at)+forms[r.URL.Query().Get("form")]+strings.Repeat("y", 2*limit))
	})
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: map[string]string{"S": v}}, MaxResponseBytes: limit})
	for _, form := range []string{"raw", "json", "json ascii", "json twice", "query", "every byte", "numeric html", "hex", "base64", "base64 url raw"} {
		enc := forms[form]
		for at := limit - len(enc) + 1; at < limit; at++ {
			res, err := call(t, defs["http_request"], "s1", map[string]any{"url": fmt.Sprintf("%s/?form=%s&at=%d&x={{secret:S}}", srv.URL, url.QueryEscape(form), at)})
			require.NoError(t, err)
			_, body, _ := strings.Cut(res.Content, "\n\n")
			shown, _, ok := strings.Cut(body, "\n[truncated: ")
			require.True(t, ok, res.Content)
			require.Equal(t, strings.Repeat("x", at)+"[secret:S]", shown, "%s cut %d bytes into the value", form, limit-at)
		}
	}
}

func TestHTTPRequestUserInfoBecomesAnAuthorizationHeader(t *testing.T) {
	const pass = `p@ss:w/rd 1+1%`
	var got struct{ user, pass, rawURL string }
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.user, got.pass, _ = r.BasicAuth()
		got.rawURL = r.URL.String()
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
	})
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: map[string]string{"P": pass}}})
	host := strings.TrimPrefix(srv.URL, "http://")
	res, err := call(t, defs["http_request"], "s1", map[string]any{"url": "http://m%C3%A9:{{secret:P}}@" + host + "/x"})
	require.NoError(t, err)
	require.Equal(t, "mé", got.user)
	require.Equal(t, pass, got.pass)
	require.Equal(t, "/x", got.rawURL)
	// What stays encodes the user name, which is not a secret.
	require.Regexp(t, `auth=Basic [A-Za-z0-9+/]{0,5}\[secret:P\]$`, res.Content)
	require.NotContains(t, res.Content, base64.StdEncoding.EncodeToString([]byte("mé:"+pass)))

	// An explicit Authorization header wins, as in net/http.
	res, err = call(t, defs["http_request"], "s1", map[string]any{"url": "http://u:{{secret:P}}@" + host + "/x", "headers": map[string]string{"Authorization": "Bearer plain"}})
	require.NoError(t, err)
	require.Contains(t, res.Content, "auth=Bearer plain")
}

func TestHTTPRequestNeverSendsASecretBodyToAnotherHost(t *testing.T) {
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "other got %s %q", r.Method, b)
	})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/in", code)
		case "/here":
			http.Redirect(w, r, "/in", code)
		default:
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "same host got %s %q", r.Method, b)
		}
	})
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: map[string]string{"P": "pass-word-1"}}})
	post := func(path, body string, code int) (string, error) {
		res, err := call(t, defs["http_request"], "s1", map[string]any{"url": fmt.Sprintf("%s%s?code=%d", srv.URL, path, code), "method": "POST", "body": body})
		return res.Content, err
	}
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		_, err := post("/away", `{"password":"{{secret:P}}"}`, code)
		require.ErrorContains(t, err, fmt.Sprintf("stopped at a redirect (%d) to %s: the request body holds a secret", code, other.URL))
		require.Zero(t, other.hits.Load(), "the other host never saw the request")

		got, err := post("/here", `{"password":"{{secret:P}}"}`, code)
		require.NoError(t, err)
		require.Contains(t, got, `same host got POST "{\"password\":\"[secret:P]\"}"`)

		got, err = post("/away", `{"password":"plain"}`, code)
		require.NoError(t, err, "a body without a secret follows")
		require.Contains(t, got, `other got POST "{\"password\":\"plain\"}"`)
		other.hits.Store(0)
	}
	// 302 turns the POST into a GET without a body: nothing to keep back.
	got, err := post("/away", `{"password":"{{secret:P}}"}`, http.StatusFound)
	require.NoError(t, err)
	require.Contains(t, got, `other got GET ""`)
}

func TestHTTPRequestBinaryBodyWithASecretHasNoDigest(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, "\x00\x01"+received(r))
	})
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: map[string]string{"P": "pass-word-1"}}})
	res, err := call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL, "headers": map[string]string{"X-Token": "{{secret:P}}"}})
	require.NoError(t, err)
	require.Contains(t, res.Content, "digest not shown: the body holds a secret")
	require.NotContains(t, res.Content, "sha256")

	res, err = call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL, "headers": map[string]string{"X-Token": "not a secret"}})
	require.NoError(t, err)
	require.Contains(t, res.Content, "sha256 ")
}

// A value lands in a JSON body as a JSON string's content and in a form as
// a form value, so that quotes and ampersands keep the body intact.
func TestHTTPRequestBodyEscapesValuesForTheBody(t *testing.T) {
	const pass = `a"b\c&d=e f`
	var got []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.Header.Get("Content-Type") {
		case "application/x-www-form-urlencoded":
			q, err := url.ParseQuery(string(b))
			require.NoError(t, err)
			got = append(got, q.Get("pass"))
		case "application/json":
			var m map[string]string
			require.NoError(t, json.Unmarshal(b, &m), string(b))
			got = append(got, m["pass"])
		default:
			got = append(got, string(b))
		}
	})
	defs := toolSet(t, Config{Secrets: fakeSecrets{session: "s1", values: map[string]string{"P": pass}}})
	for _, args := range []map[string]any{
		{"url": srv.URL, "method": "POST", "body": `{"user":"me","pass":"{{secret:P}}"}`},
		{"url": srv.URL, "method": "POST", "body": `{"user":"me","pass":"{{secret:P}}"}`, "headers": map[string]string{"content-type": "application/json"}},
		{"url": srv.URL, "method": "POST", "body": `user=me&pass={{secret:P}}`, "headers": map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"url": srv.URL, "method": "POST", "body": `{{secret:P}}`},
	} {
		_, err := call(t, defs["http_request"], "s1", args)
		require.NoError(t, err)
	}
	require.Equal(t, []string{pass, pass, pass, pass}, got)
}

// A body that is not valid UTF-8 is shown whole: replacing its bad bytes
// makes the text longer than the body.
func TestHTTPRequestShowsAnInvalidUTF8BodyWhole(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "caf\xe9 \xff\xfe au lait, the end")
	})
	for _, cfg := range []Config{{}, {Secrets: fakeSecrets{session: "s1", values: map[string]string{"P": "pass-word-1"}}}} {
		res, err := call(t, toolSet(t, cfg)["http_request"], "s1", map[string]any{"url": srv.URL, "headers": map[string]string{"X-Token": "{{secret:P}}"}})
		if cfg.Secrets == nil {
			res, err = call(t, toolSet(t, cfg)["http_request"], "s1", map[string]any{"url": srv.URL})
		}
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(res.Content, "\n\ncaf\uFFFD \uFFFD au lait, the end"), "%q", res.Content)
	}
}
