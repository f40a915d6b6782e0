package console

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"
)

// issuer is an OAuth authorization server's metadata and keys.
type issuer struct {
	srv  *httptest.Server
	key  *rsa.PrivateKey
	kid  string
	hits int
}

func newIssuer(t *testing.T) *issuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is := &issuer{key: key, kid: "k1"}
	mux := http.NewServeMux()
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.hits++
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: is.kid, Algorithm: "RS256", Use: "sig"}}})
	})
	return is
}

func (is *issuer) token(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", is.kid).WithType("JWT"))
	require.NoError(t, err)
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	require.NoError(t, err)
	return s
}

// TestGatewayOAuthTokensZ1: an access token of the configured issuer, for
// this gateway, with its scopes and a sessions claim, acts as an agent
// token named by its subject and scoped by the claim; every other token is
// refused, 401 with the resource metadata's URL and the scopes, or 403
// when only a scope or the sessions claim is missing.
func TestGatewayOAuthTokensZ1(t *testing.T) {
	is := newIssuer(t)
	g := &gatewayFake{fakeBackend: newFake(), release: make(chan struct{})}
	close(g.release)
	const aud = "https://gateway.example/api/v1/mcp"
	s, err := New(Options{Backend: g, Tokens: []Token{{Secret: "agent-token", Name: "bot", Role: RoleAgent}},
		Gateway: GatewayOptions{OAuth: GatewayOAuth{Issuer: is.srv.URL, Audience: aud, Scopes: []string{"mcp:tools"}}}})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.opts.BaseURL = srv.URL

	now := time.Now()
	good := map[string]any{"iss": is.srv.URL, "aud": aud, "sub": "alice@example", "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "scope": "openid mcp:tools", "toolround_sessions": []string{"s1", "team-*"}}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range good {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	post := func(session, token string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(context.Background(), "POST", srv.URL+GatewayPath+"?session="+session+"&run=r", strings.NewReader(list))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp, b.String()
	}

	resp, body := post("s1", is.token(t, is.key, good))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, body = post("team-blue", is.token(t, is.key, good))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, _ = post("s2", is.token(t, is.key, good))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a session outside the claim")
	// The sessions claim as one space-separated string.
	resp, body = post("s2", is.token(t, is.key, with("toolround_sessions", "s2 s3")))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	// The console's own tokens still work.
	resp, body = post("s1", "agent-token")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for name, tok := range map[string]string{
		"none":            "",
		"not a JWT":       "not-a-jwt",
		"another key":     is.token(t, other, good),
		"another issuer":  is.token(t, is.key, with("iss", "https://evil.example")),
		"another gateway": is.token(t, is.key, with("aud", "https://other.example/api/v1/mcp")),
		"expired":         is.token(t, is.key, with("exp", now.Add(-time.Hour).Unix())),
		"no expiry":       is.token(t, is.key, with("exp", nil)),
		"not yet":         is.token(t, is.key, with("nbf", now.Add(time.Hour).Unix())),
		"no subject":      is.token(t, is.key, with("sub", nil)),
	} {
		resp, body := post("s1", tok)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: %s", name, body)
		h := resp.Header.Get("WWW-Authenticate")
		require.Contains(t, h, `resource_metadata="`+srv.URL+ProtectedResourcePath+`"`, name)
		require.Contains(t, h, `scope="mcp:tools"`, name)
	}
	for name, tok := range map[string]string{
		"no scope":       is.token(t, is.key, with("scope", "openid")),
		"no sessions":    is.token(t, is.key, with("toolround_sessions", nil)),
		"empty sessions": is.token(t, is.key, with("toolround_sessions", []string{})),
	} {
		resp, body := post("s1", tok)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", name, body)
	}
	require.LessOrEqual(t, is.hits, 2, "the keys are kept, and an unknown key id fetches them at most once a minute")

	// RFC 9728: the resource's metadata names the issuer and the scopes.
	r, err := http.Get(srv.URL + ProtectedResourcePath)
	require.NoError(t, err)
	defer func() { _ = r.Body.Close() }()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(r.Body).Decode(&meta))
	require.Equal(t, aud, meta["resource"])
	require.Equal(t, []any{is.srv.URL}, meta["authorization_servers"])
	require.Equal(t, []any{"mcp:tools"}, meta["scopes_supported"])
}
