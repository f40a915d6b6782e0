package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/netguard"
)

// OAuth 2.1 for the MCP gateway (Z1), as the MCP authorization spec has
// it: the gateway is a protected resource whose metadata (RFC 9728) names
// the operator's authorization server; a JWT access token it issued, for
// this gateway (RFC 8707's audience) and with the scopes it needs, acts as
// an agent token whose name is its subject and whose sessions come from
// one of its claims. The issuer's metadata and keys are fetched through
// the network guard and kept; an unknown key id fetches them again, at
// most once a minute.

// GatewayOAuth configures OAuth for the gateway; a zero Issuer turns it
// off.
type GatewayOAuth struct {
	// Issuer is MCP_GATEWAY_ISSUER, the authorization server.
	Issuer string
	// Audience is MCP_GATEWAY_AUDIENCE; default the gateway's canonical
	// URL.
	Audience string
	// Scopes is MCP_GATEWAY_SCOPES, every one of which a token needs.
	Scopes []string
	// SessionsClaim is MCP_GATEWAY_SESSIONS_CLAIM, the claim that lists a
	// token's session patterns; default "toolround_sessions".
	SessionsClaim string
	// Net guards the fetches; nil: netguard's default policy.
	Net *netguard.Policy
}

// ProtectedResourcePath is where the gateway's resource metadata is.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource" + GatewayPath

// keysEvery bounds how often an unknown key id fetches the keys again.
const keysEvery = time.Minute

type gatewayAuth struct {
	o        GatewayOAuth
	audience string
	client   *http.Client

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	fetched time.Time
}

func newGatewayAuth(o GatewayOAuth, baseURL string) *gatewayAuth {
	if o.Issuer == "" {
		return nil
	}
	a := &gatewayAuth{o: o, audience: o.Audience}
	if a.audience == "" {
		a.audience = strings.TrimSuffix(baseURL, "/") + GatewayPath
	}
	if a.o.SessionsClaim == "" {
		a.o.SessionsClaim = "toolround_sessions"
	}
	p := netguard.DefaultPolicy()
	if o.Net != nil {
		p = *o.Net
	}
	a.client = &http.Client{Transport: p.Transport(), Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return a
}

// metadataURL is the resource metadata's URL for WWW-Authenticate.
func (a *gatewayAuth) metadataURL(baseURL string) string {
	return strings.TrimSuffix(baseURL, "/") + ProtectedResourcePath
}

// challenge is the 401's WWW-Authenticate (the MCP authorization spec).
func (a *gatewayAuth) challenge(baseURL, errCode string) string {
	v := fmt.Sprintf(`Bearer resource_metadata=%q`, a.metadataURL(baseURL))
	if len(a.o.Scopes) > 0 {
		v += fmt.Sprintf(`, scope=%q`, strings.Join(a.o.Scopes, " "))
	}
	if errCode != "" {
		v += fmt.Sprintf(`, error=%q`, errCode)
	}
	return v
}

// serveMetadata is RFC 9728's document for the gateway.
func (s *Server) serveGatewayMetadata(w http.ResponseWriter, _ *http.Request) {
	a := s.gwAuth
	if a == nil {
		writeError(w, round.CodeNotFound, "the MCP gateway takes no OAuth tokens here (MCP_GATEWAY_ISSUER is not set)")
		return
	}
	doc := map[string]any{
		"resource":                 a.audience,
		"authorization_servers":    []string{a.o.Issuer},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "toolround MCP gateway",
	}
	if len(a.o.Scopes) > 0 {
		doc["scopes_supported"] = a.o.Scopes
	}
	w.Header().Set("Cache-Control", "max-age=300")
	writeJSON(w, http.StatusOK, doc)
}

// errForbiddenToken is a valid token that may not use the gateway: a
// scope or the sessions claim is missing (403).
var errForbiddenToken = errors.New("forbidden")

type gatewayClaims struct {
	jwt.Claims
	Scope    string          `json:"scope"`
	Scp      []string        `json:"scp"`
	Sessions json.RawMessage `json:"-"`
}

// verify checks an access token and returns the principal it acts as.
func (a *gatewayAuth) verify(ctx context.Context, token string) (principal, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
		jose.ES256, jose.ES384, jose.ES512, jose.EdDSA})
	if err != nil {
		return principal{}, fmt.Errorf("not a signed JWT: %w", err)
	}
	if len(tok.Headers) != 1 {
		return principal{}, errors.New("a token with more than one signature")
	}
	key, err := a.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return principal{}, err
	}
	var c gatewayClaims
	all := map[string]json.RawMessage{}
	if err := tok.Claims(key, &c, &all); err != nil {
		return principal{}, fmt.Errorf("the signature does not verify: %w", err)
	}
	if c.Expiry == nil {
		return principal{}, errors.New("the token has no expiry")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: a.o.Issuer, AnyAudience: jwt.Audience{a.audience}, Time: time.Now()}, 30*time.Second); err != nil {
		return principal{}, fmt.Errorf("the token is not for this gateway now: %w", err)
	}
	if c.Subject == "" {
		return principal{}, errors.New("the token has no subject")
	}
	have := append(strings.Fields(c.Scope), c.Scp...)
	for _, want := range a.o.Scopes {
		if !slices.Contains(have, want) {
			return principal{}, fmt.Errorf("%w: the token lacks the scope %q", errForbiddenToken, want)
		}
	}
	scope, err := sessionsOf(all[a.o.SessionsClaim])
	if err != nil {
		return principal{}, fmt.Errorf("%w: the claim %s: %v", errForbiddenToken, a.o.SessionsClaim, err)
	}
	return principal{Name: c.Subject, Role: RoleAgent, Via: "api", Scope: scope}, nil
}

// sessionsOf reads the sessions claim: an array of patterns or one
// space-separated string.
func sessionsOf(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("absent: the token names no sessions")
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, errors.New("give session patterns as an array of strings or one space-separated string")
		}
		list = strings.Fields(one)
	}
	if len(list) == 0 {
		return nil, errors.New("empty: the token names no sessions")
	}
	return list, nil
}

// key is the issuer's key kid, fetching the keys when kid is unknown.
func (a *gatewayAuth) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	find := func() *jose.JSONWebKey {
		if a.keys == nil {
			return nil
		}
		for i, k := range a.keys.Keys {
			if (kid == "" || k.KeyID == kid) && k.Use != "enc" {
				return &a.keys.Keys[i]
			}
		}
		return nil
	}
	if k := find(); k != nil {
		return k, nil
	}
	if time.Since(a.fetched) < keysEvery && a.keys != nil {
		return nil, fmt.Errorf("no key %q at the issuer", kid)
	}
	keys, err := a.fetchKeys(ctx)
	a.fetched = time.Now()
	if err != nil {
		return nil, fmt.Errorf("the issuer's keys: %w", err)
	}
	a.keys = keys
	if k := find(); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q at the issuer", kid)
}

// fetchKeys reads the issuer's metadata (RFC 8414, then OpenID
// Connect's) and its JWKS.
func (a *gatewayAuth) fetchKeys(ctx context.Context) (*jose.JSONWebKeySet, error) {
	iss := strings.TrimSuffix(a.o.Issuer, "/")
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	var err error
	for _, u := range wellKnown(iss) {
		if err = a.getJSON(ctx, u, &meta); err == nil && meta.JWKSURI != "" {
			break
		}
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("no jwks_uri in the issuer's metadata: %v", err)
	}
	if strings.TrimSuffix(meta.Issuer, "/") != iss {
		return nil, fmt.Errorf("the metadata names issuer %q, not %q", meta.Issuer, a.o.Issuer)
	}
	var set jose.JSONWebKeySet
	if err := a.getJSON(ctx, meta.JWKSURI, &set); err != nil {
		return nil, err
	}
	return &set, nil
}

// wellKnown are the metadata URLs of an issuer, with its path inserted
// after the well-known part (RFC 8414) and appended (OpenID Connect).
func wellKnown(iss string) []string {
	scheme, rest, _ := strings.Cut(iss, "://")
	host, path, _ := strings.Cut(rest, "/")
	if path != "" {
		path = "/" + path
	}
	return []string{
		scheme + "://" + host + "/.well-known/oauth-authorization-server" + path,
		scheme + "://" + host + "/.well-known/openid-configuration" + path,
		iss + "/.well-known/openid-configuration",
	}
}

func (a *gatewayAuth) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}
