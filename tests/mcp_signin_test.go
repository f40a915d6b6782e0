package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/testtools/oauthmcp"
	"github.com/toolround/toolround/round"
)

// TestMCPServerBehindOAuthIsSignedInThroughTheConsole (E3): a worker whose
// MCP server answers 401 lists it as needing a sign-in, with the console's
// link; a person signs it in on the console's page (the authorization
// server's page is passed through as a browser would); the worker then
// connects it without a restart and its tool runs in a round. A new
// worker uses the sealed grant with no second sign-in. The token is in
// neither log, nor the round's history, nor Redis in clear.
func TestMCPServerBehindOAuthIsSignedInThroughTheConsole(t *testing.T) {
	o, name, mcpConfig, rdb := newOAuthEcho(t)
	ctx := context.Background()
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+testKey)
	c := e.startConsole()
	w := e.startWorkerBin(workerBin, "MCP_CONFIG="+mcpConfig, "CONSOLE_URL="+c.url)

	asked := e.starter(ctx, "", "tools", "--provider", "claude-code", "--worker")
	require.Equal(t, 0, asked.code, asked.stderr)
	require.Contains(t, asked.stderr, fmt.Sprintf("MCP server %q needs sign-in: a person signs it in at %s/mcp", name, c.url))
	require.Contains(t, asked.stdout, `"needs_sign_in": true`)
	require.NotContains(t, asked.stdout, "mcp_"+name+"_echo")

	// The person: signs in to the console, opens the MCP page, starts the
	// sign-in, follows the link to the authorization server, comes back.
	person := newPagePerson(t)
	list := person.signIn(c, c.approver, "/mcp")
	require.Contains(t, list, "needs sign-in")
	back, err := oauthmcp.Follow(ctx, person.startMCPSignIn(c, list, name), c.url+"/mcp/callback")
	require.NoError(t, err)
	done := person.get(back.String())
	require.Contains(t, done, name+" is signed in")
	require.Equal(t, int64(1), o.Authorized.Load())

	// The worker connects the server by itself (it checks every 5 s).
	waitConnectedAfterSignIn(t, w)
	in, got := e.callLockedEcho(1, name, "o1", "through oauth")
	require.Equal(t, round.StatusOK, got.Status, got.Content)
	require.Equal(t, "echo: through oauth", got.Content)
	first := in.WorkflowID()

	// A restarted worker uses the sealed grant: no second sign-in.
	w.kill(t)
	w2 := e.startWorkerBin(workerBin, "MCP_CONFIG="+mcpConfig, "CONSOLE_URL="+c.url)
	require.Contains(t, w2.logs.String(), "mcp: server connected")
	in, got = e.callLockedEcho(2, name, "o2", "again")
	require.Equal(t, round.StatusOK, got.Status, got.Content)
	require.Equal(t, int64(1), o.Authorized.Load(), "one sign-in for both workers")

	// The token appears nowhere it should not.
	tokens := []string{}
	for i := int64(1); i <= o.Tokens.Load(); i++ {
		tokens = append(tokens, o.AccessToken(i), o.RefreshToken(i))
	}
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	var history strings.Builder
	for _, wid := range []string{first, in.WorkflowID()} {
		it := tc.GetWorkflowHistory(ctx, wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			history.WriteString(ev.String())
		}
	}
	require.Contains(t, history.String(), "echo: ", "the history was read")
	stored, err := rdb.HGet(ctx, "toolround:mcp:grants", name).Result()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(stored, "sealed:v1:"), "the grant is sealed")
	for where, text := range map[string]string{"the first worker's log": w.logs.String(), "the second worker's log": w2.logs.String(),
		"the console's log": c.logs.String(), "the rounds' history": history.String(), "Redis": stored} {
		for _, tok := range tokens {
			// In any form: raw (token=..., JSON, a header), URL-encoded,
			// base64 (standard and URL), hex.
			for _, form := range []string{tok, url.QueryEscape(tok), base64.StdEncoding.EncodeToString([]byte(tok)),
				base64.RawURLEncoding.EncodeToString([]byte(tok)), hex.EncodeToString([]byte(tok))} {
				require.NotContains(t, text, form, "%s holds a token", where)
			}
		}
	}
}

// TestMCPSignInStartedOnOneConsoleFinishesOnAnotherO3 (O3, E3): two
// consoles behind one address (CONSOLE_URL, one tokens file,
// CONSOLE_SESSION_KEY and link key). In Chromium a person starts an MCP
// server's sign-in on the first console; the authorization server sends
// the browser back to the shared address, which hands the redirect to the
// second console. The second finishes the sign-in, the grant is kept, the
// worker connects the server and its tool runs in a round; the redirect,
// replayed to the first console, is refused: a started sign-in is used
// once, whichever console takes it.
func TestMCPSignInStartedOnOneConsoleFinishesOnAnotherO3(t *testing.T) {
	o, name, mcpConfig, rdb := newOAuthEcho(t)
	ctx := context.Background()

	// The address both consoles serve behind; it sends every request to
	// the second console, as a balancer may.
	var second atomic.Pointer[url.URL]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httputil.NewSingleHostReverseProxy(second.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	linkKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))
	sessionKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+testKey, "NOTIFY_LINK_KEY="+linkKey)
	cs := e.startConsoles(2, "CONSOLE_SESSION_KEY="+sessionKey, "CONSOLE_REPLICAS=2", "CONSOLE_URL="+front.URL)
	a, b := cs[0], cs[1]
	bu, err := url.Parse(b.url)
	require.NoError(t, err)
	second.Store(bu)
	w := e.startWorkerBin(workerBin, "MCP_CONFIG="+mcpConfig, "CONSOLE_URL="+front.URL)
	require.Eventually(t, func() bool { return rdb.HExists(ctx, "toolround:mcp:signins", name).Val() }, 30*time.Second, 50*time.Millisecond,
		"the worker lists the server as needing a sign-in")

	// The person signs in on the first console and starts the sign-in there.
	bctx := browserCtx(t)
	signInButton := `form[action="/mcp/signin/` + name + `"] button`
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(a.url+"/"),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), a.approver+kb.Enter),
		chromedp.WaitVisible(css("#inbox-summary")),
		chromedp.Navigate(a.url+"/mcp"),
		chromedp.WaitVisible(css(signInButton)),
		chromedp.Click(css(signInButton)),
		chromedp.WaitVisible(css("a.button")),
	))
	authURL := eval[string](t, bctx, `document.querySelector("a.button").href`)
	au, err := url.Parse(authURL)
	require.NoError(t, err)
	require.Equal(t, front.URL+"/mcp/callback", au.Query().Get("redirect_uri"), "the shared address takes the redirect")
	require.Equal(t, int64(0), o.Authorized.Load())

	// The person follows the link; the authorization server signs them in
	// at once and sends the browser to the shared address: the second
	// console.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(authURL)))
	require.Equal(t, "/mcp?signed="+name, eval[string](t, bctx, `location.pathname + location.search`),
		"where the sign-in ended: %s", eval[string](t, bctx, `document.body.innerText`))
	require.Equal(t, name+" is signed in. Its workers connect it within seconds.", text(t, bctx, ".notice"))
	require.Equal(t, int64(1), o.Authorized.Load())
	require.Contains(t, b.logs.String(), "console: MCP server signed in", "the second console finished the sign-in")
	require.NotContains(t, a.logs.String(), "console: MCP server signed in")
	stored, err := rdb.HGet(ctx, "toolround:mcp:grants", name).Result()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(stored, "sealed:v1:"), "the grant is kept, sealed")

	// The redirect, replayed to the first console, finds nothing to finish.
	replay := *au
	replay.RawQuery = url.Values{"code": {"code-1"}, "state": {au.Query().Get("state")}}.Encode()
	resp, err := http.Get(a.url + "/mcp/callback?" + replay.RawQuery)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a started sign-in is taken once")

	// The worker connects the server and its tool runs.
	waitConnectedAfterSignIn(t, w)
	_, got := e.callLockedEcho(1, name, "o1", "two consoles")
	require.Equal(t, round.StatusOK, got.Status, got.Content)
	require.Equal(t, "echo: two consoles", got.Content)
	for where, text := range map[string]string{"the first console's log": a.logs.String(), "the second console's log": b.logs.String()} {
		require.NotContains(t, text, o.AccessToken(1), "%s holds the token", where)
		require.NotContains(t, text, o.RefreshToken(1), "%s holds the refresh token", where)
	}
}
