package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolround/toolround/tools/secrets"
)

// Signed-in servers for workers (E3). A person signs in once through the
// console (SignIn, signin.go); what that leaves, a Grant, is sealed with
// the secret key in Redis, where every worker reads it. A worker sends the
// grant's access token, refreshes it at the grant's token endpoint when it
// expires, and writes the new token back, so that other workers and a
// restart use it too. A worker never signs in itself: a server that
// answers 401 without a usable grant is recorded as a SignInNeed, which the
// console lists with its sign-in button, and the worker connects it as
// soon as a grant appears. Tokens never reach history, logs or events:
// they live only in the sealed records and in the HTTP requests to the
// server and its authorization server.

// Grant is a person's sign-in for one server: the token, and what
// refreshing it needs.
type Grant struct {
	// Server is the server's name in MCP_CONFIG, URL its endpoint: a grant
	// is used only for the same name and URL.
	Server string `json:"server"`
	URL    string `json:"url"`
	// ClientID, ClientSecret, TokenURL and AuthStyle are the OAuth client
	// the token was issued to, and where it is refreshed.
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	// By is who signed in (the console's token name), At when.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
}

func (g *Grant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

// SignInNeed is a server that a worker could not connect for want of a
// sign-in: what the console needs to sign it in.
type SignInNeed struct {
	Server string `json:"server"`
	URL    string `json:"url"`
	// Headers are the entry's headers, expanded; OAuth its client, with
	// the secret expanded. Both are sealed with the rest.
	Headers map[string]string `json:"headers,omitempty"`
	OAuth   *OAuthConfig      `json:"oauth,omitempty"`
	// Scopes are what the server last asked for (WWW-Authenticate), for a
	// step-up.
	Scopes []string  `json:"scopes,omitempty"`
	Since  time.Time `json:"since"`
	// Why is the worker's last error, without any token.
	Why string `json:"why,omitempty"`
}

// The Redis hashes of grants and needs, one field per server.
const (
	grantsKey = "toolround:mcp:grants"
	needsKey  = "toolround:mcp:signins"
)

// Grants keeps grants and sign-in needs sealed in Redis hashes (the
// storage of store_secret's values; cache.SessionData implements it).
type Grants struct {
	h   secrets.Hashes
	key []byte
}

// NewGrants keeps grants in h, sealed with key (the secret key, as
// store_secret's values are).
func NewGrants(h secrets.Hashes, key []byte) (*Grants, error) {
	if h == nil {
		return nil, errors.New("mcp: grants need shared storage")
	}
	if len(key) != secrets.KeySize {
		return nil, fmt.Errorf("mcp: grants need a %d-byte key", secrets.KeySize)
	}
	return &Grants{h: h, key: key}, nil
}

func (g *Grants) put(ctx context.Context, hash, field string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sealed, err := secrets.Seal(g.key, string(b))
	if err != nil {
		return err
	}
	return g.h.HSet(ctx, hash, field, sealed, 0)
}

func (g *Grants) get(ctx context.Context, hash, field string, v any) (bool, error) {
	sealed, ok, err := g.h.HGet(ctx, hash, field)
	if err != nil || !ok {
		return false, err
	}
	plain, err := secrets.Open(g.key, sealed)
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal([]byte(plain), v)
}

// Grant returns the grant for server at url, or nil when there is none
// (or only one for another URL).
func (g *Grants) Grant(ctx context.Context, server, url string) (*Grant, error) {
	var gr Grant
	ok, err := g.get(ctx, grantsKey, server, &gr)
	if err != nil {
		return nil, fmt.Errorf("mcp: the grant of server %q: %w", server, err)
	}
	if !ok || gr.URL != url || gr.Token == nil {
		return nil, nil
	}
	return &gr, nil
}

// PutGrant keeps gr, and clears its server's sign-in need.
func (g *Grants) PutGrant(ctx context.Context, gr *Grant) error {
	if err := g.put(ctx, grantsKey, gr.Server, gr); err != nil {
		return fmt.Errorf("mcp: keep the grant of server %q: %w", gr.Server, err)
	}
	return g.h.HDel(ctx, needsKey, gr.Server)
}

// NeedSignIn records that n.Server needs a sign-in, since the first time
// it was recorded.
func (g *Grants) NeedSignIn(ctx context.Context, n SignInNeed) error {
	if old, ok, err := g.Need(ctx, n.Server); err == nil && ok && !old.Since.IsZero() {
		n.Since = old.Since
	}
	if n.Since.IsZero() {
		n.Since = time.Now().UTC()
	}
	return g.put(ctx, needsKey, n.Server, n)
}

// Need returns server's sign-in need.
func (g *Grants) Need(ctx context.Context, server string) (SignInNeed, bool, error) {
	var n SignInNeed
	ok, err := g.get(ctx, needsKey, server, &n)
	return n, ok, err
}

// Needs lists the servers that need a sign-in, by name.
func (g *Grants) Needs(ctx context.Context) ([]SignInNeed, error) {
	names, err := g.h.HKeys(ctx, needsKey)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]SignInNeed, 0, len(names))
	for _, name := range names {
		n, ok, err := g.Need(ctx, name)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// grantAuth is the OAuth handler of a worker's server: it sends the
// grant's token, and turns a 401 into a sign-in need.
type grantAuth struct {
	s   *server
	src *grantSource
}

func (a *grantAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return a.src, nil }

func (a *grantAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && challengeParam(challenges, "error") != "insufficient_scope" {
		return nil // not about the token: the retry gets the same answer
	}
	// A person may have signed in, or another worker refreshed, since the
	// token this request carried.
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if gr, err := a.s.opts.Grants.Grant(ctx, a.s.cfg.Name, a.s.cfg.URL); err == nil && gr != nil && gr.Token.AccessToken != sent {
		a.src.set(gr)
		return nil
	}
	a.src.set(nil)
	var scopes []string
	if sc := challengeParam(challenges, "scope"); sc != "" {
		scopes = strings.Fields(sc)
	}
	why := fmt.Sprintf("the server answered %d", resp.StatusCode)
	if sent != "" {
		why += " to the signed-in token"
	}
	if err := a.s.needSignIn(ctx, scopes, why); err != nil {
		a.s.log.Warn("mcp: could not record that the server needs a sign-in", "err", err)
	}
	return fmt.Errorf("%w: %s; %s", ErrNeedsSignIn, why, a.s.signInHint())
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") {
			if v, ok := c.Params[name]; ok {
				return v
			}
		}
	}
	return ""
}

// grantSource is the token of a server's grant, refreshed when it
// expires; the refreshed token is written back for the other workers.
type grantSource struct {
	s  *server
	mu sync.Mutex
	g  *Grant
}

func (t *grantSource) set(g *Grant) {
	t.mu.Lock()
	t.g = g
	t.mu.Unlock()
}

// Token returns the access token; none (nil, no error) without a grant,
// so that the request goes out bare and its 401 asks for a sign-in.
func (t *grantSource) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), t.s.opts.ConnectTimeout)
	defer cancel()
	store, name, url := t.s.opts.Grants, t.s.cfg.Name, t.s.cfg.URL
	if t.g == nil || !t.g.Token.Valid() {
		// A new sign-in, or a token another worker refreshed.
		g, err := store.Grant(ctx, name, url)
		if err != nil {
			return nil, err
		}
		if g != nil {
			t.g = g
		}
	}
	if t.g == nil {
		return nil, nil
	}
	if t.g.Token.Valid() {
		return t.g.Token, nil
	}
	if t.g.Token.RefreshToken == "" {
		return nil, nil
	}
	tok, err := t.g.config().TokenSource(context.WithValue(ctx, oauth2.HTTPClient, t.s.oauthClient()), t.g.Token).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			t.g = nil
			return nil, err // the request goes out bare; its 401 asks for a sign-in
		}
		return nil, fmt.Errorf("mcp: refresh the token of server %q at %s: %w", name, t.g.TokenURL, scrub(err))
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = t.g.Token.RefreshToken
	}
	g := *t.g
	g.Token = tok
	if err := store.PutGrant(ctx, &g); err != nil {
		t.s.log.Warn("mcp: the refreshed token was not kept for the other workers", "err", err)
	}
	t.g = &g
	t.s.log.Info("mcp: token refreshed", "expires", tok.Expiry.UTC().Format(time.RFC3339))
	return tok, nil
}

// scrub keeps an error about a token request to its kind: a token
// endpoint's body may echo what it was sent.
func scrub(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return fmt.Errorf("the token endpoint answered %s", re.ErrorCode)
		}
		if re.Response != nil {
			return fmt.Errorf("the token endpoint answered HTTP %d", re.Response.StatusCode)
		}
	}
	return err
}

// needSignIn records that s needs a person's sign-in, with what the
// console needs to do it.
func (s *server) needSignIn(ctx context.Context, scopes []string, why string) error {
	h, err := s.cfg.headers()
	if err != nil {
		return err
	}
	oc, err := s.cfg.OAuth.expanded()
	if err != nil {
		return err
	}
	return s.opts.Grants.NeedSignIn(ctx, SignInNeed{Server: s.cfg.Name, URL: s.cfg.URL, Headers: h, OAuth: oc, Scopes: scopes, Why: why})
}

// signInHint says where a person signs the server in.
func (s *server) signInHint() string {
	if s.opts.SignInLink != "" {
		return "a person signs it in at " + s.opts.SignInLink
	}
	return "a person signs it in on the console's MCP page (/mcp)"
}
