package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

func TestHTTPRequestResponses(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Set-Cookie", "session=abc")
			w.Header().Set("X-RateLimit-Remaining", "41")
			w.Header().Set("X-Internal", "hidden")
			_, _ = io.WriteString(w, `{"ok":true}`)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "method=%s ct=%s host=%s ua=%s x=%s body=%s", r.Method, r.Header.Get("Content-Type"), r.Host, r.UserAgent(), r.Header.Get("X-Thing"), b)
		case "/missing":
			http.Error(w, "no such thing here", http.StatusNotFound)
		case "/auth":
			w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		case "/broken":
			http.Error(w, "upstream exploded", http.StatusInternalServerError)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		case "/sniffed":
			_, _ = w.Write([]byte{0, 1, 2, 3, 0xff, 0xfe, 'a'})
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			_, _ = w.Write([]byte("caf\xe9"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	})
	defs := toolSet(t, Config{UserAgent: "ua-test"})
	tests := []struct {
		name          string
		args          map[string]any
		want          []string
		notWant       []string
		wantErr       string
		wantTransient bool
	}{
		{
			name:    "GET success shows status, chosen headers and body",
			args:    map[string]any{"url": srv.URL + "/json"},
			want:    []string{"HTTP/1.1 200 OK\n", "Content-Type: application/json\n", "X-Ratelimit-Remaining: 41\n", "\n\n{\"ok\":true}"},
			notWant: []string{"Set-Cookie", "session=abc", "X-Internal"},
		},
		{
			name: "POST sends the body with a guessed content type",
			args: map[string]any{"url": srv.URL + "/echo", "method": "post", "body": `{"a":1}`, "headers": map[string]string{"X-Thing": "v", "Host": "api.example"}},
			want: []string{`method=POST ct=application/json host=api.example ua=ua-test x=v body={"a":1}`},
		},
		{
			name: "plain body gets text/plain",
			args: map[string]any{"url": srv.URL + "/echo", "method": "PUT", "body": "hello"},
			want: []string{"method=PUT ct=text/plain; charset=utf-8"},
		},
		{
			name: "HEAD has no body",
			args: map[string]any{"url": srv.URL + "/json", "method": "HEAD"},
			want: []string{"HTTP/1.1 200 OK", "(HEAD: no body)"},
		},
		{
			name: "empty body",
			args: map[string]any{"url": srv.URL + "/empty"},
			want: []string{"204 No Content", "(empty body)"},
		},
		{
			name:    "binary body is summarised",
			args:    map[string]any{"url": srv.URL + "/png"},
			want:    []string{"[binary body not shown: image/png, 16 bytes, sha256 ", "download_file"},
			notWant: []string{"IHDR"},
		},
		{
			name: "binary body without a type is sniffed",
			args: map[string]any{"url": srv.URL + "/sniffed"},
			want: []string{"[binary body not shown: application/octet-stream, 7 bytes"},
		},
		{
			name: "charset is decoded",
			args: map[string]any{"url": srv.URL + "/latin1"},
			want: []string{"café"},
		},
		{
			name:    "404 is a failure with the body",
			args:    map[string]any{"url": srv.URL + "/missing"},
			wantErr: "GET " + srv.URL + "/missing: 404 Not Found: no such thing here",
		},
		{
			name:    "401 names the status",
			args:    map[string]any{"url": srv.URL + "/auth"},
			wantErr: "GET " + srv.URL + `/auth: 401 Unauthorized: {"message":"Bad credentials"}`,
		},
		{
			name:          "500 on GET is transient",
			args:          map[string]any{"url": srv.URL + "/broken"},
			wantErr:       "500 Internal Server Error: upstream exploded",
			wantTransient: true,
		},
		{
			name:          "500 on DELETE is transient (idempotent)",
			args:          map[string]any{"url": srv.URL + "/broken", "method": "DELETE"},
			wantErr:       "500 Internal Server Error",
			wantTransient: true,
		},
		{
			name:    "500 on POST is not retried",
			args:    map[string]any{"url": srv.URL + "/broken", "method": "POST"},
			wantErr: "POST " + srv.URL + "/broken: 500 Internal Server Error",
		},
		{
			name:          "connection refused on GET is transient",
			args:          map[string]any{"url": "http://127.0.0.1:1/"},
			wantErr:       "GET http://127.0.0.1:1/: cannot connect to 127.0.0.1:1: connection refused",
			wantTransient: true,
		},
		{name: "not http", args: map[string]any{"url": "ftp://example.org/x"}, wantErr: "want an absolute http:// or https:// URL"},
		{name: "relative URL", args: map[string]any{"url": "/just/a/path"}, wantErr: "want an absolute http:// or https:// URL"},
		{name: "bad URL", args: map[string]any{"url": "http://[::1"}, wantErr: "not a valid URL"},
		{name: "bad method", args: map[string]any{"url": srv.URL, "method": "G ET"}, wantErr: `method "G ET" is not an HTTP method`},
		{name: "header with newline", args: map[string]any{"url": srv.URL, "headers": map[string]string{"X-A": "a\r\nX-B: b"}}, wantErr: `header "X-A"`},
		{name: "bad header name", args: map[string]any{"url": srv.URL, "headers": map[string]string{"X A": "a"}}, wantErr: `header "X A"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, defs["http_request"], "s1", tt.args)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.wantErr)
				require.Equal(t, tt.wantTransient, tools.IsTransient(err), "transient")
				return
			}
			require.NoError(t, err)
			for _, w := range tt.want {
				require.Contains(t, res.Content, w)
			}
			for _, nw := range tt.notWant {
				require.NotContains(t, res.Content, nw)
			}
		})
	}
}

func TestHTTPRequestBadArguments(t *testing.T) {
	defs := toolSet(t, Config{})
	for _, raw := range []string{`{"url": 5}`, `[1,2]`, `"x"`, `{"url":"http://x","headers":{"a":1}}`} {
		_, err := defs["http_request"].Handler(context.Background(), tools.Request{Args: json.RawMessage(raw)})
		require.ErrorContains(t, err, "invalid arguments", raw)
	}
}

func TestHTTPRequestTimeout(t *testing.T) {
	srv := newServer(t, blockUntilDone(t))
	defs := toolSet(t, Config{Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL})
	require.ErrorContains(t, err, "GET "+srv.URL+": no complete response within 200ms")
	require.True(t, tools.IsTransient(err))
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestHTTPRequestHonoursCancellation(t *testing.T) {
	srv := newServer(t, blockUntilDone(t))
	defs := toolSet(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := defs["http_request"].Handler(ctx, tools.Request{Args: json.RawMessage(`{"url":"` + srv.URL + `"}`)})
		done <- err
	}()
	require.Eventually(t, func() bool { return srv.hits.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "cancelled")
		require.False(t, tools.IsTransient(err))
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not stop when its context was cancelled")
	}
}

func TestHTTPRequestCapsHugeBody(t *testing.T) {
	const size = 1 << 20
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		_, _ = io.WriteString(w, strings.Repeat("é", size/2)) // two bytes each: the cap splits one
	})
	defs := toolSet(t, Config{MaxResponseBytes: 1001})
	res, err := call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL})
	require.NoError(t, err)
	_, body, _ := strings.Cut(res.Content, "\n\n")
	text, note, ok := strings.Cut(body, "\n[truncated: ")
	require.True(t, ok, res.Content)
	require.Equal(t, strings.Repeat("é", 500), text, "the cap keeps whole characters")
	require.Contains(t, note, "the body is larger than 1001 bytes (1048576 bytes in all); only the first 1001 are shown")
	require.Less(t, len(res.Content), 2000)
}

func TestHTTPRequestRedirects(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err == nil {
			if n == 0 {
				_, _ = io.WriteString(w, "arrived")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		// /loop redirects forever.
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	defs := toolSet(t, Config{MaxRedirects: 3})

	res, err := call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL + "/hop/3"})
	require.NoError(t, err)
	require.Contains(t, res.Content, "[redirected to "+srv.URL+"/hop/0]")
	require.True(t, strings.HasSuffix(res.Content, "\n\narrived"))

	srv.hits.Store(0)
	_, err = call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL + "/hop/4"})
	require.ErrorContains(t, err, "stopped after 3 redirects")
	require.False(t, tools.IsTransient(err))

	srv.hits.Store(0)
	_, err = call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL + "/loop"})
	require.ErrorContains(t, err, "GET "+srv.URL+"/loop: stopped after 3 redirects")
	require.EqualValues(t, 4, srv.hits.Load(), "the request and three redirects")
}

func TestNetworkPolicy(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-metadata" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "reached")
	})
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	denyPrivate := &netguard.Policy{DenyPrivate: true}

	tests := []struct {
		name    string
		policy  *netguard.Policy
		tool    string
		url     string
		wantErr string
	}{
		{"metadata address is denied by default", nil, "http_request", "http://169.254.169.254/latest/meta-data/",
			"refused: address 169.254.169.254 is denied by the network policy"},
		{"fetch_page too", nil, "fetch_page", "http://169.254.169.254/",
			"refused: address 169.254.169.254 is denied by the network policy"},
		{"IPv6 metadata address", nil, "http_request", "http://[fd00:ec2::254]/",
			"address fd00:ec2::254 is denied"},
		{"a redirect to it is refused", nil, "http_request", srv.URL + "/to-metadata",
			"address 169.254.169.254 is denied by the network policy"},
		{"DenyPrivate refuses 127.0.0.1", denyPrivate, "http_request", srv.URL,
			"address 127.0.0.1 is private and the network policy denies private addresses"},
		{"DenyPrivate refuses a name that resolves to loopback, at dial time", denyPrivate, "fetch_page", "http://localhost:" + port + "/",
			"is private and the network policy denies private addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.hits.Store(0)
			defs := toolSet(t, Config{Policy: tt.policy})
			_, err := call(t, defs[tt.tool], "s1", map[string]any{"url": tt.url})
			require.ErrorContains(t, err, tt.wantErr)
			require.False(t, tools.IsTransient(err), "a refusal is final")
			if strings.HasPrefix(tt.url, "http://169") || strings.Contains(tt.url, "localhost") || tt.policy != nil {
				require.Zero(t, srv.hits.Load())
			}
		})
	}

	// Loopback stays allowed by default.
	defs := toolSet(t, Config{})
	res, err := call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL})
	require.NoError(t, err)
	require.Contains(t, res.Content, "reached")
}

func TestDialerRefusesBeforeConnecting(t *testing.T) {
	c := newClient(mustDefaults(t, Config{}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := c.transport.DialContext(ctx, "tcp", "169.254.169.254:80")
	if conn != nil {
		_ = conn.Close()
	}
	var denied *deniedError
	require.True(t, errors.As(err, &denied), "got %v", err)
	require.ErrorContains(t, err, "169.254.169.254 is denied by the network policy")
	require.Less(t, time.Since(start), time.Second, "refused at once, not after a connect timeout")
}

func mustDefaults(t *testing.T, cfg Config) Config {
	t.Helper()
	c, err := cfg.withDefaults()
	require.NoError(t, err)
	return c
}

func TestHTTPRequestSecrets(t *testing.T) {
	const token, key, pass = "tok-SECRET-123", "k&y=1 2", "p4ss-w0rd"
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "other saw auth=%q x-api-key=%q plain=%q", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Plain"))
	})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reflect":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Location", "/x?key="+r.URL.Query().Get("key"))
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "auth=%s key=%s rawquery=%s body=%s", r.Header.Get("Authorization"), r.URL.Query().Get("key"), r.URL.RawQuery, b)
		case "/deny":
			http.Error(w, "token "+r.Header.Get("Authorization")+" was refused", http.StatusUnauthorized)
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		}
	})
	store := fakeSecrets{session: "s1", values: map[string]string{"TOKEN": token, "KEY": key, "PASS": pass}}
	defs := toolSet(t, Config{Secrets: store})

	res, err := call(t, defs["http_request"], "s1", map[string]any{
		"url":     srv.URL + "/reflect?key={{secret:KEY}}",
		"method":  "POST",
		"headers": map[string]string{"Authorization": "Bearer {{ secret:TOKEN }}"},
		"body":    `{"password":"{{secret:PASS}}"}`,
	})
	require.NoError(t, err)
	require.Contains(t, res.Content, "auth=Bearer [secret:TOKEN] key=[secret:KEY] rawquery=key=[secret:KEY] body={\"password\":\"[secret:PASS]\"}")
	require.Contains(t, res.Content, "Location: /x?key=[secret:KEY]")
	for _, v := range []string{token, key, pass, "k%26y%3D1+2"} {
		require.NotContains(t, res.Content, v)
	}

	_, err = call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL + "/deny", "headers": map[string]string{"Authorization": "{{secret:TOKEN}}"}})
	require.ErrorContains(t, err, "401 Unauthorized: token [secret:TOKEN] was refused")
	require.NotContains(t, err.Error(), token)

	// A secret header does not follow a redirect to another host; a plain one does.
	res, err = call(t, defs["http_request"], "s1", map[string]any{"url": srv.URL + "/away",
		"headers": map[string]string{"X-Api-Key": "{{secret:TOKEN}}", "X-Plain": "visible"}})
	require.NoError(t, err)
	require.Contains(t, res.Content, `other saw auth="" x-api-key="" plain="visible"`)

	// Missing secrets: not stored, another session's, no store at all.
	srv.hits.Store(0)
	for _, tc := range []struct {
		name    string
		cfg     Config
		session string
	}{
		{"not stored", Config{Secrets: store}, "s1"},
		{"other session", Config{Secrets: fakeSecrets{session: "s2", values: map[string]string{"GH": "x"}}}, "s1"},
		{"no store", Config{}, "s1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, toolSet(t, tc.cfg)["http_request"], tc.session, map[string]any{
				"url": srv.URL + "/reflect", "headers": map[string]string{"Authorization": "token {{secret:GH}}"}})
			require.ErrorContains(t, err, "secret GH is missing: store it with store_secret(name=\"GH\", value=...)")
			require.False(t, tools.IsTransient(err))
		})
	}
	require.Zero(t, srv.hits.Load(), "nothing is sent when a secret is missing")
}

func TestHTTPRequestCache(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "live "+r.Method) })
	cache := newMemCache()
	defs := toolSet(t, Config{Cache: cache})
	hr := defs["http_request"]

	getArgs := map[string]any{"url": srv.URL + "/a"}
	raw, _ := json.Marshal(getArgs)
	key := tools.HTTPRequestCacheKey("s1", string(raw))

	// A miss goes to the network and does not write: pass 3 does (K2).
	res, err := call(t, hr, "s1", getArgs)
	require.NoError(t, err)
	require.Contains(t, res.Content, "live GET")
	gets, sets := cache.snapshot()
	require.Equal(t, []string{key}, gets)
	require.Empty(t, sets, "http_request never writes the cache itself")

	// A hit is answered from the cache, once marked even if stored marked.
	cache.put(key, cachedNote+"HTTP/1.1 200 OK\n\ncached body")
	res, err = call(t, hr, "s1", getArgs)
	require.NoError(t, err)
	require.Equal(t, cachedNote+"HTTP/1.1 200 OK\n\ncached body", res.Content)
	require.True(t, res.FromCache, "a cache hit is marked so that pass 3 does not write it back")
	require.EqualValues(t, 1, srv.hits.Load())

	// Another session does not see it.
	res, err = call(t, hr, "s2", getArgs)
	require.NoError(t, err)
	require.Contains(t, res.Content, "live GET")

	// Methods with effects never read it.
	postArgs := map[string]any{"url": srv.URL + "/a", "method": "POST"}
	praw, _ := json.Marshal(postArgs)
	cache.put(tools.HTTPRequestCacheKey("s1", string(praw)), "stale")
	before, _ := cache.snapshot()
	res, err = call(t, hr, "s1", postArgs)
	require.NoError(t, err)
	require.Contains(t, res.Content, "live POST")
	after, sets := cache.snapshot()
	require.Equal(t, len(before), len(after))
	require.Empty(t, sets)
}

func TestHTTPRequestEffectAndSubject(t *testing.T) {
	def := toolSet(t, Config{})["http_request"]
	tests := []struct {
		args    string
		effect  tools.SideEffect
		subject string
	}{
		{`{"url":"https://x/a"}`, tools.ReadOnly, "GET https://x/a"},
		{`{"url":"https://x/a","method":"get"}`, tools.ReadOnly, "GET https://x/a"},
		{`{"url":"https://x/a","method":"HEAD"}`, tools.ReadOnly, "HEAD https://x/a"},
		{`{"url":"https://x/a","method":"OPTIONS"}`, tools.ReadOnly, "OPTIONS https://x/a"},
		{`{"url":"https://x/a","method":""}`, tools.ReadOnly, "GET https://x/a"},
		{`{"url":"https://x/a","method":"PUT"}`, tools.Idempotent, "PUT https://x/a"},
		{`{"url":"https://x/a","method":"delete"}`, tools.Idempotent, "DELETE https://x/a"},
		{`{"url":"https://x/a","method":"POST"}`, tools.AtMostOnce, "POST https://x/a"},
		{`{"url":"https://x/a","method":"PATCH"}`, tools.AtMostOnce, "PATCH https://x/a"},
		{`not json`, tools.AtMostOnce, ""},
		{`{"url":"https://x/a","method":7}`, tools.AtMostOnce, ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.effect, tools.EffectOf(&def, json.RawMessage(tt.args)), tt.args)
		require.Equal(t, tt.subject, def.Subject(json.RawMessage(tt.args)), tt.args)
	}
	require.Equal(t, tools.AtMostOnce, def.SideEffect)
}
