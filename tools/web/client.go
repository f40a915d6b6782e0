package web

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/toolround/toolround/tools/netguard"
)

// client makes the HTTP exchanges of the tools through the network policy.
type client struct {
	policy       netguard.Policy
	transport    *http.Transport
	timeout      time.Duration
	maxRedirects int
	userAgent    string
}

// deniedError is a connection the network policy refused. It is never
// transient: retrying cannot change the answer.
type deniedError struct{ err error }

func (e *deniedError) Error() string { return "refused: " + e.err.Error() }
func (e *deniedError) Unwrap() error { return e.err }

type redirectError struct{ max int }

// secretBodyError stops a redirect that would send a body holding a secret
// to another host (T9).
type secretBodyError struct {
	status int
	to     string
}

func (e *secretBodyError) Error() string {
	return fmt.Sprintf("stopped at a redirect (%d) to %s: the request body holds a secret and is never sent to another host or over plain http; "+
		"if that host should have it, send the request to it directly", e.status, e.to)
}

// guard says what of a request carries secrets, and so must not follow a
// redirect to another host, and how far past the limit to read so that
// redaction sees every value that starts before the cut whole.
type guard struct {
	headers []string // dropped on a redirect to another host or to plain http
	body    bool     // the exchange stops at such a redirect instead
	extra   int64
}

// credentialHeaders are dropped on a redirect to another host or from
// https to http whatever they hold, as the headers that hold a secret are.
// net/http drops them only on a redirect to a host that is not the first
// or below it, and keeps them on the way to plain http.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"}

func (e *redirectError) Error() string {
	return fmt.Sprintf("stopped after %d redirects", e.max)
}

func newClient(cfg Config) *client {
	p := *cfg.Policy
	d := p.Dialer()
	d.Timeout = min(d.Timeout, cfg.Timeout)
	check := d.Control
	d.Control = func(network, address string, c syscall.RawConn) error {
		if err := check(network, address, c); err != nil {
			return &deniedError{err}
		}
		return nil
	}
	t := p.Transport()
	t.DialContext = d.DialContext
	t.MaxResponseHeaderBytes = 1 << 20
	return &client{policy: p, transport: t, timeout: cfg.Timeout, maxRedirects: cfg.MaxRedirects, userAgent: cfg.UserAgent}
}

// checkURL refuses what is not an absolute http(s) URL, and a literal
// address the policy denies, before anything is dialled.
func (c *client) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %w", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("want an absolute http:// or https:// URL, got %q", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	if err := c.policy.CheckHost(u.Hostname()); err != nil {
		return nil, &deniedError{err}
	}
	return u, nil
}

// response is one finished exchange with its body read up to a limit.
type response struct {
	status    string // "200 OK"
	code      int
	proto     string
	header    http.Header
	body      []byte
	truncated bool   // the body went on past the limit
	more      []byte // what was read past the limit (guard.extra at most)
	length    int64  // Content-Length, -1 when unknown
	finalURL  string
}

// exchange sends req, follows redirects and reads at most limit bytes of the
// body, and g.extra more into response.more. g (may be nil) says what
// carries secrets: such headers are dropped on a redirect to another host,
// and such a body stops the exchange there.
func (c *client) exchange(ctx context.Context, req *http.Request, limit int64, g *guard) (*response, error) {
	if g == nil {
		g = &guard{}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req = req.WithContext(ctx)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	hc := &http.Client{
		Transport: c.transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) > c.maxRedirects {
				return &redirectError{max: c.maxRedirects}
			}
			if _, err := c.checkURL(next.URL.String()); err != nil {
				return err
			}
			// net/http sends the previous URL as the Referer, and that URL
			// may hold a secret in its path or query: only a Referer the
			// call set itself goes on (and, like any header that holds a
			// secret, not past the first host).
			if next.Header.Get("Referer") != via[0].Header.Get("Referer") {
				next.Header.Del("Referer")
			}
			first := via[0].URL
			if next.URL.Host != first.Host || (first.Scheme == "https" && next.URL.Scheme != "https") {
				if g.body && next.Body != nil && next.Body != http.NoBody {
					status := 0
					if next.Response != nil {
						status = next.Response.StatusCode
					}
					return &secretBodyError{status: status, to: next.URL.Scheme + "://" + next.URL.Host}
				}
				for _, h := range credentialHeaders {
					next.Header.Del(h)
				}
				for _, h := range g.headers {
					next.Header.Del(h)
				}
			}
			return nil
		},
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+max(g.extra, 1)))
	if err != nil {
		return nil, err
	}
	out := &response{
		status: resp.Status, code: resp.StatusCode, proto: resp.Proto, header: resp.Header,
		length: resp.ContentLength, finalURL: resp.Request.URL.String(),
	}
	if int64(len(body)) > limit {
		out.body, out.more, out.truncated = body[:limit], body[limit:], true
	} else {
		out.body = body
	}
	return out, nil
}

// describe turns a failed exchange into a message without the request URL
// (which may hold a secret), and reports whether the failure is passing.
func (c *client) describe(ctx context.Context, err error) (msg string, transient bool) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var denied *deniedError
	var redirect *redirectError
	var secretBody *secretBodyError
	var dnsErr *net.DNSError
	var certErr *x509.CertificateInvalidError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &denied):
		return denied.Error(), false
	case errors.As(err, &secretBody):
		return secretBody.Error(), false
	case errors.As(err, &redirect):
		return redirect.Error() + ": the chain of redirects is too long", false
	case ctx.Err() != nil:
		return "cancelled: " + ctx.Err().Error(), false
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("no complete response within %s", c.timeout), true
	case errors.As(err, &dnsErr):
		why := dnsErr.Err
		if dnsErr.IsNotFound {
			why = "no such host"
		}
		return fmt.Sprintf("cannot resolve host %q: %s", dnsErr.Name, why), !dnsErr.IsNotFound
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "TLS certificate not accepted: " + err.Error(), false
	}
	if addr, why, ok := dialFailure(err); ok {
		return fmt.Sprintf("cannot connect to %s: %s", addr, why), true
	}
	return err.Error(), true
}

// dialFailure reads a failed connection: the address it was made to and
// why, "connection refused" rather than "dial tcp 127.0.0.1:9: connect:
// connection refused".
func dialFailure(err error) (addr, why string, ok bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "the server", "connection refused", true
		}
		return "", "", false
	}
	addr = "the server"
	if op.Addr != nil {
		addr = op.Addr.String()
	}
	why = op.Err.Error()
	var errno syscall.Errno
	if errors.As(op.Err, &errno) {
		why = errno.Error()
	}
	return addr, why, true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
