package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolround/toolround/tools/netguard"
)

// A console's sign-in is two steps, which may run on two consoles (O3):
// BeginSignIn discovers the server's authorization server, registers the
// client and makes the PKCE verifier and the state, and returns them as a
// PendingSignIn with the URL the person opens; FinishSignIn takes what the
// redirect carried back and exchanges the code. Between the two nothing
// waits in memory: the PendingSignIn is all there is. The discovery is the
// SDK's auth package's, in the same order (WWW-Authenticate, protected
// resource metadata, authorization server metadata, the entry's client ID
// metadata document, its pre-registered client, the signing-in party's own
// client ID metadata document, else dynamic registration).

// SignInOptions are how SignIn reaches a person and the server.
type SignInOptions struct {
	// RedirectURL is the redirect URI registered for the client: the
	// console's callback. Required.
	RedirectURL string
	// Person opens the authorization URL for a person and returns what
	// the redirect carried back. Required by SignIn.
	Person SignInFunc
	// NetPolicy guards the server's URL and every URL it names (metadata,
	// registration, token endpoint). Default netguard.DefaultPolicy().
	NetPolicy *netguard.Policy
	// By names who signs in, kept in the grant.
	By string
	// ClientMetadataURL is the https URL of the client ID metadata
	// document of whoever runs the sign-in (the console's), whose
	// redirect_uris hold RedirectURL. Where the authorization server
	// takes those documents and the entry names no client of its own, it
	// is the client_id, and nothing is registered. "": none.
	ClientMetadataURL string
}

// PendingSignIn is a started sign-in: what finishing it needs once the
// authorization server sends the person back. It holds the PKCE verifier
// and the client's secret, so it is kept sealed.
type PendingSignIn struct {
	Server  string            `json:"server"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	// AuthURL is where the person signs in; State is its OAuth state.
	AuthURL     string `json:"auth_url"`
	State       string `json:"state"`
	Verifier    string `json:"verifier"`
	RedirectURL string `json:"redirect_url"`
	// Resource is the protected resource the token is asked for (RFC
	// 8707), Issuer the authorization server, which must answer with its
	// iss (RFC 9207) when IssRequired.
	Resource    string `json:"resource"`
	Issuer      string `json:"issuer"`
	IssRequired bool   `json:"iss_required,omitempty"`
	// The client, and where the code is exchanged.
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	By           string           `json:"by,omitempty"`
}

func (p *PendingSignIn) config() *oauth2.Config {
	return &oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, RedirectURL: p.RedirectURL, Scopes: p.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: p.TokenURL, AuthStyle: p.AuthStyle}}
}

// SignIn connects to need's server as a client that has a person sign in
// (authorization code with PKCE: metadata discovery, client registration,
// the server's scopes and those need asks for), and returns the grant the
// workers then use. The handshake proves the token works.
func SignIn(ctx context.Context, need SignInNeed, o SignInOptions) (*Grant, error) {
	if o.RedirectURL == "" || o.Person == nil {
		return nil, errors.New("mcp: sign-in needs a redirect URL and a person")
	}
	p, err := BeginSignIn(ctx, need, o)
	if err != nil {
		return nil, err
	}
	r, err := o.Person(ctx, SignInRequest{Server: need.Server, URL: p.AuthURL, RedirectURL: p.RedirectURL})
	if err != nil {
		return nil, fmt.Errorf("mcp: sign-in for server %q: %w", need.Server, err)
	}
	return FinishSignIn(ctx, p, r, o.NetPolicy)
}

// BeginSignIn starts a sign-in for need's server: the server's 401, its
// authorization server's metadata, the client's registration, the PKCE
// verifier and the state. The person opens the result's AuthURL;
// FinishSignIn ends it.
func BeginSignIn(ctx context.Context, need SignInNeed, o SignInOptions) (*PendingSignIn, error) {
	if o.RedirectURL == "" {
		return nil, errors.New("mcp: sign-in needs a redirect URL")
	}
	if o.ClientMetadataURL != "" {
		if err := CheckClientMetadataURL(o.ClientMetadataURL); err != nil {
			return nil, fmt.Errorf("mcp: sign-in: %w", err)
		}
	}
	p, err := beginSignIn(ctx, need, o)
	if err != nil {
		return nil, fmt.Errorf("mcp: sign-in for server %q: %w", need.Server, err)
	}
	return p, nil
}

func beginSignIn(ctx context.Context, need SignInNeed, o SignInOptions) (*PendingSignIn, error) {
	client := guardedClient(o.NetPolicy, DefaultConnectTimeout)
	challenges, err := askServer(ctx, need, client)
	if err != nil {
		return nil, err
	}
	prm, err := resourceMetadata(ctx, challenges, need.URL, client)
	if err != nil {
		return nil, err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], client)
	if err != nil {
		return nil, fmt.Errorf("failed to get authorization server metadata: %w", err)
	}
	if asm == nil {
		// A server without metadata: the 2025-03-26 endpoints.
		as := prm.AuthorizationServers[0]
		asm = &oauthex.AuthServerMeta{Issuer: as, AuthorizationEndpoint: as + "/authorize", TokenEndpoint: as + "/token",
			RegistrationEndpoint: as + "/register"}
	}
	c, err := registerClient(ctx, need.OAuth, o.ClientMetadataURL, asm, o.RedirectURL, client)
	if err != nil {
		return nil, err
	}
	scopes := strings.Fields(challengeParam(challenges, "scope"))
	if len(scopes) == 0 {
		scopes = slices.Clone(prm.ScopesSupported)
	}
	for _, sc := range need.Scopes {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	// The workers keep the tokens and refresh them.
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	p := &PendingSignIn{Server: need.Server, URL: need.URL, Headers: need.Headers, State: rand.Text(), Verifier: oauth2.GenerateVerifier(),
		RedirectURL: o.RedirectURL, Resource: prm.Resource, Issuer: asm.Issuer, IssRequired: asm.AuthorizationResponseIssParameterSupported,
		ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: asm.TokenEndpoint, AuthStyle: c.AuthStyle, Scopes: scopes, By: o.By}
	cfg := p.config()
	cfg.Endpoint.AuthURL = asm.AuthorizationEndpoint
	p.AuthURL = cfg.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Resource))
	return p, nil
}

// FinishSignIn ends p with what the redirect carried back: the state and
// the issuer are checked, the code is exchanged (with the verifier), and
// the handshake proves the token works.
func FinishSignIn(ctx context.Context, p *PendingSignIn, r SignInResult, policy *netguard.Policy) (*Grant, error) {
	gr, err := finishSignIn(ctx, p, r, policy)
	if err != nil {
		return nil, fmt.Errorf("mcp: sign-in for server %q: %w", p.Server, err)
	}
	return gr, nil
}

func finishSignIn(ctx context.Context, p *PendingSignIn, r SignInResult, policy *netguard.Policy) (*Grant, error) {
	if r.State != p.State {
		return nil, errors.New("state mismatch")
	}
	if err := checkIssuer(r.Iss, p.Issuer, p.IssRequired); err != nil {
		return nil, err
	}
	client := guardedClient(policy, DefaultConnectTimeout)
	cfg := p.config()
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, client), r.Code,
		oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Resource))
	if err != nil {
		return nil, fmt.Errorf("token exchange failed: %w", scrub(err))
	}
	c := sdk.NewClient(clientInfo, nil)
	t := &sdk.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(tok), Base: fixedHeaders{base: client.Transport, h: p.Headers}}}}
	sess, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("the server refused the new token: %w", err)
	}
	_ = sess.Close()
	return &Grant{Server: p.Server, URL: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret, TokenURL: p.TokenURL,
		AuthStyle: p.AuthStyle, Scopes: p.Scopes, Token: tok, By: p.By, At: time.Now().UTC()}, nil
}

// askServer sends need's server an initialize without a token and returns
// the challenges of its 401 (or its 403 insufficient_scope).
func askServer(ctx context.Context, need SignInNeed, client *http.Client) ([]oauthex.Challenge, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": clientInfo}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, need.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: fixedHeaders{base: client.Transport, h: need.Headers}, Timeout: client.Timeout}).Do(req)
	if err != nil {
		return nil, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
	}()
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("failed to parse WWW-Authenticate header: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
	case resp.StatusCode == http.StatusForbidden && challengeParam(challenges, "error") == "insufficient_scope":
	case resp.StatusCode < 300:
		return nil, errors.New("the server let the client in without a sign-in; its workers need none")
	default:
		return nil, fmt.Errorf("the server answered %d, not 401", resp.StatusCode)
	}
	return challenges, nil
}

// resourceMetadata is the server's protected resource metadata (RFC
// 9728): at the challenge's resource_metadata, else at the well-known
// paths; without any, the server's root is its authorization server.
func resourceMetadata(ctx context.Context, challenges []oauthex.Challenge, serverURL string, client *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	type where struct{ url, resource string }
	var tries []where
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			tries = append(tries, where{u, serverURL})
			break
		}
	}
	ru, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("failed to parse MCP server URL: %v", err)
	}
	mu := *ru
	mu.RawQuery, mu.Fragment = "", ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, where{mu.String(), serverURL})
	root := *ru
	root.Path, root.RawPath = "", ""
	mu.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, where{mu.String(), root.String()})
	for _, w := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, w.url, w.resource, client)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("protected resource metadata has no authorization servers specified")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: serverURL}, nil
}

// registeredClient is the OAuth client a sign-in uses.
type registeredClient struct {
	ClientID, ClientSecret string
	AuthStyle              oauth2.AuthStyle
}

// registerClient picks the client as the SDK's handler does: the entry's
// client ID metadata document where the authorization server takes
// those, its pre-registered client, then (where the authorization server
// takes them) own, the client ID metadata document of whoever runs the
// sign-in, else dynamic registration. A client ID metadata document names
// a public client: it authenticates at the token endpoint with its
// client_id alone (token_endpoint_auth_method "none").
func registerClient(ctx context.Context, oc *OAuthConfig, own string, asm *oauthex.AuthServerMeta, redirect string, client *http.Client) (*registeredClient, error) {
	if oc != nil && oc.ClientMetadataURL != "" {
		if err := CheckClientMetadataURL(oc.ClientMetadataURL); err != nil {
			return nil, err
		}
		if asm.ClientIDMetadataDocumentSupported {
			return &registeredClient{ClientID: oc.ClientMetadataURL, AuthStyle: oauth2.AuthStyleInParams}, nil
		}
	}
	if oc != nil && oc.ClientID != "" {
		return &registeredClient{ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
			AuthStyle: tokenAuthStyle(asm.TokenEndpointAuthMethodsSupported)}, nil
	}
	if own != "" && asm.ClientIDMetadataDocumentSupported {
		return &registeredClient{ClientID: own, AuthStyle: oauth2.AuthStyleInParams}, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, errors.New("no configured client registration methods are supported by the authorization server")
	}
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, registrationMetadata(redirect), client)
	if err != nil {
		return nil, fmt.Errorf("failed to register client: %w", err)
	}
	return &registeredClient{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, AuthStyle: authMethodStyle(reg.TokenEndpointAuthMethod)}, nil
}

// CheckClientMetadataURL checks a client ID metadata document's URL, which
// is a client_id: https, a host, a path, and no user, query, fragment or
// dot segments (draft-ietf-oauth-client-id-metadata-document).
func CheckClientMetadataURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "#") || u.Opaque != "" {
		return errors.New("client ID metadata document URL must be a non-root HTTPS URL")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return errors.New("client ID metadata document URL must not have dot segments")
		}
	}
	return nil
}

// ClientMetadata is a client ID metadata document: the client_id is its
// own URL, and the client is public (it authenticates with PKCE, not a
// secret).
type ClientMetadata struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type,omitempty"`
}

// NewClientMetadata is the document at id of a client named name that
// signs in through redirect: the authorization code grant, and refresh
// tokens, which the workers use.
func NewClientMetadata(id, name, redirect string) ClientMetadata {
	reg := registrationMetadata(redirect)
	return ClientMetadata{ClientID: id, ClientName: name, RedirectURIs: reg.RedirectURIs, GrantTypes: reg.GrantTypes,
		ResponseTypes: reg.ResponseTypes, TokenEndpointAuthMethod: "none", ApplicationType: reg.ApplicationType}
}

// registrationMetadata is the client's dynamic registration.
func registrationMetadata(redirect string) *oauthex.ClientRegistrationMetadata {
	return &oauthex.ClientRegistrationMetadata{
		ClientName:   "toolround worker",
		RedirectURIs: []string{redirect},
		// The worker keeps its tokens and refreshes them.
		GrantTypes:      []string{"authorization_code", "refresh_token"},
		ResponseTypes:   []string{"code"},
		ApplicationType: applicationType(redirect),
	}
}

// applicationType is "native" for a redirect to this machine, else "web".
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return ""
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "native"
	}
	host := u.Hostname()
	if host == "localhost" {
		return "native"
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return "native"
	}
	return "web"
}

// tokenAuthStyle is how a pre-registered client authenticates at the
// token endpoint: client_secret_post, else client_secret_basic, else
// whichever works.
func tokenAuthStyle(supported []string) oauth2.AuthStyle {
	for _, m := range []string{"client_secret_post", "client_secret_basic"} {
		if slices.Contains(supported, m) {
			return authMethodStyle(m)
		}
	}
	return oauth2.AuthStyleAutoDetect
}

func authMethodStyle(method string) oauth2.AuthStyle {
	switch method {
	case "client_secret_post", "none":
		return oauth2.AuthStyleInParams
	default: // client_secret_basic is the default (RFC 7591)
		return oauth2.AuthStyleInHeader
	}
}

// checkIssuer checks the redirect's iss (RFC 9207): required when the
// authorization server says it sends one, and always the issuer's.
func checkIssuer(iss, issuer string, required bool) error {
	switch {
	case iss == "" && required:
		return errors.New("authorization server advertises RFC 9207 iss parameter support but none was received in the authorization response")
	case iss == "":
		return nil
	case iss != issuer:
		return fmt.Errorf("authorization response issuer %q does not match expected issuer %q", iss, issuer)
	case !required:
		return errors.New("authorization server does not advertise RFC 9207 iss parameter support but iss was received in the authorization response")
	}
	return nil
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
