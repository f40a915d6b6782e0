package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolround/toolround/internal/jsonconf"
	"github.com/toolround/toolround/tools/netguard"
)

// Servers behind OAuth (E3). A streamable HTTP server that answers 401 is
// authorized with the authorization code flow and PKCE, through the SDK's
// auth package: the protected resource's and the authorization server's
// metadata are discovered, the client registers (a pre-registered client
// of the entry's "oauth", its client metadata document, else dynamic
// registration), the scopes come from WWW-Authenticate or the metadata,
// and a 403 insufficient_scope asks again with the larger set (step-up).
// Only the person's part is left to Config.SignIn: open the authorization
// URL and hand back what the redirect carried. The tokens stay in the
// server's handler, in memory, across its reconnections.

// OAuthConfig is how the worker registers as an OAuth client with a
// server's authorization server. Every field is optional: without any,
// the client registers dynamically.
type OAuthConfig struct {
	// ClientID and ClientSecret are a client registered beforehand
	// ("${NAME}" is expanded as in Env).
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// ClientMetadataURL is the https URL of the worker's client ID
	// metadata document, used where the authorization server supports
	// those.
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
}

// SignInRequest is what a person is asked to do for a server: open URL,
// sign in, and let the authorization server redirect to RedirectURL.
type SignInRequest struct {
	Server      string
	URL         string
	RedirectURL string
}

// SignInResult is what the redirect carried back.
type SignInResult struct {
	Code  string
	State string
	// Iss is the authorization server's iss parameter (RFC 9207), if any.
	Iss string
}

// SignInFunc has a person sign in for a server and returns the redirect's
// parameters, or an error when nobody did.
type SignInFunc func(ctx context.Context, req SignInRequest) (SignInResult, error)

// ErrNeedsSignIn marks a server that asks for OAuth when the worker has
// nobody to sign in (Config.SignIn is nil).
var ErrNeedsSignIn = errors.New("the server needs an OAuth sign-in")

// oauthHandler is s's OAuth handler, or nil when s takes none: a stdio
// server, or a worker with neither SignIn nor Grants. With SignIn the
// worker signs in itself; with Grants it uses the console's sign-ins.
func (s *server) oauthHandler() (auth.OAuthHandler, error) {
	switch {
	case s.cfg.stdio():
		return nil, nil
	case s.opts.SignIn != nil:
		if s.opts.RedirectURL == "" {
			return nil, errors.New("oauth: Config.RedirectURL is empty")
		}
		sc := s.cfg
		var err error
		if sc.OAuth, err = sc.OAuth.expanded(); err != nil {
			return nil, err
		}
		return codeHandler(sc, s.opts.SignIn, s.opts.RedirectURL, s.oauthClient())
	case s.opts.Grants != nil:
		return &grantAuth{s: s, src: &grantSource{s: s}}, nil
	}
	return nil, nil
}

// expanded is o with its client secret's "${NAME}" expanded; nil for nil.
func (o *OAuthConfig) expanded() (*OAuthConfig, error) {
	if o == nil {
		return nil, nil
	}
	oc := *o
	var err error
	if oc.ClientSecret, err = jsonconf.ExpandEnv(o.ClientSecret); err != nil {
		return nil, fmt.Errorf("oauth client_secret: %w", err)
	}
	return &oc, nil
}

// oauthClient makes the requests to the URLs a server names: its
// metadata, its authorization server's registration and token endpoints.
// They go through the network guard, without the entry's headers.
func (s *server) oauthClient() *http.Client {
	return guardedClient(s.opts.NetPolicy, s.opts.ConnectTimeout)
}

// guardedClient is an HTTP client through p (netguard.DefaultPolicy()
// when nil).
func guardedClient(p *netguard.Policy, timeout time.Duration) *http.Client {
	if p == nil {
		d := netguard.DefaultPolicy()
		p = &d
	}
	return &http.Client{Transport: p.Transport(), Timeout: timeout}
}

// codeHandler is the SDK's authorization code handler for sc (whose
// client secret is expanded already), with signIn as the person and
// redirect as the redirect URI.
func codeHandler(sc ServerConfig, signIn SignInFunc, redirect string, client *http.Client) (*auth.AuthorizationCodeHandler, error) {
	name := sc.Name
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			r, err := signIn(ctx, SignInRequest{Server: name, URL: args.URL, RedirectURL: redirect})
			if err != nil {
				return nil, fmt.Errorf("sign-in for server %q: %w", name, err)
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}, nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: registrationMetadata(redirect)},
		RequestRefreshToken:             true,
		Client:                          client,
	}
	if o := sc.OAuth; o != nil {
		if o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		if o.ClientID != "" {
			pre := &oauthex.ClientCredentials{ClientID: o.ClientID}
			if o.ClientSecret != "" {
				pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
			}
			cfg.PreregisteredClient = pre
		}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}
