package tests

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/testtools/oauthmcp"
	"github.com/toolround/toolround/round"
)

var (
	csrfInPage   = regexp.MustCompile(`name="csrf-token" content="([0-9a-f]+)"`)
	continueHref = regexp.MustCompile(`<a class="button" href="([^"]+)"`)
)

// pagePerson is a person on the console's HTML pages without a browser:
// a client that keeps the session's cookie, whose every page must answer
// 200.
type pagePerson struct {
	t  *testing.T
	hc *http.Client
}

func newPagePerson(t *testing.T) *pagePerson {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &pagePerson{t: t, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// body is the page of an answer, which must be 200.
func (p *pagePerson) body(resp *http.Response, err error) string {
	p.t.Helper()
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	require.Equal(p.t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

func (p *pagePerson) get(u string) string {
	p.t.Helper()
	return p.body(p.hc.Get(u))
}

func (p *pagePerson) post(u string, form url.Values) string {
	p.t.Helper()
	return p.body(p.hc.PostForm(u, form))
}

// signIn signs in to console c with token and returns the page at path,
// where the sign-in leads.
func (p *pagePerson) signIn(c *consoleProc, token, path string) string {
	p.t.Helper()
	return p.post(c.url+"/login", url.Values{"token": {token}, "return": {path}})
}

// startMCPSignIn starts the sign-in of MCP server name from list, the
// console's MCP page, which must list it; it returns the link to the
// authorization server that the console's next page gives.
func (p *pagePerson) startMCPSignIn(c *consoleProc, list, name string) string {
	p.t.Helper()
	require.Contains(p.t, list, "<strong>"+name+"</strong>")
	csrf := csrfInPage.FindStringSubmatch(list)
	require.NotNil(p.t, csrf, list)
	next := p.post(c.url+"/mcp/signin/"+name, url.Values{"csrf": {csrf[1]}})
	m := continueHref.FindStringSubmatch(next)
	require.NotNil(p.t, m, next)
	return html.UnescapeString(m[1])
}

// newOAuthEcho is lockedEchoServer behind an OAuth authorization server o,
// as the MCP server name, new to Redis, of the MCP_CONFIG file mcpConfig;
// rdb is mcpSignInRedis's.
func newOAuthEcho(t *testing.T) (o *oauthmcp.Server, name, mcpConfig string, rdb *redis.Client) {
	t.Helper()
	o = oauthmcp.New(t, lockedEchoServer())
	name = fmt.Sprintf("oauth%d", time.Now().UnixNano()%1e9)
	rdb = mcpSignInRedis(t, name)
	mcpConfig = writeMCPConfig(t, t.TempDir(), map[string]any{name: map[string]any{"url": o.URL}})
	return o, name, mcpConfig, rdb
}

// lockedEchoServer is an MCP server with one tool, echo, which gives the
// text back.
func lockedEchoServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "locked", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo the text back."}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	return srv
}

// waitConnectedAfterSignIn waits until worker w has connected an MCP
// server that was signed in (it checks every 5 s).
func waitConnectedAfterSignIn(t *testing.T, w *worker) {
	t.Helper()
	require.Eventually(t, func() bool {
		return strings.Contains(w.logs.String(), "server connected after a sign-in")
	}, 30*time.Second, 100*time.Millisecond, "the worker did not connect the signed-in server")
}

// callLockedEcho runs round n with one call, id, approved ahead, of the
// echo tool (lockedEchoServer's) of MCP server name with text; it returns
// the round's input and the call's result.
func (e *env) callLockedEcho(n int, name, id, text string) (round.Input, round.CallResult) {
	e.t.Helper()
	tool := "mcp_" + name + "_echo"
	in := e.input(n, "claude-code", &round.RunState{Fetched: []string{tool}}, call(id, tool, map[string]any{"text": text}))
	in.AutoApprove = true
	return in, byID(e.round(in))[id]
}

// mcpSignInRedis is a client of the real Redis; the grant and the started
// sign-in of MCP server name are removed when the test ends.
func mcpSignInRedis(t *testing.T, name string) *redis.Client {
	t.Helper()
	rdb := testenv.Redis(t)
	t.Cleanup(func() {
		rdb.HDel(context.Background(), "toolround:mcp:grants", name)
		rdb.HDel(context.Background(), "toolround:mcp:signins", name)
	})
	return rdb
}
