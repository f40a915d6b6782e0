package web

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// seen is one request as a server received it: every header, the URL and
// the body.
type seen struct {
	server string // "A" or "B"
	tls    bool
	dump   string
	ref    string // the Referer header
}

// leakRecorder is a pair of servers that record every request they get
// and answer the n-th request of a case with the n-th hop of its plan.
type leakRecorder struct {
	mu   sync.Mutex
	reqs []seen
	plan []string
	code int
	n    atomic.Int32

	a    string // host:port of A, which speaks https and http on one port
	b    string // host:port of B, another loopback host, http only
	tlsC *tls.Config
}

func (l *leakRecorder) handler(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var d strings.Builder
		fmt.Fprintf(&d, "%s %s %s\nHost: %s\n", r.Method, r.RequestURI, r.Proto, r.Host)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&d, "%s: %s\n", k, strings.Join(r.Header.Values(k), ", "))
		}
		d.Write(body)
		l.mu.Lock()
		l.reqs = append(l.reqs, seen{server: name, tls: r.TLS != nil, dump: d.String(), ref: r.Header.Get("Referer")})
		plan, code := l.plan, l.code
		l.mu.Unlock()
		if i := int(l.n.Add(1)) - 1; i < len(plan) {
			w.Header().Set("Location", plan[i])
			w.WriteHeader(code)
			return
		}
		_, _ = io.WriteString(w, "arrived")
	}
}

func (l *leakRecorder) start(plan []string, code int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs, l.plan, l.code = nil, plan, code
	l.n.Store(0)
}

func (l *leakRecorder) received() []seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seen(nil), l.reqs...)
}

// sniffListener serves TLS and plain HTTP on one port, telling them apart
// by the first byte, so that https://A and http://A are the same host.
type sniffListener struct {
	net.Listener
	conf *tls.Config
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (l sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	first, err := r.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	pc := peekedConn{Conn: c, r: r}
	if err == nil && first[0] == 0x16 { // a TLS handshake record
		return tls.Server(pc, l.conf), nil
	}
	return pc, nil
}

func newLeakRecorder(t *testing.T) *leakRecorder {
	t.Helper()
	l := &leakRecorder{}
	// The test certificate of httptest names 127.0.0.1.
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	l.tlsC = ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()

	la, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a := &http.Server{Handler: l.handler("A"), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.Serve(sniffListener{Listener: la, conf: ts.TLS.Clone()}) }()
	t.Cleanup(func() { _ = a.Close() })
	l.a = la.Addr().String()

	lb, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	b := &http.Server{Handler: l.handler("B"), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.Serve(lb) }()
	t.Cleanup(func() { _ = b.Close() })
	l.b = lb.Addr().String()
	return l
}

// leakTool is http_request with a client that trusts the test certificate.
func leakTool(t *testing.T, l *leakRecorder, values map[string]string) tools.Definition {
	t.Helper()
	cfg, err := Config{Secrets: fakeSecrets{session: "s1", values: values}, MaxRedirects: 8}.withDefaults()
	require.NoError(t, err)
	w := &web{cfg: cfg, client: newClient(cfg)}
	w.client.transport.TLSClientConfig = l.tlsC
	return w.httpRequestDef()
}

// forms are the ways a value may show in a request: each encoding, and
// how it goes in a URL or a Basic header.
func forms(v string) map[string]string {
	out := secretstest.Encodings(v)
	out["url escape"] = escapeURL(v)
	out["basic u:"] = base64.StdEncoding.EncodeToString([]byte("u:" + v))
	return out
}

// A secret the call put in the URL (user info, path, query) or a header,
// and the Authorization and Cookie headers whatever they hold, never reach
// another host or a plain-http hop after https, on any redirect code and
// chain; and no request carries a Referer the call did not set (net/http
// would send the previous URL, secret and all). Checked at the servers
// that receive the requests.
func TestHTTPRequestRedirectsCarryNoSecretElsewhere(t *testing.T) {
	l := newLeakRecorder(t)
	const secret = "s3cr3t-Value/42+x"
	const literalAuth, literalCookie = "Bearer literal-token-7781", "sid=literal-cookie-5523"
	def := leakTool(t, l, map[string]string{"K": secret})

	placements := []struct {
		name    string
		url     func(base string) string
		headers map[string]string
		values  []string // what must not show
	}{
		{"query", func(b string) string { return b + "/start?k={{secret:K}}&x=1" }, nil, []string{secret}},
		{"path", func(b string) string { return b + "/p/{{secret:K}}/start" }, nil, []string{secret}},
		{"userinfo", func(b string) string {
			scheme, host, _ := strings.Cut(b, "://")
			return scheme + "://u:{{secret:K}}@" + host + "/start"
		}, nil, []string{secret}},
		{"header", func(b string) string { return b + "/start" }, map[string]string{"X-Api-Key": "{{secret:K}}"}, []string{secret}},
		{"header lower case", func(b string) string { return b + "/start" }, map[string]string{"x-api-key": "k={{secret:K}}"}, []string{secret}},
		{"header upper case", func(b string) string { return b + "/start" }, map[string]string{"X-SESSION-TOKEN": "{{secret:K}}"}, []string{secret}},
		{"authorization lower case", func(b string) string { return b + "/start" }, map[string]string{"authorization": "Bearer {{secret:K}}"}, []string{secret}},
		{"literal authorization", func(b string) string { return b + "/start" }, map[string]string{"AUTHORIZATION": literalAuth}, []string{literalAuth, "literal-token-7781"}},
		{"literal cookie", func(b string) string { return b + "/start" }, map[string]string{"cookie": literalCookie}, []string{"literal-cookie-5523"}},
		{"secret referer", func(b string) string { return b + "/start" }, map[string]string{"Referer": "https://app.example/?t={{secret:K}}"}, []string{secret}},
	}
	httpsA, httpA, httpB := "https://"+l.a, "http://"+l.a, "http://"+l.b
	routes := []struct {
		name  string
		first string
		plan  []string
	}{
		{"to another host", httpA, []string{httpB + "/in"}},
		{"https to another host", httpsA, []string{httpB + "/in"}},
		{"back to the first host", httpA, []string{httpB + "/in", httpA + "/back"}},
		{"same host, then another", httpA, []string{"/again?y=2", httpB + "/in"}},
		{"https to http on the same host", httpsA, []string{httpA + "/plain"}},
		{"https to http, then another host", httpsA, []string{httpA + "/plain", httpB + "/in"}},
		{"https to http and back", httpsA, []string{httpA + "/plain", httpsA + "/secure"}},
		{"scheme-relative to another host", httpA, []string{"//" + l.b + "/in"}},
		{"a long chain", httpsA, []string{"/1", httpsA + "/2", httpB + "/3", httpsA + "/4", httpA + "/5"}},
	}
	codes := []int{301, 302, 303, 307, 308}

	for _, p := range placements {
		for _, rt := range routes {
			for _, code := range codes {
				t.Run(fmt.Sprintf("%s/%s/%d", p.name, rt.name, code), func(t *testing.T) {
					l.start(rt.plan, code)
					res, err := call(t, def, "s1", map[string]any{"url": p.url(rt.first), "headers": p.headers})
					require.NoError(t, err)
					require.True(t, strings.HasSuffix(res.Content, "arrived"), res.Content)
					got := l.received()
					require.Len(t, got, len(rt.plan)+1)
					firstTLS := strings.HasPrefix(rt.first, "https:")
					explicitRef := p.headers["Referer"] != ""
					for i, r := range got {
						if i > 0 && !explicitRef {
							require.Empty(t, r.ref, "request %d got a Referer the call did not set", i)
						}
						if r.server == "A" && (r.tls || !firstTLS) {
							continue // where the call sent it
						}
						for _, v := range p.values {
							for form, enc := range forms(v) {
								require.NotContains(t, r.dump, enc, "request %d (%s, tls=%v) holds the %s form:\n%s", i, r.server, r.tls, form, r.dump)
							}
						}
					}
				})
			}
		}
	}
}

// A body holding a secret is never sent to another host or over plain
// http after https, even on the same host: the exchange stops at that
// redirect; redirects that drop the body go on.
func TestHTTPRequestSecretBodyStopsAtADowngrade(t *testing.T) {
	l := newLeakRecorder(t)
	const secret = "body-s3cret-991"
	def := leakTool(t, l, map[string]string{"K": secret})
	httpsA, httpA, httpB := "https://"+l.a, "http://"+l.a, "http://"+l.b
	for _, plan := range [][]string{
		{httpA + "/plain"},
		{httpB + "/in"},
		{"/same", httpA + "/plain"},
		{"/same", httpB + "/in", httpsA + "/back"},
	} {
		for _, code := range []int{307, 308} {
			t.Run(fmt.Sprintf("%v/%d", plan, code), func(t *testing.T) {
				l.start(plan, code)
				_, err := call(t, def, "s1", map[string]any{"url": httpsA + "/start", "method": "PUT", "body": `{"p":"{{secret:K}}"}`})
				require.ErrorContains(t, err, "the request body holds a secret")
				for i, r := range l.received() {
					if r.server == "A" && r.tls {
						continue
					}
					require.NotContains(t, r.dump, secret, "request %d", i)
				}
			})
		}
	}
	// 303 turns the PUT into a GET: nothing of the body goes on.
	l.start([]string{httpA + "/plain"}, 303)
	_, err := call(t, def, "s1", map[string]any{"url": httpsA + "/start", "method": "PUT", "body": `{"p":"{{secret:K}}"}`})
	require.NoError(t, err)
	got := l.received()
	require.Len(t, got, 2)
	require.NotContains(t, got[1].dump, secret)
	require.True(t, strings.HasPrefix(got[1].dump, "GET /plain"), got[1].dump)
}
