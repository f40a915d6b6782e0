// Package console is toolround's HTTP API and its page for people: submit
// rounds, read results and events, and answer what rounds wait for (H).
package console

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/health"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/netguard"
)

// Options configure a Server.
type Options struct {
	// Backend reaches the rounds. Required.
	Backend Backend
	// Tokens that may use the API and sign in on the page. Required.
	Tokens []Token
	// Logger for requests that fail on the server's side. Default: discard.
	Logger *slog.Logger
	// MaxRoundBody bounds the body of POST /api/v1/rounds. Default 2 MiB
	// (Temporal's payload limit); the round itself must also pass the
	// client's rule of client.DefaultMaxInputBytes encoded, as for the CLI.
	MaxRoundBody int64
	// MaxBody bounds every other body. Default 1.5 MiB (edited arguments
	// may be as large as a round's).
	MaxBody int64
	// SessionTTL is how long a page sign-in lasts. Default 12h.
	SessionTTL time.Duration
	// Now is the clock of the page's "waiting for" times. Default time.Now.
	Now func() time.Time
	// LinkKey verifies the signed links of webhooks (NOTIFY_LINK_KEY, N2);
	// nil: POST /link refuses every link.
	LinkKey []byte
	// LinkKeyPrevious is the link key being rotated out
	// (NOTIFY_LINK_KEY_PREVIOUS): links it signed are still taken. Nil:
	// none.
	LinkKeyPrevious []byte
	// Workdir is TOOLS_WORKDIR of workers in WORKSPACE=session whose
	// folder the console sees (the same host or shared storage): the
	// workspaces endpoints act there (W3). "": they answer 501.
	Workdir string
	// Placement is the workers' WORKSPACE_PLACEMENT (W4): with host, POST
	// /api/v1/workspaces/{session}/move rebinds a workspace; otherwise it
	// answers 409 placement_off.
	Placement string
	// MCP are the workers' MCP sign-ins (E3, mcp.go), nil without Redis
	// or the secret key: /mcp then says so. MCPNetPolicy guards the
	// URLs a server names during a sign-in (default netguard's).
	MCP          *mcp.Grants
	MCPNetPolicy *netguard.Policy
	// SessionKey seals the page's sign-ins into their cookies
	// (CONSOLE_SESSION_KEY, 32 bytes, O3): consoles that share it share
	// sign-ins. Default: a key of this console's own, so its sign-ins end
	// with it.
	SessionKey []byte
	// SessionKeyPrevious is the session key being rotated out
	// (CONSOLE_SESSION_KEY_PREVIOUS): sign-ins it sealed go on until they
	// expire; new ones are sealed with SessionKey. Nil: none.
	SessionKeyPrevious []byte
	// Revocations keep sign-outs for every console that shares them
	// (Redis in cmd/console). Default: this console's memory.
	Revocations Revocations
	// MCPSignIns keep the started MCP sign-ins, sealed with the session
	// key, for every console that shares them (Redis in cmd/console, O3):
	// a sign-in started on one console finishes on another. Default: this
	// console's memory.
	MCPSignIns MCPSignIns
	// Health are the checks of /readyz (O2): Temporal decides, Redis is
	// reported. Unset checks answer ok.
	Health health.Checks
	// BaseURL is the console's own URL as people and authorization
	// servers reach it: CONSOLE_URL, or without it the address it listens
	// on. The MCP sign-in's redirect_uri is built from it, never from a
	// request's Host header; "": /mcp cannot sign servers in.
	BaseURL string
	// Gateway configures the MCP gateway at /api/v1/mcp (Z1).
	Gateway GatewayOptions
}

// Server serves the API and the page.
type Server struct {
	opts    Options
	b       Backend
	tokens  *tokenSet
	cookies *pageCookies
	log     *slog.Logger
	mux     *http.ServeMux
	pages   *pages
	started MCPSignIns
	codes   signInCodes
	gw      *gateway
	gwAuth  *gatewayAuth
}

// New builds a Server.
func New(opts Options) (*Server, error) {
	if opts.Backend == nil {
		return nil, errors.New("console: no backend")
	}
	if len(opts.Tokens) == 0 {
		return nil, errors.New("console: no tokens")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxRoundBody <= 0 {
		opts.MaxRoundBody = 2 << 20
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = client.DefaultMaxInputBytes
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BaseURL != "" {
		base, err := checkBaseURL(opts.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("console: CONSOLE_URL: %w", err)
		}
		opts.BaseURL = base
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	if opts.SessionKey == nil {
		opts.SessionKey = make([]byte, SessionKeySize)
		if _, err := rand.Read(opts.SessionKey); err != nil {
			return nil, err
		}
	}
	cookies, err := newPageCookies(opts.SessionKey, opts.SessionTTL, opts.Revocations, opts.SessionKeyPrevious)
	if err != nil {
		return nil, err
	}
	if opts.MCPSignIns == nil {
		opts.MCPSignIns = &memorySignIns{m: map[string]memorySignIn{}}
	}
	s := &Server{opts: opts, b: opts.Backend, tokens: newTokenSet(opts.Tokens), cookies: cookies,
		log: opts.Logger, mux: http.NewServeMux(), pages: p, codes: signInCodes{m: map[[32]byte]signInCode{}}, started: opts.MCPSignIns}
	s.gw = s.newGateway()
	s.gwAuth = newGatewayAuth(opts.Gateway.OAuth, opts.BaseURL)
	s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() {
	m := s.mux
	// API (H2..H8).
	m.HandleFunc("POST /api/v1/rounds", s.api(roleAny, s.postRound))
	m.HandleFunc("GET /api/v1/rounds/{workflow_id...}", s.api(roleAny, s.getRound))
	m.HandleFunc("GET /api/v1/inbox", s.api(roleAny, s.getInbox))
	m.HandleFunc("POST /api/v1/approvals", s.api(RoleApprover, s.postApproval))
	m.HandleFunc("POST /api/v1/answers", s.api(RoleApprover, s.postAnswer))
	m.HandleFunc("POST /api/v1/tool-results", s.api(roleAny, s.postToolResult))
	m.HandleFunc("POST /api/v1/extend", s.api(RoleApprover, s.postExtend))
	m.HandleFunc("POST /api/v1/cancel", s.api(RoleApprover, s.postCancel))
	m.HandleFunc("POST /api/v1/agents", s.api(roleAny, s.postAgent))
	m.HandleFunc("GET /api/v1/agents/{workflow_id...}", s.api(roleAny, s.getAgent))
	m.HandleFunc("POST /api/v1/agents/{path...}", s.api(roleAny, s.postAgentPath))
	m.HandleFunc("GET /api/v1/sessions/{session}/events", s.api(roleAny, s.getEvents))
	m.HandleFunc("GET /api/v1/tools", s.api(roleAny, s.getTools))
	m.HandleFunc("GET /api/v1/workspaces", s.api(roleAny, s.getWorkspaces))
	m.HandleFunc("GET /api/v1/workspaces/{session}", s.api(roleAny, s.getWorkspace))
	m.HandleFunc("DELETE /api/v1/workspaces/{session}", s.api(RoleApprover, s.deleteWorkspace))
	m.HandleFunc("POST /api/v1/workspaces/{session}/move", s.api(RoleApprover, s.moveWorkspace))
	m.HandleFunc("GET /api/v1/openapi.json", getOpenAPI)
	m.HandleFunc(GatewayPath, s.serveGateway)
	m.HandleFunc("GET "+ProtectedResourcePath, s.serveGatewayMetadata)
	m.HandleFunc("/api/", noEndpoint)
	// Without these the mux would send the other methods of the two paths
	// to the GET of their trailing-slash patterns (a redirect and a 404),
	// not to 405.
	m.HandleFunc("/api/v1/rounds", noEndpoint)
	m.HandleFunc("/api/v1/agents", noEndpoint)
	// The page (H9).
	m.HandleFunc("GET /{$}", s.page(s.inboxPage))
	m.HandleFunc("GET /sessions/{session}", s.page(s.sessionPage))
	m.HandleFunc("GET /calls/{workflow_id...}", s.page(s.callPage))
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)
	m.HandleFunc("GET /signin", s.getSignIn)
	m.HandleFunc("POST /signin", s.postSignIn)
	// Liveness and readiness (O2): no token, nothing but the state.
	health.New(s.opts.Health).Register(m)
	m.HandleFunc("GET /link", s.getLink)
	m.HandleFunc("POST /link", s.postLink)
	m.HandleFunc("POST /link/call", s.linkCall)
	m.HandleFunc("GET /mcp", s.page(s.mcpPage))
	m.HandleFunc("POST /mcp/signin/{server}", s.page(s.mcpSignIn))
	m.HandleFunc("GET /mcp/callback", s.mcpCallback)
	m.HandleFunc("GET "+clientMetadataPath, s.clientMetadata)
	m.Handle("GET /assets/", assetHandler())
}

const roleAny = ""

// noEndpoint answers a request that no API route takes: 405 with the
// path's method, or 404.
func noEndpoint(w http.ResponseWriter, r *http.Request) {
	if allow := allowedMethod(r.URL.Path); allow != "" {
		w.Header().Set("Allow", allow)
		writeError(w, codeMethodNotAllowed, r.URL.Path+" takes "+allow)
		return
	}
	writeError(w, round.CodeNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
}

// allowedMethod is the method an API path takes, "" for no such path; the
// mux answers the right method, this names it for the others.
func allowedMethod(path string) string {
	switch path {
	case "/api/v1/rounds", "/api/v1/approvals", "/api/v1/answers", "/api/v1/tool-results", "/api/v1/extend", "/api/v1/cancel", "/api/v1/agents":
		return http.MethodPost
	case "/api/v1/inbox", "/api/v1/openapi.json", "/api/v1/tools", "/api/v1/workspaces":
		return http.MethodGet
	}
	if rest, ok := strings.CutPrefix(path, "/api/v1/agents/"); ok {
		switch parts := strings.Split(rest, "/"); {
		case len(parts) == 4 && parts[0] == "agentrun" && parts[3] == "messages":
			return http.MethodPost
		case len(parts) == 3 && parts[0] == "agentrun":
			return http.MethodGet
		}
	}
	if rest, ok := strings.CutPrefix(path, "/api/v1/workspaces/"); ok && rest != "" {
		if session, ok := strings.CutSuffix(rest, "/move"); ok && session != "" && !strings.Contains(session, "/") {
			return http.MethodPost
		}
		if !strings.Contains(rest, "/") {
			return "GET, DELETE"
		}
	}
	if rest, ok := strings.CutPrefix(path, "/api/v1/agents/"); ok && strings.HasSuffix(rest, "/messages") && rest != "/messages" {
		return http.MethodPost
	}
	for _, prefix := range []string{"/api/v1/rounds/", "/api/v1/agents/"} {
		if strings.HasPrefix(path, prefix) && len(path) > len(prefix) {
			return http.MethodGet
		}
	}
	if rest, ok := strings.CutPrefix(path, "/api/v1/sessions/"); ok && strings.HasSuffix(rest, "/events") && strings.Count(rest, "/") == 1 && rest != "/events" {
		return http.MethodGet
	}
	return ""
}

// apiHandler handles an authenticated request.
type apiHandler func(w http.ResponseWriter, r *http.Request, p principal)

// api authenticates (401), checks the role (403) and the CSRF token of page
// requests that change state (403).
func (s *Server) api(role string, h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolround"`)
			writeError(w, codeUnauthorized, "send Authorization: Bearer TOKEN (a token of CONSOLE_TOKENS), or sign in on the page")
			return
		}
		if role != roleAny && p.Role != role {
			writeError(w, codeForbidden, fmt.Sprintf("%s needs an %s token; %q is an %s token", r.URL.Path, role, p.Name, p.Role))
			return
		}
		if p.Via == "api" {
			// Bearer requests are JSON whatever their Content-Type says
			// (curl --data sends a form type by default).
			r.Header.Set("Content-Type", "application/json")
		}
		if isForm(r) {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
			if err := r.ParseForm(); err != nil {
				var tooBig *http.MaxBytesError
				if !errors.As(err, &tooBig) {
					err = fmt.Errorf("%w: %v", ErrBadInput, err)
				}
				s.fail(w, r, err)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !csrfOK(p, r) {
			writeError(w, codeCSRF, "missing or wrong CSRF token: reload the page")
			return
		}
		h(w, r, p)
	}
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

// writeError answers with the status of code (statuses) and the error body.
func writeError(w http.ResponseWriter, code round.ErrorCode, msg string) {
	writeJSON(w, statusFor(code), errorBody{Error: string(code), Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal","message":"encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

// fail writes the status and code an error maps to.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := statusOf(err)
	if status == http.StatusInternalServerError {
		s.log.Error("console request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if wantsHTML(r) {
		s.errorPage(w, r, status, code, err.Error())
		return
	}
	writeJSON(w, status, errorBody{Error: code, Message: err.Error()})
}

// Codes of the console's own answers, beside round's codes of errors.
const (
	codeUnauthorized     round.ErrorCode = "unauthorized"
	codeForbidden        round.ErrorCode = "forbidden"
	codeCSRF             round.ErrorCode = "csrf"
	codeMethodNotAllowed round.ErrorCode = "method_not_allowed"
	codeInternal         round.ErrorCode = "internal"
)

// statuses is the one table of the API's errors: the HTTP status of each
// error code, which is also the `error` field of the body. An error takes
// the first code that it matches (errors.Is); an error of none is 500
// internal.
var statuses = []struct {
	code   round.ErrorCode
	status int
}{
	{round.CodeTooLarge, http.StatusRequestEntityTooLarge},
	{round.CodeNotWaiting, http.StatusNotFound},
	{round.CodeNotFound, http.StatusNotFound},
	{round.CodeNotRunning, http.StatusConflict},
	{round.CodeStaleApproval, http.StatusConflict},
	{round.CodeStaleWait, http.StatusConflict},
	{round.CodeLinkUsed, http.StatusConflict},
	{round.CodeInputMismatch, http.StatusConflict},
	{round.CodeWorkspaceBusy, http.StatusConflict},
	{round.CodePlacementOff, http.StatusConflict},
	{round.CodeHostUnavailable, http.StatusConflict},
	{round.CodeInvalidArgs, http.StatusBadRequest},
	{round.CodeInvalidAnswer, http.StatusBadRequest},
	{round.CodeInvalidDecision, http.StatusBadRequest},
	{round.CodeInvalidPattern, http.StatusBadRequest},
	{round.CodeInvalidInput, http.StatusBadRequest},
	{round.CodeBadRequest, http.StatusBadRequest},
	{round.CodeNotImplemented, http.StatusNotImplemented},
	{round.CodeNoWorker, http.StatusServiceUnavailable},
	{round.CodeTimeout, http.StatusGatewayTimeout},
	{codeUnauthorized, http.StatusUnauthorized},
	{codeForbidden, http.StatusForbidden},
	{codeCSRF, http.StatusForbidden},
	{codeMethodNotAllowed, http.StatusMethodNotAllowed},
}

// statusFor is the status of code; 500 for a code the table does not have.
func statusFor(code round.ErrorCode) int {
	for _, s := range statuses {
		if s.code == code {
			return s.status
		}
	}
	return http.StatusInternalServerError
}

func statusOf(err error) (int, string) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		err = &round.Error{Code: round.CodeTooLarge, Err: err}
	}
	for _, s := range statuses {
		if errors.Is(err, &round.Error{Code: s.code}) {
			return s.status, string(s.code)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return statusFor(round.CodeTimeout), string(round.CodeTimeout)
	}
	return statusFor(codeInternal), string(codeInternal)
}

// wantsHTML: a plain form post from the page, answered with a page or a
// redirect rather than JSON.
func wantsHTML(r *http.Request) bool {
	return r.Method == http.MethodPost && isForm(r) && !strings.Contains(r.Header.Get("Accept"), "application/json")
}

// checkBaseURL reads the console's own URL: http or https, with a host, no
// query or fragment; without its trailing slash.
func checkBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("console: the console's URL %q must be http:// or https:// and a host, with no query, fragment or user", s)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
