package openapitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"

	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Transport is an http.RoundTripper that checks every API response it
// carries against the document: a response that does not match is an
// error of the request, and an event of an event stream that does not
// match is an error of the stream's Read. Requests outside /api/, the
// page's form posts (answered with redirects for people) and, when Hosts
// is set, requests to other hosts pass unchecked.
type Transport struct {
	// Base carries the requests. Default http.DefaultTransport as it was
	// when Install ran.
	Base http.RoundTripper
	// Only, when set, keeps the checks to the hosts it accepts.
	Only func(host string) bool
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || !t.checks(req) {
		return resp, err
	}
	if resp.StatusCode == http.StatusTemporaryRedirect && path.Clean(req.URL.Path) != req.URL.Path {
		// net/http's mux sends an unclean path (dot segments, doubled
		// slashes) to its clean form; the answer there is checked.
		return resp, nil
	}
	c, cerr := Shared()
	if cerr != nil {
		resp.Body.Close()
		return nil, cerr
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := c.Response(req, resp.StatusCode, resp.Header, nil); err != nil {
			resp.Body.Close()
			return nil, err
		}
		resp.Body = &eventBody{rc: resp.Body, c: c}
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := c.Response(req, resp.StatusCode, resp.Header, body); err != nil {
		if !c.undocumentedPath(req) {
			return nil, err
		}
		// A path or method that the API does not have: its answer is
		// still the API's error shape, 404 or 405.
		if (resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed) || c.errorShape(body) != nil {
			return nil, fmt.Errorf("%s %s (no such endpoint) answered %d %s, not a 404 or 405 error of the document's Error shape",
				req.Method, req.URL.Path, resp.StatusCode, body)
		}
	}
	return resp, nil
}

func (t *Transport) checks(req *http.Request) bool {
	if !strings.HasPrefix(req.URL.Path, "/api/") {
		return false
	}
	if req.URL.Path == "/api/v1/mcp" {
		// The MCP gateway speaks MCP's JSON-RPC over streamable HTTP
		// (Z1), which the MCP specification describes, not this document.
		return false
	}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return false
	}
	return t.Only == nil || t.Only(req.URL.Host)
}

// undocumentedPath tells whether the document has no operation for the
// request's method and path.
func (c *Checker) undocumentedPath(req *http.Request) bool {
	r := req.Clone(req.Context())
	r.Body = http.NoBody
	c.mu.Lock()
	defer c.mu.Unlock()
	_, errs := findPath(c, r)
	return len(errs) > 0
}

func (c *Checker) errorShape(body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.model.Components.Schemas.Get("Error")
	if !ok {
		return errors.New("no Error component")
	}
	if ok, errs := c.schema.ValidateSchemaBytes(s.Schema(), body); !ok {
		return errors.New(describe(errs))
	}
	return nil
}

// eventBody checks each data: line of an event stream as it is read.
type eventBody struct {
	rc      io.ReadCloser
	c       *Checker
	partial []byte
	err     error
}

func (b *eventBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	b.partial = append(b.partial, p[:n]...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		line := b.partial[:i]
		b.partial = b.partial[i+1:]
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if cerr := b.c.Event(bytes.TrimRight(d, "\r")); cerr != nil {
				b.err = cerr
				return 0, cerr
			}
		}
	}
	return n, err
}

func (b *eventBody) Close() error { return b.rc.Close() }

var installMu sync.Mutex

// Install makes http.DefaultTransport check API responses (of the hosts
// only accepts, or of every host when only is nil) for the rest of the
// test binary.
func Install(only func(host string) bool) {
	installMu.Lock()
	defer installMu.Unlock()
	if _, ok := http.DefaultTransport.(*Transport); ok {
		return
	}
	http.DefaultTransport = &Transport{Base: http.DefaultTransport, Only: only}
}

// Hosts is a set of hosts to check, safe for concurrent use.
type Hosts struct {
	mu sync.Mutex
	m  map[string]bool
}

// Add adds the host of a base URL ("http://127.0.0.1:8780").
func (h *Hosts) Add(baseURL string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]bool{}
	}
	h.m[strings.TrimPrefix(strings.TrimPrefix(baseURL, "http://"), "https://")] = true
}

// Has tells whether host was added.
func (h *Hosts) Has(host string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[host]
}

func findPath(c *Checker, r *http.Request) (*v3.PathItem, []*liberrors.ValidationError) {
	item, errs, _ := paths.FindPath(r, c.model, nil)
	if len(errs) == 0 && item != nil && helpers.ExtractOperation(r, item) == nil {
		return item, []*liberrors.ValidationError{{Message: r.Method + " is not an operation of " + r.URL.Path}}
	}
	return item, errs
}
