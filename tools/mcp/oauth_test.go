package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

// oauthServer is an MCP server behind OAuth with its own authorization
// server: protected resource metadata, authorization server metadata,
// dynamic registration, an authorize endpoint that signs in at once and
// redirects with a code, and a token endpoint that checks the PKCE
// verifier. It counts what happened.
type oauthServer struct {
	URL        string
	registered atomic.Int64
	authorized atomic.Int64
	tokens     atomic.Int64
	mu         sync.Mutex
	challenges map[string]string // code -> S256 challenge
	valid      map[string]bool   // access tokens
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{challenges: map[string]string{}, valid: map[string]bool{}}
	srv := fixture.New()
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
		writeJSON(w, map[string]any{"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		o.registered.Add(1)
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "dyn-client", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		o.authorized.Add(1)
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "PKCE is required", http.StatusBadRequest)
			return
		}
		code := fmt.Sprintf("code-%d", o.authorized.Load())
		o.mu.Lock()
		o.challenges[code] = q.Get("code_challenge")
		o.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		want, ok := o.challenges[r.PostForm.Get("code")]
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(o.challenges, r.PostForm.Get("code"))
		o.tokens.Add(1)
		tok := fmt.Sprintf("tok-%d", o.tokens.Load())
		o.valid[tok] = true
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
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

// autoSignIn signs in as the suite's person does: it follows the
// authorization URL up to the redirect and reads the code and state.
func autoSignIn(calls *atomic.Int64) SignInFunc {
	return func(ctx context.Context, req SignInRequest) (SignInResult, error) {
		calls.Add(1)
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
		if err != nil {
			return SignInResult{}, err
		}
		resp, err := c.Do(r)
		if err != nil {
			return SignInResult{}, err
		}
		_ = resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			return SignInResult{}, err
		}
		if !strings.HasPrefix(loc.String(), req.RedirectURL) {
			return SignInResult{}, fmt.Errorf("redirected to %s, not %s", loc, req.RedirectURL)
		}
		return SignInResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
	}
}

func TestOAuthServerIsSignedInOnceAndItsTokenKept(t *testing.T) {
	o := newOAuthServer(t)
	var signIns atomic.Int64
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}},
		SignIn: autoSignIn(&signIns), RedirectURL: "http://127.0.0.1:1/callback"})
	require.NoError(t, status(m, "locked").Err)
	got, err := call(t, reg, "mcp_locked_echo", `{"text":"behind oauth"}`)
	require.NoError(t, err)
	require.Equal(t, "behind oauth", got)
	require.Equal(t, int64(1), signIns.Load(), "one sign-in")
	require.Equal(t, int64(1), o.registered.Load(), "dynamic registration, once")
	require.Equal(t, int64(1), o.tokens.Load())

	// A new session (the old one dropped) uses the token it has.
	s := m.servers[0]
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	s.drop(sess)
	got, err = call(t, reg, "mcp_locked_add", `{"a":1,"b":2}`)
	require.NoError(t, err)
	require.Equal(t, "3", got)
	require.Equal(t, int64(1), signIns.Load(), "no second sign-in")
	require.Equal(t, int64(1), o.tokens.Load())
}

func TestOAuthServerWithoutSignInNeedsIt(t *testing.T) {
	o := newOAuthServer(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}})
	err := status(m, "locked").Err
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNeedsSignIn), "%v", err)
	require.Empty(t, reg.Names())
	require.Equal(t, int64(0), o.registered.Load(), "nothing registered without a sign-in")
}

func TestOAuthSignInThatFailsLeavesTheServerOut(t *testing.T) {
	o := newOAuthServer(t)
	m, _ := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, RedirectURL: "http://127.0.0.1:1/callback",
		SignIn: func(context.Context, SignInRequest) (SignInResult, error) {
			return SignInResult{}, errors.New("nobody signed in")
		}})
	require.ErrorContains(t, status(m, "locked").Err, "nobody signed in")
	require.Equal(t, int64(0), o.tokens.Load())
}

func TestOAuthConfigIsChecked(t *testing.T) {
	for name, entry := range map[string]string{
		`"oauth" only applies to a URL`:                             `{"command":"x","oauth":{}}`,
		`client_secret without its client_id`:                       `{"url":"https://mcp.example.com","oauth":{"client_secret":"s"}}`,
		`client_metadata_url "http://x/c.json" is not an https URL`: `{"url":"https://mcp.example.com","oauth":{"client_metadata_url":"http://x/c.json"}}`,
	} {
		_, err := ParseConfig([]byte(`{"mcpServers":{"s":` + entry + `}}`))
		require.ErrorContains(t, err, name)
	}
	cfg, err := ParseConfig([]byte(`{"mcpServers":{"s":{"url":"https://mcp.example.com","oauth":{"client_id":"id","client_secret":"${SECRET}"}}}}`))
	require.NoError(t, err)
	require.Equal(t, &OAuthConfig{ClientID: "id", ClientSecret: "${SECRET}"}, cfg.Servers[0].OAuth)
	_, err = Connect(context.Background(), Config{Servers: cfg.Servers, SignIn: autoSignIn(new(atomic.Int64)), Logger: quiet})
	require.NoError(t, err, "a bad server is left out, not a failed Connect")
}
