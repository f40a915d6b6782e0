package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolround/toolround/tools/mcp"
)

// Signing MCP servers in (E3). The workers list the servers that answer
// 401 as needing a sign-in (mcp.Grants); /mcp shows them. An approver
// whose token covers every session starts a sign-in: the console runs the
// OAuth client (discovery, registration, PKCE), gives the person the
// authorization URL as a link, takes the authorization server's redirect
// at /mcp/callback, and keeps the grant sealed for the workers. The
// redirect carries no console cookie (it comes from another site); the
// state of a started flow, unguessable and used once, is what lets it in.
//
// The redirect may reach another console than the one the sign-in was
// started on (O3): a started sign-in (the PKCE verifier, the client, the
// token endpoint, who started it) is kept sealed with the session key in
// MCPSignIns, Redis in cmd/console, by a digest of its state; whichever
// console the redirect reaches takes it there, once, and exchanges the
// code. Nothing waits in a console's memory.
//
// The console identifies itself to authorization servers by a client ID
// metadata document it serves at <CONSOLE_URL>/client-metadata.json
// (MCP authorization 2025-11-25): where the authorization server
// advertises client_id_metadata_document_supported, that URL is the
// client_id and nothing is registered; elsewhere the console registers
// dynamically (RFC 7591). A client the server's MCP_CONFIG entry names
// (client_id, client_metadata_url) comes first. The document needs an
// https CONSOLE_URL (a client_id URL is https); without one, the console
// always registers.

// clientMetadataPath is where the console serves its client ID metadata
// document, under its own URL.
const clientMetadataPath = "/client-metadata.json"

// clientMetadataURL is the console's client ID metadata document's URL,
// its client_id: of its own URL (CONSOLE_URL), never a request's Host
// header; "" when that URL is not https.
func (s *Server) clientMetadataURL() string {
	if !strings.HasPrefix(s.opts.BaseURL, "https://") {
		return ""
	}
	u := s.opts.BaseURL + clientMetadataPath
	if mcp.CheckClientMetadataURL(u) != nil {
		return ""
	}
	return u
}

// mcpCallbackURL is the MCP sign-in's redirect_uri: of the console's own
// URL, never the request's Host header: whoever sends the request chooses
// that, and with it where the code goes.
func (s *Server) mcpCallbackURL() string { return s.opts.BaseURL + "/mcp/callback" }

// clientMetadata serves the console's client ID metadata document, to
// anyone: authorization servers fetch it.
func (s *Server) clientMetadata(w http.ResponseWriter, r *http.Request) {
	id := s.clientMetadataURL()
	if id == "" {
		http.NotFound(w, r)
		return
	}
	b, err := json.Marshal(mcp.NewClientMetadata(id, "toolround console", s.mcpCallbackURL()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(b)
}

// signInWindow is how long a started sign-in waits for its redirect.
const signInWindow = 10 * time.Minute

// MCPSignIns keep the started MCP sign-ins, sealed, until their redirect
// takes them (O3).
type MCPSignIns interface {
	// Put keeps sealed under key for ttl.
	Put(ctx context.Context, key string, sealed []byte, ttl time.Duration) error
	// Take removes what key holds and returns it: of several takers, one
	// gets it. False when there is nothing (any more).
	Take(ctx context.Context, key string) ([]byte, bool, error)
}

// memorySignIns are one console's own: the default.
type memorySignIns struct {
	mu sync.Mutex
	m  map[string]memorySignIn
}

type memorySignIn struct {
	sealed []byte
	until  time.Time
}

func (m *memorySignIns) Put(_ context.Context, key string, sealed []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for k, v := range m.m {
		if now.After(v.until) {
			delete(m.m, k)
		}
	}
	m.m[key] = memorySignIn{sealed: sealed, until: now.Add(ttl)}
	return nil
}

func (m *memorySignIns) Take(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[key]
	delete(m.m, key)
	if !ok || time.Now().After(v.until) {
		return nil, false, nil
	}
	return v.sealed, true, nil
}

// RedisMCPSignIns keep started MCP sign-ins in Redis, for every console
// that uses the same database (O3); GETDEL takes one once.
type RedisMCPSignIns struct{ RDB redis.Cmdable }

func mcpSignInKey(key string) string { return "toolround:console:mcp-signin:" + key }

// Put keeps sealed for ttl.
func (r RedisMCPSignIns) Put(ctx context.Context, key string, sealed []byte, ttl time.Duration) error {
	return r.RDB.Set(ctx, mcpSignInKey(key), sealed, ttl).Err()
}

// Take gets and deletes key's sign-in in one command.
func (r RedisMCPSignIns) Take(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := r.RDB.GetDel(ctx, mcpSignInKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// startedSignIn is what a console keeps of a sign-in it started.
type startedSignIn struct {
	Pending *mcp.PendingSignIn `json:"pending"`
	Expires time.Time          `json:"expires"`
}

// signInKey is where the sign-in of state is kept: a digest, so that the
// store's keys are no states a redirect could use.
func signInKey(state string) string {
	sum := sha256.Sum256([]byte("toolround mcp sign-in\x00" + state))
	return hex.EncodeToString(sum[:])
}

// keepSignIn seals p (bound to its state) and keeps it for the window.
func (s *Server) keepSignIn(ctx context.Context, p *mcp.PendingSignIn) error {
	plain, err := json.Marshal(startedSignIn{Pending: p, Expires: time.Now().Add(signInWindow)})
	if err != nil {
		return err
	}
	return s.started.Put(ctx, signInKey(p.State), s.cookies.seal("mcp sign-in "+p.State, plain), signInWindow)
}

// takeSignIn takes the sign-in started with state, once, on whichever
// console; false when there is none, it was taken, or it expired.
func (s *Server) takeSignIn(ctx context.Context, state string) (*mcp.PendingSignIn, bool, error) {
	if state == "" {
		return nil, false, nil
	}
	sealed, ok, err := s.started.Take(ctx, signInKey(state))
	if err != nil || !ok {
		return nil, false, err
	}
	plain, ok := s.cookies.unseal("mcp sign-in "+state, sealed)
	if !ok {
		return nil, false, nil
	}
	var st startedSignIn
	if err := json.Unmarshal(plain, &st); err != nil || st.Pending == nil || st.Pending.State != state || !time.Now().Before(st.Expires) {
		return nil, false, nil
	}
	return st.Pending, true, nil
}

type mcpData struct {
	pageData
	Needs []mcpNeed
	// Unavailable says why the page lists nothing it could.
	Unavailable string
	CanSignIn   bool
	// AuthURL and AuthHost are the next step of a started sign-in.
	Server, AuthURL, AuthHost string
	// Signed names a server just signed in.
	Signed string
}

type mcpNeed struct {
	Server, URL, Why, Since string
	Scopes                  []string
}

// mayManageMCP: signing a server in gives every worker, and so every
// session, its tools; only an approver whose token covers every session
// may.
func mayManageMCP(p principal) bool { return p.Role == RoleApprover && p.Scope == nil }

func (s *Server) mcpPage(w http.ResponseWriter, r *http.Request, p principal) {
	d := mcpData{pageData: s.base(p, "MCP servers", "/mcp"), CanSignIn: mayManageMCP(p)}
	if s.opts.MCP == nil {
		d.Unavailable = "This console has no Redis or no secret key, so it cannot see the workers' MCP sign-ins."
		s.render(w, http.StatusOK, "mcp", d)
		return
	}
	needs, err := s.opts.MCP.Needs(r.Context())
	if err != nil {
		s.log.Error("console: list MCP sign-ins", "err", err)
		d.Unavailable = "The workers' MCP sign-ins could not be read."
	}
	for _, n := range needs {
		d.Needs = append(d.Needs, mcpNeed{Server: n.Server, URL: n.URL, Why: n.Why, Scopes: n.Scopes,
			Since: n.Since.UTC().Format(time.RFC3339)})
	}
	d.Signed = r.URL.Query().Get("signed")
	s.render(w, http.StatusOK, "mcp", d)
}

// mcpSignIn starts the sign-in of a server and shows the person the
// authorization server's URL.
func (s *Server) mcpSignIn(w http.ResponseWriter, r *http.Request, p principal) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	_ = r.ParseForm()
	if !csrfOK(p, r) {
		s.errorPage(w, r, http.StatusForbidden, "forbidden", "The form's CSRF token is missing or stale; reload the page.")
		return
	}
	if !mayManageMCP(p) {
		s.errorPage(w, r, http.StatusForbidden, "forbidden", "Signing an MCP server in takes an approver token that covers every session.")
		return
	}
	if s.opts.MCP == nil {
		s.errorPage(w, r, http.StatusNotImplemented, "unavailable", "This console cannot see the workers' MCP sign-ins.")
		return
	}
	name := r.PathValue("server")
	need, ok, err := s.opts.MCP.Need(r.Context(), name)
	if err != nil || !ok {
		s.errorPage(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("No worker asks for a sign-in to MCP server %q.", name))
		return
	}
	if s.opts.BaseURL == "" {
		s.errorPage(w, r, http.StatusNotImplemented, "unavailable", "This console does not know its own URL, which the sign-in sends people back to: set CONSOLE_URL.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), mcp.DefaultConnectTimeout)
	defer cancel()
	pending, err := mcp.BeginSignIn(ctx, need, mcp.SignInOptions{RedirectURL: s.mcpCallbackURL(), ClientMetadataURL: s.clientMetadataURL(),
		NetPolicy: s.opts.MCPNetPolicy, By: p.Name})
	if err != nil {
		s.log.Warn("console: MCP sign-in failed", "server", name, "err", err)
		if ctx.Err() != nil {
			s.errorPage(w, r, http.StatusGatewayTimeout, "sign_in_failed", "The server's authorization server did not answer in time.")
			return
		}
		s.errorPage(w, r, http.StatusBadGateway, "sign_in_failed", err.Error())
		return
	}
	pu, err := url.Parse(pending.AuthURL)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Query().Get("state") == "" {
		s.errorPage(w, r, http.StatusBadGateway, "bad_authorization_url", "The authorization server's URL is not an http(s) URL with a state.")
		return
	}
	if err := s.keepSignIn(ctx, pending); err != nil {
		s.log.Error("console: keep a started MCP sign-in", "server", name, "err", err)
		s.errorPage(w, r, http.StatusServiceUnavailable, "unavailable", "The started sign-in could not be kept; try again.")
		return
	}
	s.log.Info("console: MCP sign-in started", "server", name, "by", p.Name, "authorization_host", pu.Host)
	d := mcpData{pageData: s.base(p, "Sign in to "+name, "/mcp"), CanSignIn: true, Server: name, AuthURL: pending.AuthURL, AuthHost: pu.Host}
	s.render(w, http.StatusOK, "mcp", d)
}

// mcpCallback takes the authorization server's redirect, finishes the
// exchange and keeps the grant: on any console, for a sign-in started on
// any that shares MCPSignIns and the session key.
func (s *Server) mcpCallback(w http.ResponseWriter, r *http.Request) {
	if s.opts.MCP == nil {
		s.errorPage(w, r, http.StatusNotImplemented, "unavailable", "This console cannot see the workers' MCP sign-ins.")
		return
	}
	q := r.URL.Query()
	pending, ok, err := s.takeSignIn(r.Context(), q.Get("state"))
	if err != nil {
		s.log.Error("console: read a started MCP sign-in", "err", err)
		s.errorPage(w, r, http.StatusServiceUnavailable, "unavailable", "The started sign-ins could not be read; start the sign-in again from the MCP page.")
		return
	}
	if !ok {
		s.errorPage(w, r, http.StatusBadRequest, "unknown_state", "This sign-in is not one this console started, or it was used already; start it again from the MCP page.")
		return
	}
	name := pending.Server
	if e := q.Get("error"); e != "" {
		s.log.Warn("console: MCP sign-in failed", "server", name, "err", "the authorization server answered "+e)
		s.errorPage(w, r, http.StatusBadRequest, "sign_in_refused", "The authorization server answered "+e+"; nothing was signed in.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*mcp.DefaultConnectTimeout)
	defer cancel()
	gr, err := mcp.FinishSignIn(ctx, pending, mcp.SignInResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, s.opts.MCPNetPolicy)
	if err == nil {
		err = s.opts.MCP.PutGrant(ctx, gr)
	}
	if err != nil {
		s.log.Warn("console: MCP sign-in failed", "server", name, "err", err)
		if ctx.Err() != nil {
			s.errorPage(w, r, http.StatusGatewayTimeout, "sign_in_failed", "The token exchange did not finish in time.")
			return
		}
		s.errorPage(w, r, http.StatusBadGateway, "sign_in_failed", err.Error())
		return
	}
	s.log.Info("console: MCP server signed in", "server", name, "by", pending.By)
	http.Redirect(w, r, "/mcp?signed="+url.QueryEscape(name), http.StatusSeeOther)
}
