package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/toolround/toolround/tools/netguard"
)

// SignInOptions are how SignIn reaches a person and the server.
type SignInOptions struct {
	// RedirectURL is the redirect URI registered for the client: the
	// console's callback. Required.
	RedirectURL string
	// Person opens the authorization URL for a person and returns what
	// the redirect carried back. Required.
	Person SignInFunc
	// NetPolicy guards the server's URL and every URL it names (metadata,
	// registration, token endpoint). Default netguard.DefaultPolicy().
	NetPolicy *netguard.Policy
	// By names who signs in, kept in the grant.
	By string
}

// SignIn connects to need's server as a client that has a person sign in
// (authorization code with PKCE, the SDK's auth package: metadata
// discovery, client registration, the server's scopes and those need
// asks for), and returns the grant the workers then use. The handshake
// proves the token works.
func SignIn(ctx context.Context, need SignInNeed, o SignInOptions) (*Grant, error) {
	if o.RedirectURL == "" || o.Person == nil {
		return nil, errors.New("mcp: sign-in needs a redirect URL and a person")
	}
	client := guardedClient(o.NetPolicy, DefaultConnectTimeout)
	var grant *Grant
	keep := func(c *oauth2.Config, tok *oauth2.Token) {
		grant = &Grant{Server: need.Server, URL: need.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle, Scopes: c.Scopes, Token: tok,
			By: o.By, At: time.Now().UTC()}
	}
	// The need's client secret is expanded already.
	sc := ServerConfig{Name: need.Server, URL: need.URL, OAuth: need.OAuth}
	h, err := codeHandler(sc, o.Person, o.RedirectURL, client, keep, need.Scopes)
	if err != nil {
		return nil, fmt.Errorf("mcp: sign-in for server %q: %w", need.Server, err)
	}
	c := sdk.NewClient(clientInfo, nil)
	t := &sdk.StreamableClientTransport{Endpoint: need.URL, OAuthHandler: h,
		HTTPClient: &http.Client{Transport: fixedHeaders{base: client.Transport, h: need.Headers}}}
	sess, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: sign-in for server %q: %w", need.Server, err)
	}
	_ = sess.Close()
	if grant == nil {
		return nil, fmt.Errorf("mcp: server %q let the client in without a sign-in; its workers need none", need.Server)
	}
	return grant, nil
}

// fixedHeaders sets headers on every request, as they are.
type fixedHeaders struct {
	base http.RoundTripper
	h    map[string]string
}

func (t fixedHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.h {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}
