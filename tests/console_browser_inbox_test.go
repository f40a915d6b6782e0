package tests

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

var signInLine = regexp.MustCompile(`console sign-in link (http://\S+/signin#[0-9a-f]+) \(signs in once as "alice"`)

// TestConsoleBrowserSignInLink opens the one-time sign-in link a console
// prints (CONSOLE_SIGNIN) in Chromium: the page takes the code out of the
// address bar, trades it for the session cookie and shows the inbox as
// alice; the same link opened again, in a browser signed out, signs no one
// in and says why.
func TestConsoleBrowserSignInLink(t *testing.T) {
	e := newEnv(t)
	ctx := browserCtx(t)
	c := e.startConsoles(1, "CONSOLE_SIGNIN=alice")[0]
	var link string
	require.Eventually(t, func() bool {
		m := signInLine.FindStringSubmatch(c.logs.String())
		if m != nil {
			link = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond, "the console prints a sign-in link:\n%s", c.logs.String())

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(css("#inbox-summary")),
	))
	require.Equal(t, "Inbox", text(t, ctx, "main h1"))
	require.Contains(t, text(t, ctx, ".who"), "alice")
	require.Equal(t, c.url+"/", eval[string](t, ctx, `location.href`), "no code in the address bar")

	// Signed out, the same link signs no one in.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`form[action="/logout"] button`)),
		chromedp.WaitVisible(css("#token")),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link),
		chromedp.WaitVisible(css("p.error")),
	))
	require.Contains(t, text(t, ctx, "p.error"), "used already")
	r := c.call(t, "GET", "/api/v1/inbox", "", nil)
	require.Equal(t, http.StatusUnauthorized, r.code)
}

// TestConsoleBrowserInboxByRound: the inbox groups its cards by round, the
// newest round first and each round's calls in call order, and on a
// laptop's screen (1366x768) three cards show whole without scrolling.
// SCREENSHOT_DIR=DIR writes what it shows there as inbox-1366x768.png.
func TestConsoleBrowserInboxByRound(t *testing.T) {
	e, ctx, c := newBrowserEnv(t)

	first := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "notes.txt", "old_text": "one\ntwo\n", "new_text": "one\n2\nand a new line\n"}),
		call("r1", "run_command", map[string]any{"command": "python3 -m pytest -q tests/"}))
	second := e.input(2, "claude-code", &round.RunState{Fetched: allTools},
		call("e2", "edit_file", map[string]any{"path": "todo.txt", "new_text": "- [ ] write the console\n- [ ] test it\n"}))
	r := c.call(t, "POST", "/api/v1/rounds", c.agent, first)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	c.pendingOf(t, first.WorkflowID(), "r1")
	r = c.call(t, "POST", "/api/v1/rounds", c.agent, second)
	require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	c.pendingOf(t, second.WorkflowID(), "e2")
	c.waitInbox(t, e.session, 3)
	wf1, wf2 := first.WorkflowID(), second.WorkflowID()

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1366, 768),
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), c.approver+"\r"),
		chromedp.WaitVisible(css(cardSel(wf1, "e1"))),
	))
	groups := eval[[]string](t, ctx, `[...document.querySelectorAll("section.round-group")].map(s => s.dataset.workflow)`)
	require.Equal(t, []string{wf2, wf1}, groups, "the newest round first")
	require.Equal(t, []string{wf1 + "|e1", wf1 + "|r1"},
		eval[[]string](t, ctx, `[...document.querySelectorAll('section.round-group[data-workflow=`+jsString(wf1)+`] .card')].map(c => c.dataset.card)`),
		"a round's calls in call order")
	require.Contains(t, text(t, ctx, `section.round-group[data-workflow="`+wf1+`"] h2`), "Round 1 of run run-1")
	require.Contains(t, text(t, ctx, `section.round-group[data-workflow="`+wf1+`"] h2`), "2 calls wait")
	require.Equal(t, "3 calls wait for a person, newest first.", text(t, ctx, "#inbox-count"))

	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "inbox-1366x768.png"), png, 0o644))
	}

	// Three cards, whole, on the screen, and nothing to scroll sideways.
	bottom := eval[float64](t, ctx, `Math.max(...[...document.querySelectorAll(".card")].map(c => c.getBoundingClientRect().bottom))`)
	height := eval[float64](t, ctx, `window.innerHeight`)
	t.Logf("the third card ends at %.0f px of %.0f", bottom, height)
	require.LessOrEqual(t, bottom, height, "the third card ends within the 768px screen")
	require.True(t, eval[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`))
	// What a person decides on stays in sight: the diff, the command, why
	// it asks, and the approve and deny buttons of each card.
	require.Contains(t, text(t, ctx, cardSel(wf1, "e1")+" .diff"), "+ and a new line")
	require.Contains(t, text(t, ctx, cardSel(wf1, "r1")+" pre.json"), "python3 -m pytest")
	require.NotEmpty(t, text(t, ctx, cardSel(wf1, "r1")+" .reasons"))
	visible := eval[int](t, ctx, `[...document.querySelectorAll('.card button[value="approve"], .card button[value="deny"]')].filter(b => b.getBoundingClientRect().height > 0 && b.getBoundingClientRect().bottom <= innerHeight).length`)
	require.Equal(t, 6, visible)

}

// TestConsolePrintsASignInLinkForItsGeneratedToken: a console without
// CONSOLE_TOKENS (as `make run` starts it) prints its approver token and a
// one-time link that signs in as it: the link's code, posted as the link's
// page posts it, answers with the session cookie once.
func TestConsolePrintsASignInLinkForItsGeneratedToken(t *testing.T) {
	e := newEnv(t)
	c := &consoleProc{logs: &syncBuffer{}}
	e.runConsole(c, nil)
	var link string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`console sign-in link (http://\S+/signin#([0-9a-f]{64})) \(signs in once as "console"`).FindStringSubmatch(c.logs.String())
		if m != nil {
			link = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond, c.logs.String())
	require.True(t, strings.HasPrefix(link, c.url+"/signin#"), link)
	_, code, _ := strings.Cut(link, "#")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func() *http.Response {
		resp, err := noRedirect.PostForm(c.url+"/signin", url.Values{"code": {code}})
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	resp := post()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.NotEmpty(t, resp.Cookies())
	require.Equal(t, http.StatusUnauthorized, post().StatusCode, "a link signs in once")
}
