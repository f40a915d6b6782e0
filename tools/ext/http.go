package ext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// endpoint is an ext_* tool.
type endpoint struct {
	name      string
	url       string
	headers   map[string]string
	timeout   time.Duration
	limit     int
	client    *http.Client
	retryable bool
}

// run POSTs the arguments as JSON. A 2xx body is the result; any other
// status is the tool's failure, with the status and the start of the body.
func (e *endpoint) run(ctx context.Context, req tools.Request) (tools.Result, error) {
	args := bytes.TrimSpace(req.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(args))
	if err != nil {
		return tools.Result{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("User-Agent", "toolround")
	hreq.Header.Set("X-Tool-Name", e.name)
	if req.CallID != "" {
		hreq.Header.Set("X-Tool-Call-Id", req.CallID)
	}
	if req.OperationID != "" {
		// The POST is unsafe: the operation id lets an endpoint that honours
		// Idempotency-Key apply a repeated call once (SPEC R).
		hreq.Header.Set(round.IdempotencyHeader, req.OperationID)
	}
	for k, v := range e.headers {
		ev, err := expandEnv(v)
		if err != nil {
			return tools.Result{}, fmt.Errorf("header %s: %w", k, err)
		}
		hreq.Header.Set(k, ev)
	}
	where := "POST " + redact(e.url)

	resp, err := e.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return tools.Result{}, e.transient(fmt.Errorf("%s: no answer within %s", where, e.timeout))
			}
			return tools.Result{}, fmt.Errorf("%s: cancelled: %w", where, ctx.Err())
		}
		err = fmt.Errorf("%s: %w", where, unwrapURL(err))
		if passing(err) {
			return tools.Result{}, e.transient(err)
		}
		return tools.Result{}, err
	}
	defer resp.Body.Close()
	body := text.NewWriter(e.limit)
	if _, err := io.Copy(body, resp.Body); err != nil {
		return tools.Result{}, e.transient(fmt.Errorf("%s: reading the response: %w", where, err))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return tools.Text(body.String()), nil
	}
	err = fmt.Errorf("%s: HTTP %s%s", where, resp.Status, quote(body, text.NewWriter(0)))
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return tools.Result{}, e.transient(err)
	}
	return tools.Result{}, err
}

// transient marks a passing failure for retry when the tool allows one.
func (e *endpoint) transient(err error) error {
	if e.retryable {
		return tools.Transient(err)
	}
	return err
}

// passing reports network failures worth a retry: refused or reset
// connections and timeouts. A refusal by the network policy is not one.
func passing(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapURL drops the *url.Error wrapper, whose message repeats the URL
// with its query string.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact is the URL without its query and user info, which may hold
// credentials, for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the configured URL"
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
}
