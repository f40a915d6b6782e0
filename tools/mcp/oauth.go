package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolround/toolround/internal/jsonconf"
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
// server, or a worker without SignIn.
func (s *server) oauthHandler() (*auth.AuthorizationCodeHandler, error) {
	if s.cfg.stdio() || s.opts.SignIn == nil {
		return nil, nil
	}
	if s.opts.RedirectURL == "" {
		return nil, errors.New("oauth: Config.RedirectURL is empty")
	}
	name, signIn, redirect := s.cfg.Name, s.opts.SignIn, s.opts.RedirectURL
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			s.log.Info("mcp: the server needs a sign-in", "redirect_url", redirect)
			r, err := signIn(ctx, SignInRequest{Server: name, URL: args.URL, RedirectURL: redirect})
			if err != nil {
				return nil, fmt.Errorf("sign-in for server %q: %w", name, err)
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}, nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:   "toolround worker",
				RedirectURIs: []string{redirect},
				// The worker keeps its tokens and refreshes them.
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		RequestRefreshToken: true,
		// Metadata, registration and token requests go out as the
		// server's own requests do, without its configured headers.
		Client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}
	if o := s.cfg.OAuth; o != nil {
		if o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		if o.ClientID != "" {
			secret, err := jsonconf.ExpandEnv(o.ClientSecret)
			if err != nil {
				return nil, fmt.Errorf("oauth client_secret: %w", err)
			}
			pre := &oauthex.ClientCredentials{ClientID: o.ClientID}
			if secret != "" {
				pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
			}
			cfg.PreregisteredClient = pre
		}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}
