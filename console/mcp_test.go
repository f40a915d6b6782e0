package console

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testtools/oauthmcp"
	"github.com/toolround/toolround/tools/mcp"
	"github.com/toolround/toolround/tools/secrets"
)

// lockedLog is a log the console writes while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type mcpConsole struct {
	ts     *httptest.Server
	grants *mcp.Grants
	hashes *oauthmcp.MemHashes
	oauth  *oauthmcp.Server
	log    *lockedLog
	// sessionKey and started are what consoles behind one address share.
	sessionKey []byte
	started    MCPSignIns
}

const scopedApprover = "scoped-approver-token-000000000001"

func newMCPConsole(t *testing.T) *mcpConsole {
	t.Helper()
	return newMCPConsoleAt(t, "")
}

// newMCPConsoleAt is a console whose own URL (CONSOLE_URL) is base; ""
// stands for the address it listens on.
func newMCPConsoleAt(t *testing.T, base string) *mcpConsole {
	t.Helper()
	return newMCPConsoleBeside(t, base, nil)
}

// newMCPConsoleBeside is a console whose own URL is base ("": the address
// it listens on); beside another, it shares that one's workers' grants,
// MCP server, session key and started sign-ins, as consoles behind one
// address do (O3).
func newMCPConsoleBeside(t *testing.T, base string, other *mcpConsole) *mcpConsole {
	t.Helper()
	log := &lockedLog{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	c := other
	if c == nil {
		c = newMCPShared(t)
	}
	s, err := New(Options{Backend: newFake(), MCP: c.grants, BaseURL: base, Logger: slog.New(slog.NewTextHandler(log, nil)),
		SessionKey: c.sessionKey, MCPSignIns: c.started, Tokens: []Token{
			{Secret: approverToken, Name: "alice", Role: RoleApprover},
			{Secret: agentToken, Name: "bot", Role: RoleAgent},
			{Secret: scopedApprover, Name: "carol", Role: RoleApprover, Sessions: []string{"team-*"}},
		}})
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(s)
	_ = ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return &mcpConsole{ts: ts, grants: c.grants, hashes: c.hashes, oauth: c.oauth, log: log, sessionKey: c.sessionKey, started: c.started}
}

// newMCPShared is what consoles share: the grants, the MCP server behind
// OAuth, the session key, the started sign-ins.
func newMCPShared(t *testing.T) *mcpConsole {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "locked", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	h := oauthmcp.NewMemHashes()
	g, err := mcp.NewGrants(h, key)
	require.NoError(t, err)
	sessionKey, err := secrets.GenerateKey()
	require.NoError(t, err)
	return &mcpConsole{grants: g, hashes: h, oauth: oauthmcp.New(t, srv), sessionKey: sessionKey,
		started: &recordedSignIns{MCPSignIns: &memorySignIns{m: map[string]memorySignIn{}}}}
}

// recordedSignIns are started sign-ins whose sealed records a test reads.
type recordedSignIns struct {
	MCPSignIns
	mu   sync.Mutex
	puts []string
}

func (r *recordedSignIns) Put(ctx context.Context, key string, sealed []byte, ttl time.Duration) error {
	r.mu.Lock()
	r.puts = append(r.puts, key+" "+string(sealed))
	r.mu.Unlock()
	return r.MCPSignIns.Put(ctx, key, sealed, ttl)
}

func (r *recordedSignIns) raw() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.puts, "\n")
}

// need records what a worker records when the server answers 401.
func (c *mcpConsole) need(t *testing.T) {
	t.Helper()
	require.NoError(t, c.grants.NeedSignIn(context.Background(), mcp.SignInNeed{Server: "locked", URL: c.oauth.URL, Why: "the server answered 401"}))
}

func (c *mcpConsole) get(t *testing.T, b *http.Client, path string) (int, string) {
	t.Helper()
	resp, err := b.Get(c.ts.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (c *mcpConsole) startSignIn(t *testing.T, b *http.Client, csrf string) (int, string) {
	t.Helper()
	resp, err := b.PostForm(c.ts.URL+"/mcp/signin/locked", url.Values{"csrf": {csrf}})
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var continueLink = regexp.MustCompile(`<a class="button" href="([^"]+)"`)

func TestMCPServerIsSignedInThroughThePage(t *testing.T) {
	c := newMCPConsole(t)
	c.need(t)
	b := browser(t)
	csrf := signIn(t, c.ts, b, approverToken)

	code, page := c.get(t, b, "/mcp")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, "<strong>locked</strong>")
	require.Contains(t, page, "needs sign-in: the server answered 401")
	require.Contains(t, page, `action="/mcp/signin/locked"`)

	code, page = c.startSignIn(t, b, csrf)
	require.Equal(t, http.StatusOK, code, page)
	m := continueLink.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	authURL := html.UnescapeString(m[1])
	au, err := url.Parse(authURL)
	require.NoError(t, err)
	require.Contains(t, page, "signs in at <strong>"+au.Host+"</strong>", "the page names the host the person goes to")
	require.Equal(t, "S256", au.Query().Get("code_challenge_method"))
	require.Equal(t, c.ts.URL+"/mcp/callback", au.Query().Get("redirect_uri"))

	// The person signs in; the authorization server sends the browser back.
	back, err := oauthmcp.Follow(context.Background(), authURL, c.ts.URL+"/mcp/callback")
	require.NoError(t, err)
	stranger := browser(t) // the redirect carries no console cookie
	resp, err := stranger.Get(back.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/mcp?signed=locked", resp.Header.Get("Location"))

	gr, err := c.grants.Grant(context.Background(), "locked", c.oauth.URL)
	require.NoError(t, err)
	require.NotNil(t, gr, "the grant is kept for the workers")
	require.Equal(t, "alice", gr.By)
	require.NotEmpty(t, gr.Token.RefreshToken)
	needs, err := c.grants.Needs(context.Background())
	require.NoError(t, err)
	require.Empty(t, needs)
	_, page = c.get(t, b, "/mcp?signed=locked")
	require.Contains(t, page, "locked is signed in")

	for where, text := range map[string]string{"the console's log": c.log.String(), "Redis": c.hashes.Raw(), "the page": page} {
		require.NotContains(t, text, gr.Token.AccessToken, "the access token is not in %s", where)
		require.NotContains(t, text, gr.Token.RefreshToken, "the refresh token is not in %s", where)
	}

	// The redirect is used once.
	resp, err = stranger.Get(back.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestMCPSignInRedirectIsTheConsolesOwnURL: the redirect_uri that the
// authorization server sends the code to is built from the console's own
// URL (CONSOLE_URL), never from the request's Host header, which whoever
// sends the request chooses.
func TestMCPSignInRedirectIsTheConsolesOwnURL(t *testing.T) {
	for _, base := range []string{"", "https://console.example/", "https://console.example/tools"} {
		c := newMCPConsoleAt(t, base)
		c.need(t)
		au := c.startSignInWithHost(t, "evil.example")
		want := strings.TrimSuffix(base, "/") + "/mcp/callback"
		if base == "" {
			want = c.ts.URL + "/mcp/callback"
		}
		require.Equal(t, want, au.Query().Get("redirect_uri"), "a forged Host does not reach the redirect_uri")
	}
}

// startSignInWithHost starts the sign-in as an approver whose request
// names host in its Host header, and returns the authorization URL.
func (c *mcpConsole) startSignInWithHost(t *testing.T, host string) *url.URL {
	t.Helper()
	b := browser(t)
	csrf := signIn(t, c.ts, b, approverToken)
	req, err := http.NewRequest("POST", c.ts.URL+"/mcp/signin/locked", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Host = host
	for _, ck := range b.Jar.Cookies(req.URL) { // the jar keeps them for the real host
		req.AddCookie(ck)
	}
	resp, err := (&http.Client{CheckRedirect: b.CheckRedirect}).Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", resp.Header.Get("Location"), string(body))
	m := continueLink.FindStringSubmatch(string(body))
	require.NotNil(t, m, string(body))
	au, err := url.Parse(html.UnescapeString(m[1]))
	require.NoError(t, err)
	return au
}

// TestMCPSignInIdentifiesTheConsoleByItsClientMetadataDocument (E3, issue
// 48): where the authorization server advertises
// client_id_metadata_document_supported, the console's client_id is the
// client ID metadata document it serves under its own URL (CONSOLE_URL),
// and it registers nothing; the document, served to anyone, and the
// redirect_uri are of CONSOLE_URL, never of the request's Host header.
func TestMCPSignInIdentifiesTheConsoleByItsClientMetadataDocument(t *testing.T) {
	const base = "https://console.example/tools"
	c := newMCPConsoleAt(t, base)
	c.oauth.ClientIDMetadata.Store(true)
	c.need(t)
	au := c.startSignInWithHost(t, "evil.example")
	require.Equal(t, base+"/client-metadata.json", au.Query().Get("client_id"))
	require.Equal(t, base+"/mcp/callback", au.Query().Get("redirect_uri"))
	require.Equal(t, int64(0), c.oauth.Registered.Load(), "nothing is registered")

	// The document, to anyone (no cookie), whatever the Host header says.
	req, err := http.NewRequest("GET", c.ts.URL+"/client-metadata.json", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var doc mcp.ClientMetadata
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Equal(t, mcp.ClientMetadata{ClientID: base + "/client-metadata.json", ClientName: "toolround console",
		RedirectURIs: []string{base + "/mcp/callback"}, GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none", ApplicationType: "web"}, doc)

	// The authorization server sends the browser to CONSOLE_URL, which
	// reaches this console; the grant's client is the document.
	back, err := oauthmcp.Follow(context.Background(), au.String(), base+"/mcp/callback")
	require.NoError(t, err)
	resp, err = browser(t).Get(c.ts.URL + "/mcp/callback?" + back.RawQuery)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	gr, err := c.grants.Grant(context.Background(), "locked", c.oauth.URL)
	require.NoError(t, err)
	require.NotNil(t, gr)
	require.Equal(t, base+"/client-metadata.json", gr.ClientID)
	require.Equal(t, []string{"authorize " + gr.ClientID, "token " + gr.ClientID}, c.oauth.Clients())
}

// TestMCPConsoleWithoutHTTPSRegisters: a client_id URL is https; a console
// whose own URL is not serves no document and registers dynamically.
func TestMCPConsoleWithoutHTTPSRegisters(t *testing.T) {
	c := newMCPConsole(t)
	c.oauth.ClientIDMetadata.Store(true)
	c.need(t)
	code, _ := c.get(t, http.DefaultClient, "/client-metadata.json")
	require.Equal(t, http.StatusNotFound, code)
	au := c.startSignInWithHost(t, c.ts.Listener.Addr().String())
	require.Equal(t, "dyn-client", au.Query().Get("client_id"))
	require.Equal(t, int64(1), c.oauth.Registered.Load())
}

func TestMCPSignInIsForApproversOfEverySession(t *testing.T) {
	c := newMCPConsole(t)
	c.need(t)
	for name, token := range map[string]string{"agent": agentToken, "scoped approver": scopedApprover} {
		b := browser(t)
		csrf := signIn(t, c.ts, b, token)
		_, page := c.get(t, b, "/mcp")
		require.NotContains(t, page, `action="/mcp/signin/locked"`, name)
		code, _ := c.startSignIn(t, b, csrf)
		require.Equal(t, http.StatusForbidden, code, name)
	}
	b := browser(t)
	signIn(t, c.ts, b, approverToken)
	code, _ := c.startSignIn(t, b, "not-the-csrf-token")
	require.Equal(t, http.StatusForbidden, code, "a cross-site form is refused")
	require.Equal(t, int64(0), c.oauth.Authorized.Load()+c.oauth.Registered.Load(), "nothing reached the authorization server")
}

func TestMCPCallbackTakesOnlyItsOwnState(t *testing.T) {
	c := newMCPConsole(t)
	c.need(t)
	b := browser(t)
	code, _ := c.get(t, b, "/mcp/callback?code=stolen&state=made-up")
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = c.get(t, b, "/mcp/callback?code=stolen")
	require.Equal(t, http.StatusBadRequest, code)

	// A refused sign-in keeps nothing and leaves the need listed.
	csrf := signIn(t, c.ts, b, approverToken)
	_, page := c.startSignIn(t, b, csrf)
	m := continueLink.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	au, err := url.Parse(html.UnescapeString(m[1]))
	require.NoError(t, err)
	code, page = c.get(t, browser(t), "/mcp/callback?error=access_denied&state="+url.QueryEscape(au.Query().Get("state")))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, page, "access_denied")
	require.Eventually(t, func() bool { return strings.Contains(c.log.String(), "MCP sign-in failed") }, 5*time.Second, 10*time.Millisecond,
		"the refused sign-in's client ends at once, not at the end of its window")
	gr, err := c.grants.Grant(context.Background(), "locked", c.oauth.URL)
	require.NoError(t, err)
	require.Nil(t, gr)
	n, ok, err := c.grants.Need(context.Background(), "locked")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "locked", n.Server)
}

func TestMCPPageWithoutGrants(t *testing.T) {
	ts, _ := newTestServer(t)
	b := browser(t)
	csrf := signIn(t, ts, b, approverToken)
	resp, err := b.Get(ts.URL + "/mcp")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.Contains(string(body), "cannot see the workers"), string(body))
	resp, err = b.PostForm(ts.URL+"/mcp/signin/locked", url.Values{"csrf": {csrf}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotImplemented, resp.StatusCode)
}

// TestMCPSignInStartedOnOneConsoleFinishesOnAnother (O3): consoles behind
// one address share the started sign-ins (sealed with the session key)
// and the workers' grants: the authorization server's redirect finishes
// on whichever console it reaches, once.
func TestMCPSignInStartedOnOneConsoleFinishesOnAnother(t *testing.T) {
	first := newMCPConsole(t)
	second := newMCPConsoleBeside(t, "", first)
	first.need(t)
	b := browser(t)
	csrf := signIn(t, first.ts, b, approverToken)
	code, page := first.startSignIn(t, b, csrf)
	require.Equal(t, http.StatusOK, code, page)
	m := continueLink.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	authURL := html.UnescapeString(m[1])
	au, err := url.Parse(authURL)
	require.NoError(t, err)
	state := au.Query().Get("state")

	// What is kept names neither the state nor the client in clear.
	kept := first.started.(*recordedSignIns).raw()
	require.NotEmpty(t, kept)
	for _, clear := range []string{state, "dyn-client", first.oauth.URL, "alice"} {
		require.NotContains(t, kept, clear, "the started sign-in is sealed")
	}

	back, err := oauthmcp.Follow(context.Background(), authURL, first.ts.URL+"/mcp/callback")
	require.NoError(t, err)
	other := *back
	other.Host = second.ts.Listener.Addr().String()
	resp, err := browser(t).Get(other.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/mcp?signed=locked", resp.Header.Get("Location"))
	require.Contains(t, second.log.String(), "MCP server signed in")

	gr, err := first.grants.Grant(context.Background(), "locked", first.oauth.URL)
	require.NoError(t, err)
	require.NotNil(t, gr, "the grant is kept for the workers")
	require.Equal(t, "alice", gr.By, "who started it, on the first console")
	require.Equal(t, int64(1), first.oauth.Tokens.Load())

	// Taken once: neither console takes the redirect again.
	for _, c := range []*mcpConsole{first, second} {
		again := *back
		again.Host = c.ts.Listener.Addr().String()
		resp, err = browser(t).Get(again.String())
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
	require.Equal(t, int64(1), first.oauth.Tokens.Load(), "the code was exchanged once")
}

// TestMCPSignInOpensOnlyWithTheSessionKey: a console with another session
// key cannot finish a sign-in another started, even from shared storage.
func TestMCPSignInOpensOnlyWithTheSessionKey(t *testing.T) {
	first := newMCPConsole(t)
	shared := *first
	otherKey, err := secrets.GenerateKey()
	require.NoError(t, err)
	shared.sessionKey = otherKey
	stranger := newMCPConsoleBeside(t, "", &shared)
	first.need(t)
	b := browser(t)
	code, page := first.startSignIn(t, b, signIn(t, first.ts, b, approverToken))
	require.Equal(t, http.StatusOK, code, page)
	m := continueLink.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	back, err := oauthmcp.Follow(context.Background(), html.UnescapeString(m[1]), first.ts.URL+"/mcp/callback")
	require.NoError(t, err)
	back.Host = stranger.ts.Listener.Addr().String()
	code, _ = stranger.get(t, browser(t), back.RequestURI())
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, int64(0), first.oauth.Tokens.Load(), "no code was exchanged")
}
