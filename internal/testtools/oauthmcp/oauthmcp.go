// Package oauthmcp serves an MCP server behind OAuth, with its own
// authorization server, for tests: protected resource and authorization
// server metadata, dynamic registration, an authorize endpoint that signs
// in at once and redirects with a code, and a token endpoint that checks
// the PKCE verifier and refreshes (rotating refresh tokens).
package oauthmcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an MCP server behind OAuth with its own authorization
// server: protected resource metadata, authorization server metadata,
// dynamic registration, an authorize endpoint that signs in at once and
// redirects with a code, and a token endpoint that checks the PKCE
// verifier. It counts what happened.
type Server struct {
	URL        string
	Registered atomic.Int64
	Authorized atomic.Int64
	Tokens     atomic.Int64
	Refreshed  atomic.Int64
	// expiresIn is the lifetime of the access tokens, in seconds.
	ExpiresIn atomic.Int64
	// ClientIDMetadata makes the authorization server advertise
	// client_id_metadata_document_supported.
	ClientIDMetadata atomic.Bool
	mu               sync.Mutex
	// clients are the client_ids the authorize and token endpoints saw.
	clients []string
	// mark makes this server's tokens unlike any other text, so a test
	// finds one in any form (AccessToken, RefreshToken).
	mark       string
	challenges map[string]string // code -> S256 challenge
	valid      map[string]bool   // access tokens
	refresh    map[string]bool   // refresh tokens
}

// AccessToken is the n-th access token the server issued (from 1).
func (o *Server) AccessToken(n int64) string { return fmt.Sprintf("tok-%s-%d", o.mark, n) }

// RefreshToken is the n-th refresh token the server issued (from 1).
func (o *Server) RefreshToken(n int64) string { return fmt.Sprintf("ref-%s-%d", o.mark, n) }

// New serves srv behind OAuth until the test ends.
func New(t testing.TB, srv *sdk.Server) *Server {
	t.Helper()
	o := &Server{challenges: map[string]string{}, valid: map[string]bool{}, refresh: map[string]bool{}, mark: fmt.Sprintf("%x", rand.Uint64())}
	o.ExpiresIn.Store(3600)
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	o.URL = ts.URL + "/mcp"
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"resource": o.URL, "authorization_servers": []string{ts.URL}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		meta := map[string]any{"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"}}
		if o.ClientIDMetadata.Load() {
			meta["client_id_metadata_document_supported"] = true
		}
		writeJSON(w, meta)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		o.Registered.Add(1)
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "dyn-client", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		o.Authorized.Add(1)
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "PKCE is required", http.StatusBadRequest)
			return
		}
		code := fmt.Sprintf("code-%d", o.Authorized.Load())
		o.mu.Lock()
		o.clients = append(o.clients, "authorize "+q.Get("client_id"))
		o.challenges[code] = q.Get("code_challenge")
		o.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.clients = append(o.clients, "token "+r.PostForm.Get("client_id"))
		issue := func() {
			o.Tokens.Add(1)
			tok, ref := o.AccessToken(o.Tokens.Load()), o.RefreshToken(o.Tokens.Load())
			o.valid[tok], o.refresh[ref] = true, true
			writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": o.ExpiresIn.Load(), "refresh_token": ref})
		}
		if r.PostForm.Get("grant_type") == "refresh_token" {
			if !o.refresh[r.PostForm.Get("refresh_token")] {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.refresh, r.PostForm.Get("refresh_token")) // rotated
			o.Refreshed.Add(1)
			issue()
			return
		}
		want, ok := o.challenges[r.PostForm.Get("code")]
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(o.challenges, r.PostForm.Get("code"))
		issue()
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.valid[tok]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	return o
}

// Clients are the client_ids the endpoints saw, in order: "authorize ID"
// and "token ID" (the token request's client_id parameter).
func (o *Server) Clients() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.clients...)
}

// Revoke makes every token the server issued invalid.
func (o *Server) Revoke() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.valid, o.refresh = map[string]bool{}, map[string]bool{}
}

// Follow signs in as a person whose browser is already signed in: it
// opens the authorization URL and returns where the authorization server
// redirects, which must start with redirectURL.
func Follow(ctx context.Context, authURL, redirectURL string) (*url.URL, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(r)
	if err != nil {
		return nil, err
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(loc.String(), redirectURL) {
		return nil, fmt.Errorf("redirected to %s, not %s", loc, redirectURL)
	}
	return loc, nil
}

// MemHashes are Redis hashes in memory, as mcp.Grants keeps them.
type MemHashes struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// NewMemHashes is an empty MemHashes.
func NewMemHashes() *MemHashes { return &MemHashes{m: map[string]map[string]string{}} }

func (h *MemHashes) HSet(_ context.Context, key, field, value string, _ time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[key] == nil {
		h.m[key] = map[string]string{}
	}
	h.m[key][field] = value
	return nil
}

func (h *MemHashes) HGet(_ context.Context, key, field string) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[key][field]
	return v, ok, nil
}

func (h *MemHashes) HKeys(_ context.Context, key string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.m[key] {
		out = append(out, k)
	}
	return out, nil
}

func (h *MemHashes) HDel(_ context.Context, key, field string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m[key], field)
	return nil
}

// Raw is everything stored, as one string.
func (h *MemHashes) Raw() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for k, m := range h.m {
		for f, v := range m {
			b.WriteString(k + " " + f + " " + v + "\n")
		}
	}
	return b.String()
}
