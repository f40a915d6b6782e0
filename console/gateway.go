package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// The MCP gateway (Z1-Z4): /api/v1/mcp serves this system's tools to any
// MCP client over streamable HTTP, with the official SDK's server run
// stateless, so any console answers any request. A tools/call goes to the
// workflow that owns the client's run (names.WorkflowGateway), which runs
// it in a round; the request waits for that round's result, with progress
// while it waits. Everything a call needs lives in Temporal: a client that
// disconnects and sends the same call again attaches to it.

// GatewayBackend is what the gateway needs of a Backend.
type GatewayBackend interface {
	// GatewayTools lists what a worker of the task queue may offer.
	GatewayTools(ctx context.Context) ([]round.GatewayTool, error)
	// GatewayCall hands one call to the run's gateway workflow, starting
	// it when needed, and returns where its result will be.
	GatewayCall(ctx context.Context, session, run string, c round.GatewayCall) (round.GatewayTicket, error)
	// Wait waits for a round's result.
	Wait(ctx context.Context, workflowID string) (*round.Result, error)
	// GrantBlob records that a result of session named the blob ref;
	// ReadBlob reads a blob a result of session named, ErrNotFound for
	// any other (Z4).
	GrantBlob(ctx context.Context, session, ref string) error
	ReadBlob(ctx context.Context, session, ref string) (string, error)
}

// blobURI is the gateway's name of a blob reference (Z4).
const blobURI = "toolround://blob/"

// gatewayPreview is how much of a large result the text content carries
// beside its resource link.
const gatewayPreview = 16 << 10

// GatewayOptions configure the MCP gateway.
type GatewayOptions struct {
	// Tools are the built-ins the gateway lists (MCP_GATEWAY_TOOLS); nil:
	// the read-only ones, edit_file and run_command. Tools of other
	// sources (user tools, MCP servers', configured ones) are always
	// listed.
	Tools []string
	// ProgressEvery is how often a waiting call with a progress token gets
	// progress (Z3); default 15 s.
	ProgressEvery time.Duration
	// ListFor is how long a tool listing is reused; default 5 s.
	ListFor time.Duration
	// OAuth takes OAuth 2.1 access tokens beside the console's tokens
	// (Z1).
	OAuth GatewayOAuth
	// Approve is MCP_GATEWAY_APPROVE: "elicitation" lets the person at
	// the MCP client of a token marked approve=elicitation approve or deny
	// its plain approval waits, through an input request (Z3).
	Approve string
}

// GatewayPath is the gateway's endpoint.
const GatewayPath = "/api/v1/mcp"

// defaultGatewayBuiltins are the built-ins listed beside the read-only
// ones when MCP_GATEWAY_TOOLS is not set.
var defaultGatewayBuiltins = []string{"edit_file", "run_command"}

type gateway struct {
	s    *Server
	b    GatewayBackend
	opts GatewayOptions
	h    http.Handler

	mu     sync.Mutex
	listed []gatewayTool
	at     time.Time
}

// gatewayTool is one listed tool: its MCP name and the tool it runs.
type gatewayTool struct {
	name string
	t    round.GatewayTool
}

func (s *Server) newGateway() *gateway {
	b, ok := s.b.(GatewayBackend)
	if !ok {
		return nil
	}
	o := s.opts.Gateway
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 15 * time.Second
	}
	if o.ListFor <= 0 {
		o.ListFor = 5 * time.Second
	}
	g := &gateway{s: s, b: b, opts: o}
	g.h = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := r.Context().Value(gatewayServerKey{}).(*mcp.Server)
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	return g
}

type gatewayServerKey struct{}

// discardLog quiets the SDK's per-request server, which a stateless
// endpoint makes for every request.
var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// serveGateway authenticates a bearer token (Z1), checks Host and Origin,
// the session and run (Z2), and hands the request to the SDK's handler
// with a server for that run.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	g := s.gw
	if g == nil {
		writeError(w, round.CodeNotFound, "this console reaches no workers: the MCP gateway is off")
		return
	}
	if why := g.badHost(r); why != "" {
		http.Error(w, why, http.StatusForbidden)
		return
	}
	p, ok := s.authenticate(r)
	if !ok || p.Via != "api" {
		if p, ok = s.gatewayToken(w, r); !ok {
			return
		}
	}
	q := r.URL.Query()
	session, run := q.Get("session"), q.Get("run")
	if run == "" {
		run = p.Name
	}
	if err := gatewayIDs(session, run); err != nil {
		writeError(w, round.CodeBadRequest, err.Error())
		return
	}
	if !p.allows(session) {
		forbidSession(w, p, session)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRoundBody)
	}
	ts, err := g.tools(r.Context())
	if err != nil {
		s.log.Warn("mcp gateway: listing tools failed", "err", err)
		writeError(w, round.CodeNoWorker, "the gateway could not list its tools: "+err.Error())
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), gatewayServerKey{}, g.server(p, session, run, ts)))
	if g.intercept(w, r, p, session, run, ts) {
		return
	}
	g.h.ServeHTTP(w, r)
}

// gatewayToken takes an OAuth access token when the gateway takes them
// (Z1), or answers 401 or 403; false when it answered.
func (s *Server) gatewayToken(w http.ResponseWriter, r *http.Request) (principal, bool) {
	a := s.gwAuth
	if a == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolround"`)
		writeError(w, codeUnauthorized, "send Authorization: Bearer TOKEN (an agent token of CONSOLE_TOKENS)")
		return principal{}, false
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		w.Header().Set("WWW-Authenticate", a.challenge(s.opts.BaseURL, ""))
		writeError(w, codeUnauthorized, "send Authorization: Bearer TOKEN: an agent token of CONSOLE_TOKENS or an access token of "+a.o.Issuer)
		return principal{}, false
	}
	p, err := a.verify(r.Context(), tok)
	switch {
	case errors.Is(err, errForbiddenToken):
		w.Header().Set("WWW-Authenticate", a.challenge(s.opts.BaseURL, "insufficient_scope"))
		writeError(w, codeForbidden, err.Error())
		return principal{}, false
	case err != nil:
		w.Header().Set("WWW-Authenticate", a.challenge(s.opts.BaseURL, "invalid_token"))
		writeError(w, codeUnauthorized, "the access token was refused: "+err.Error())
		return principal{}, false
	}
	return p, true
}

// gatewayIDs checks the session and run a client names (T6, G1).
func gatewayIDs(session, run string) error {
	switch {
	case session == "":
		return errors.New("name the session: " + GatewayPath + "?session=S&run=R")
	case !names.ValidIdentifier(session):
		return fmt.Errorf("session %q: use letters, digits, '.', '_' and '-'", session)
	case !names.ValidIdentifier(run) || !names.ValidIdentifier(names.GatewayRunID(run)):
		return fmt.Errorf("run %q: use letters, digits, '.', '_' and '-'", run)
	}
	return nil
}

// badHost says why a request's Host or Origin is not this console's (DNS
// rebinding, Z1), or "".
func (g *gateway) badHost(r *http.Request) string {
	if !g.hostOK(r.Host) {
		return "Host " + r.Host + " is not this console's"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !g.hostOK(u.Host) {
			return "Origin " + o + " is not this console's"
		}
	}
	return ""
}

// hostOK: the host of CONSOLE_URL, or a loopback name on its port.
func (g *gateway) hostOK(host string) bool {
	base, err := url.Parse(g.s.opts.BaseURL)
	if err != nil || base.Host == "" {
		return false
	}
	if strings.EqualFold(host, base.Host) {
		return true
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, ""
	}
	if port != base.Port() {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return isLoopbackHost(base.Hostname())
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback() && isLoopbackHost(base.Hostname())
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// tools is the listing, reused for ListFor.
func (g *gateway) tools(ctx context.Context) ([]gatewayTool, error) {
	g.mu.Lock()
	if g.listed != nil && time.Since(g.at) < g.opts.ListFor {
		ts := g.listed
		g.mu.Unlock()
		return ts, nil
	}
	g.mu.Unlock()
	all, err := g.b.GatewayTools(ctx)
	if err != nil {
		return nil, err
	}
	ts := g.pick(all)
	g.mu.Lock()
	g.listed, g.at = ts, time.Now()
	g.mu.Unlock()
	return ts, nil
}

// pick keeps the tools the gateway lists and names them (Z2).
func (g *gateway) pick(all []round.GatewayTool) []gatewayTool {
	var out []gatewayTool
	taken := map[string]bool{}
	for _, t := range all {
		if t.Interactive {
			continue
		}
		if t.Source == string(tools.SourceBuiltin) {
			allowed := (t.ReadOnly && !t.Agent) || slices.Contains(defaultGatewayBuiltins, t.Spec.Name)
			if g.opts.Tools != nil {
				allowed = slices.Contains(g.opts.Tools, t.Spec.Name)
			}
			if !allowed {
				continue
			}
		}
		name := GatewayToolName(t.Spec.Name)
		if taken[name] {
			continue
		}
		taken[name] = true
		out = append(out, gatewayTool{name: name, t: t})
	}
	return out
}

var gatewayNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// GatewayToolName is a tool's MCP name (Z2): its own when that is 1-64
// characters of [A-Za-z0-9_.-]; otherwise the allowed characters of it,
// cut, with a hash of the whole name after.
func GatewayToolName(name string) string {
	if gatewayNameRE.MatchString(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:8]
	s := b.String()
	if len(s) > 64-len(suffix) {
		s = s[:64-len(suffix)]
	}
	return s + suffix
}

// server is an MCP server of session and run with the listed tools.
func (g *gateway) server(p principal, session, run string, ts []gatewayTool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolround", Title: "toolround MCP gateway", Version: "1"},
		&mcp.ServerOptions{Logger: discardLog,
			// Prompts are declared, as an empty list: the SDK's server
			// answers prompts/list whatever it declares.
			//lint:ignore SA1019 logging stays declared for the revisions before 2026-07-28, which have it
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Prompts: &mcp.PromptCapabilities{}}})
	for _, t := range ts {
		schema, ok := objectSchema(t.t.Spec.Parameters)
		if !ok {
			continue
		}
		srv.AddTool(&mcp.Tool{
			Name:        t.name,
			Description: t.t.Spec.Description,
			InputSchema: schema,
			Annotations: annotations(t.t),
		}, g.handler(p, session, run, t.t.Spec.Name))
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: blobURI + "{+ref}", Name: "result",
		Description: "the whole of a large tool result of this session", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			ref, ok := strings.CutPrefix(uri, blobURI)
			if !ok || !gatewayRefRE.MatchString(ref) {
				return nil, resourceNotFound(uri)
			}
			text, err := g.b.ReadBlob(ctx, session, cache.BlobPrefix+ref)
			if err != nil {
				// The same answer whether or not it exists elsewhere.
				return nil, resourceNotFound(uri)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
		})
	return srv
}

var gatewayRefRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// resourceNotFound is MCP's -32002 for a resource this client may not
// read, whether or not it exists (Z4).
func resourceNotFound(uri string) error {
	return &jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
}

// objectSchema is a tool's parameters as an object schema (MCP requires
// one); false for a schema of another type.
func objectSchema(raw json.RawMessage) (map[string]any, bool) {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, false
		}
	}
	switch m["type"] {
	case nil:
		m["type"] = "object"
	case "object":
	default:
		return nil, false
	}
	return m, true
}

// annotations tell this system's truth about a tool (Z2).
func annotations(t round.GatewayTool) *mcp.ToolAnnotations {
	f := false
	tr := true
	a := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, IdempotentHint: t.ReadOnly, DestructiveHint: &tr, OpenWorldHint: &tr}
	if t.ReadOnly {
		a.DestructiveHint = &f
	}
	if t.Workspace && t.Source == string(tools.SourceBuiltin) {
		a.OpenWorldHint = &f
	}
	return a
}

// handler runs one tools/call through the run's gateway workflow.
func (g *gateway) handler(p principal, session, run, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := json.RawMessage(`{}`)
		if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
			args = req.Params.Arguments
		}
		canon, err := canonicalJSON(args)
		if err != nil {
			return errorResult("the arguments are not a JSON object: " + err.Error()), nil
		}
		t, err := g.b.GatewayCall(ctx, session, run, round.GatewayCall{Tool: tool, Args: canon})
		if err != nil {
			return nil, fmt.Errorf("the gateway could not take the call: %w", err)
		}
		if p.Elicit && g.opts.Approve == "elicitation" && multiRoundTrip(req) {
			if asked := g.elicit(ctx, req, p, t); asked != nil {
				return asked, nil
			}
		}
		stop := g.progress(ctx, req)
		defer stop()
		res, err := g.b.Wait(ctx, t.WorkflowID)
		if err != nil {
			return nil, fmt.Errorf("round %s: %w", t.WorkflowID, err)
		}
		if out, ok := g.resultFor(ctx, session, t, res); ok {
			return out, nil
		}
		return nil, fmt.Errorf("round %s has no result for call %s", t.WorkflowID, t.CallID)
	}
}

// resultFor is the call's result in its round's result as MCP content,
// its large result granted to session for resources/read; false when the
// round has none for the call.
func (g *gateway) resultFor(ctx context.Context, session string, t round.GatewayTicket, res *round.Result) (*mcp.CallToolResult, bool) {
	for _, r := range res.Results {
		if r.CallID != t.CallID {
			continue
		}
		if r.ContentRef != "" {
			if err := g.b.GrantBlob(ctx, session, r.ContentRef); err != nil {
				g.s.log.Warn("mcp gateway: the large result's link may not be readable", "ref", r.ContentRef, "err", err)
			}
		}
		return callResult(t, r), true
	}
	return nil, false
}

// progress sends progress every ProgressEvery while the call waits, when
// the request carries a progress token (Z3).
func (g *gateway) progress(ctx context.Context, req *mcp.CallToolRequest) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(g.opts.ProgressEvery)
		defer tick.Stop()
		n := 0.0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				n++
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n,
					Message: "the call is running or waiting for a person's decision"})
			}
		}
	}()
	return func() { cancel(); <-done }
}

// canonicalJSON is args as a compact JSON object with sorted keys.
func canonicalJSON(args json.RawMessage) (string, error) {
	var v map[string]any
	if err := json.Unmarshal(args, &v); err != nil {
		return "", err
	}
	if v == nil {
		return "", errors.New("null")
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	return string(b), err
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// callResult is a round's result as MCP content (Z4).
func callResult(t round.GatewayTicket, r round.CallResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{
		IsError: round.IsError(r.Status) || r.ErrorCode == round.ErrorCodeToolUnavailable,
		Content: []mcp.Content{&mcp.TextContent{Text: r.Content}},
	}
	var obj map[string]any
	if json.Unmarshal([]byte(r.Content), &obj) == nil && obj != nil {
		out.StructuredContent = obj
	}
	for _, im := range r.Images {
		if len(im.Data) > 0 {
			out.Content = append(out.Content, &mcp.ImageContent{Data: im.Data, MIMEType: im.MIMEType})
		}
	}
	if r.ContentRef != "" {
		uri := blobURI + strings.TrimPrefix(r.ContentRef, cache.BlobPrefix)
		if len(r.Content) > gatewayPreview {
			cut := r.Content[:gatewayPreview]
			for len(cut) > 0 && !utf8.ValidString(cut) {
				cut = cut[:len(cut)-1]
			}
			out.Content[0] = &mcp.TextContent{Text: cut + "\n[" + fmt.Sprint(len(r.Content)) + " bytes in all: read " + uri + "]"}
			out.StructuredContent = nil
		}
		out.Content = append(out.Content, &mcp.ResourceLink{URI: uri, Name: "result of " + r.Tool,
			Description: "the whole result", MIMEType: "text/plain", Size: ptrInt64(int64(len(r.Content)))})
	}
	out.Meta = mcp.Meta{
		"dev.toolround/status":       string(r.Status),
		"dev.toolround/workflow_id":  t.WorkflowID,
		"dev.toolround/call_id":      t.CallID,
		"dev.toolround/operation_id": r.OperationID,
	}
	if r.ErrorCode != "" {
		out.Meta["dev.toolround/error_code"] = r.ErrorCode
	}
	return out
}

func ptrInt64(v int64) *int64 { return &v }
