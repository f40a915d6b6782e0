package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testtools/oauthmcp"
	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

func newOAuthServer(t *testing.T) *oauthmcp.Server { return oauthmcp.New(t, fixture.New()) }

// autoSignIn signs in as the suite's person does: it follows the
// authorization URL up to the redirect and reads the code and state.
func autoSignIn(calls *atomic.Int64) SignInFunc {
	return func(ctx context.Context, req SignInRequest) (SignInResult, error) {
		calls.Add(1)
		loc, err := oauthmcp.Follow(ctx, req.URL, req.RedirectURL)
		if err != nil {
			return SignInResult{}, err
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
	require.Equal(t, int64(1), o.Registered.Load(), "dynamic registration, once")
	require.Equal(t, int64(1), o.Tokens.Load())

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
	require.Equal(t, int64(1), o.Tokens.Load())
}

func TestOAuthServerWithoutSignInNeedsIt(t *testing.T) {
	o := newOAuthServer(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}})
	err := status(m, "locked").Err
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNeedsSignIn), "%v", err)
	require.Empty(t, reg.Names())
	require.Equal(t, int64(0), o.Registered.Load(), "nothing registered without a sign-in")
}

func TestOAuthSignInThatFailsLeavesTheServerOut(t *testing.T) {
	o := newOAuthServer(t)
	m, _ := connect(t, Config{Servers: []ServerConfig{{Name: "locked", URL: o.URL}}, RedirectURL: "http://127.0.0.1:1/callback",
		SignIn: func(context.Context, SignInRequest) (SignInResult, error) {
			return SignInResult{}, errors.New("nobody signed in")
		}})
	require.ErrorContains(t, status(m, "locked").Err, "nobody signed in")
	require.Equal(t, int64(0), o.Tokens.Load())
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

// TestSignInBegunAndFinishedApart: a sign-in's two steps share nothing but
// the PendingSignIn, which survives JSON (a console keeps it sealed, and
// another may finish it); the state and the issuer are checked, and the
// code is exchanged with the verifier.
func TestSignInBegunAndFinishedApart(t *testing.T) {
	o := newOAuthServer(t)
	need := SignInNeed{Server: "locked", URL: o.URL, Scopes: []string{"extra"}}
	p, err := BeginSignIn(context.Background(), need, SignInOptions{RedirectURL: "https://console.example/mcp/callback", By: "alice"})
	require.NoError(t, err)
	require.Equal(t, "dyn-client", p.ClientID)
	require.Equal(t, []string{"tools", "extra"}, p.Scopes, "the challenge's scope and the need's")
	require.Equal(t, o.URL, p.Resource)
	require.NotEmpty(t, p.Verifier)
	require.NotContains(t, p.AuthURL, p.Verifier, "the URL carries the challenge, not the verifier")
	require.Equal(t, int64(0), o.Tokens.Load())

	b, err := json.Marshal(p)
	require.NoError(t, err)
	var kept PendingSignIn
	require.NoError(t, json.Unmarshal(b, &kept))
	loc, err := oauthmcp.Follow(context.Background(), kept.AuthURL, kept.RedirectURL)
	require.NoError(t, err)
	code, state := loc.Query().Get("code"), loc.Query().Get("state")
	require.Equal(t, p.State, state)

	_, err = FinishSignIn(context.Background(), &kept, SignInResult{Code: code, State: "another"}, nil)
	require.ErrorContains(t, err, "state mismatch")
	_, err = FinishSignIn(context.Background(), &kept, SignInResult{Code: code, State: state, Iss: "https://evil.example"}, nil)
	require.ErrorContains(t, err, "does not match expected issuer")
	require.Equal(t, int64(0), o.Tokens.Load(), "nothing was exchanged")

	gr, err := FinishSignIn(context.Background(), &kept, SignInResult{Code: code, State: state}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(1), o.Tokens.Load())
	require.Equal(t, o.AccessToken(1), gr.Token.AccessToken)
	require.Equal(t, "alice", gr.By)
	require.Equal(t, "dyn-client", gr.ClientID)
	require.Equal(t, o.URL, gr.URL)
}

func TestSignInOfAServerThatNeedsNone(t *testing.T) {
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	t.Cleanup(open.Close)
	_, err := BeginSignIn(context.Background(), SignInNeed{Server: "open", URL: open.URL}, SignInOptions{RedirectURL: "https://console.example/cb"})
	require.ErrorContains(t, err, "without a sign-in")
}

// TestSignInUsesItsClientMetadataDocumentWhereTaken (E3, issue 48): the
// sign-in's own client ID metadata document (the console's) is its
// client_id where the authorization server advertises
// client_id_metadata_document_supported, and nothing is registered;
// elsewhere it registers dynamically. A client the entry names comes
// first. The redirect_uri is the one the sign-in was given.
func TestSignInUsesItsClientMetadataDocumentWhereTaken(t *testing.T) {
	const (
		doc      = "https://console.example/client-metadata.json"
		redirect = "https://console.example/mcp/callback"
	)
	for name, tc := range map[string]struct {
		advertised bool
		oauth      *OAuthConfig
		client     string
		registered int64
		// token is the client_id of the token request ("": sent otherwise).
		token string
	}{
		"advertised: the document":                           {advertised: true, client: doc, token: doc},
		"not advertised: dynamic registration":               {client: "dyn-client", registered: 1, token: "dyn-client"},
		"the entry's pre-registered client first":            {advertised: true, oauth: &OAuthConfig{ClientID: "pre"}, client: "pre"},
		"the entry's document first":                         {advertised: true, oauth: &OAuthConfig{ClientMetadataURL: "https://worker.example/c.json"}, client: "https://worker.example/c.json", token: "https://worker.example/c.json"},
		"the entry's document, not advertised: registration": {oauth: &OAuthConfig{ClientMetadataURL: "https://worker.example/c.json"}, client: "dyn-client", registered: 1, token: "dyn-client"},
	} {
		t.Run(name, func(t *testing.T) {
			o := newOAuthServer(t)
			o.ClientIDMetadata.Store(tc.advertised)
			ctx := context.Background()
			p, err := BeginSignIn(ctx, SignInNeed{Server: "locked", URL: o.URL, OAuth: tc.oauth},
				SignInOptions{RedirectURL: redirect, ClientMetadataURL: doc})
			require.NoError(t, err)
			require.Equal(t, tc.client, p.ClientID)
			require.Empty(t, p.ClientSecret)
			require.Equal(t, tc.registered, o.Registered.Load())
			au, err := url.Parse(p.AuthURL)
			require.NoError(t, err)
			require.Equal(t, tc.client, au.Query().Get("client_id"))
			require.Equal(t, redirect, au.Query().Get("redirect_uri"))

			loc, err := oauthmcp.Follow(ctx, p.AuthURL, redirect)
			require.NoError(t, err)
			gr, err := FinishSignIn(ctx, p, SignInResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil)
			require.NoError(t, err)
			require.Equal(t, tc.client, gr.ClientID, "the workers refresh as the same client")
			seen := o.Clients()
			require.Equal(t, "authorize "+tc.client, seen[0])
			if tc.token != "" {
				require.Equal(t, []string{"authorize " + tc.client, "token " + tc.token}, seen, "a public client names itself at the token endpoint")
			}
		})
	}
}

// TestSignInRefusesABadClientMetadataURL: a client ID metadata document's
// URL is a client_id: https, with a path, and nothing else.
func TestSignInRefusesABadClientMetadataURL(t *testing.T) {
	o := newOAuthServer(t)
	o.ClientIDMetadata.Store(true)
	for _, bad := range []string{"http://console.example/client-metadata.json", "https://console.example", "https://console.example/",
		"https://console.example/c.json?x=1", "https://console.example/c.json#f", "https://u@console.example/c.json",
		"https://console.example/a/../c.json"} {
		_, err := BeginSignIn(context.Background(), SignInNeed{Server: "locked", URL: o.URL},
			SignInOptions{RedirectURL: "https://console.example/mcp/callback", ClientMetadataURL: bad})
		require.ErrorContains(t, err, "client ID metadata document URL", bad)
	}
	require.Equal(t, int64(0), o.Authorized.Load()+o.Registered.Load())
}

func TestClientMetadataDocument(t *testing.T) {
	b, err := json.Marshal(NewClientMetadata("https://console.example/client-metadata.json", "toolround console", "https://console.example/mcp/callback"))
	require.NoError(t, err)
	require.JSONEq(t, `{"client_id":"https://console.example/client-metadata.json","client_name":"toolround console",
		"redirect_uris":["https://console.example/mcp/callback"],"grant_types":["authorization_code","refresh_token"],
		"response_types":["code"],"token_endpoint_auth_method":"none","application_type":"web"}`, string(b))
}
