package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// chromium finds a Chromium or Chrome binary: CHROMIUM, else the usual
// names (Debian's package is `chromium`).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Unavailable(t, "no chromium (apt-get install -y chromium; scripts/test.sh does it)")
	return ""
}

// browserCtx starts headless Chromium for the test.
func browserCtx(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.WindowSize(1100, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first call starts the browser; it lives as long as ctx, so the
	// time limit goes on a derived context.
	require.NoError(t, chromedp.Do(ctx), "start chromium")
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// newBrowserEnv is an env with Chromium, a worker and a console, whose
// workdir holds notes.txt for the tests' edits.
func newBrowserEnv(t *testing.T) (*env, context.Context, *consoleProc) {
	t.Helper()
	e := newEnv(t)
	ctx := browserCtx(t)
	e.startWorker()
	c := e.startConsole()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("# Notes\none\ntwo\nthree\n"), 0o644))
	return e, ctx, c
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// text is the visible text of the first element that matches sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
	require.NoError(t, err, sel)
	return s
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// poll waits until the JavaScript expression is true.
func poll(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, expr)
}

func jsString(s string) string { return fmt.Sprintf("%q", s) }

// cardSel selects the page's card of a waiting call.
func cardSel(wfID, callID string) string {
	return fmt.Sprintf(`.card[data-card="%s|%s"]`, wfID, callID)
}

// TestConsoleBrowser uses the page in real headless Chromium as a person
// does, with the keyboard: sign in, see a waiting edit_file with its diff
// in the inbox, approve it on the session page and see the round finish
// there without a reload; deny another with a reason; without a token
// nothing is served. UPDATE_SCREENSHOTS=1 writes docs/console-*.png.
func TestConsoleBrowser(t *testing.T) {
	e, ctx, c := newBrowserEnv(t)

	// Without a token: the API refuses, the page asks to sign in.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(c.url+"/api/v1/inbox")))
	require.Contains(t, text(t, ctx, "body"), "unauthorized")
	resp, err := http.Get(c.url + "/api/v1/inbox")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	approveIn := editRound(e, 1, "e1", "notes.txt", "one\ntwo\n", "one\n2\nand a new line\n")
	denyIn := editRound(e, 2, "e2", "todo.txt", "", "- [ ] write the console\n- [ ] test it\n")
	for _, in := range []round.Input{approveIn, denyIn} {
		r := c.call(t, "POST", "/api/v1/rounds", c.agent, in)
		require.Equal(t, http.StatusAccepted, r.code, string(r.body))
		c.pendingOf(t, in.WorkflowID(), in.Assistant.ToolCalls[0].ID)
	}
	wfA, wfB := approveIn.WorkflowID(), denyIn.WorkflowID()
	c.waitInbox(t, e.session, 2)

	// Sign in with the keyboard.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), c.approver+kb.Enter),
		chromedp.WaitVisible(css("#inbox-summary")),
	))
	require.Equal(t, "Inbox", text(t, ctx, "main h1"))

	// The inbox: newest first, with how long each waited, its deadline and
	// the edit_file diff.
	a := cardSel(wfA, "e1")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(a))))
	diff := text(t, ctx, a+" .diff")
	require.Contains(t, diff, "+ 2")
	require.Contains(t, diff, "+ and a new line")
	require.Contains(t, text(t, ctx, a+" .diff del"), "- two")
	require.Contains(t, text(t, ctx, a+" .waited"), "waiting ")
	require.Contains(t, text(t, ctx, a+" .deadline"), "deadline ")
	order := eval[[]string](t, ctx, `[...document.querySelectorAll(".card")].map(c => c.dataset.card)`)
	require.Equal(t, []string{wfB + "|e2", wfA + "|e1"}, order, "newest first")

	// On a phone-sized screen nothing needs sideways scrolling.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Reload(),
		chromedp.WaitVisible(css(a)),
	))
	require.True(t, eval[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`), "the inbox fits a 390px wide screen")
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900), chromedp.Reload(), chromedp.WaitVisible(css(a))))

	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		screenshots(t, ctx, c, wfA)
	}

	// The session page: connect to the live stream, approve with the
	// keyboard, and see the round finish without a reload.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/sessions/"+e.session),
		chromedp.WaitVisible(css(`#live[data-live="1"]`)),
	))
	eval[bool](t, ctx, `window.__noReload = true`)
	// The decision's answer reaches the page only after the stream has
	// said the call finished, as it does on a loaded machine: the page
	// still shows the later state, "ok", not "approved by".
	cell := `document.querySelector('[data-status-for=` + jsString(wfA+"|e1") + `]')`
	eval[bool](t, ctx, `(() => { const f = window.fetch; window.fetch = (...a) => f(...a).then(r => new Promise(res => {
		const t = setInterval(() => { if (`+cell+`.textContent === "ok") { clearInterval(t); window.__answered = true; res(r); } }, 20);
	})); window.__card = document.querySelector(`+jsString(a)+`); return true; })()`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Focus(css(a+` button[value="approve"]`)),
		chromedp.KeyEvent(kb.Enter),
	))
	poll(t, ctx, `document.querySelector('[data-round-status=`+jsString(wfA)+`]').textContent === "completed"`)
	// The card has gone with the finished round; the answer's handler
	// still writes to it, last of all.
	poll(t, ctx, `window.__answered === true && window.__card.querySelector(".status").textContent.startsWith("Approved")`)
	require.Equal(t, "ok", eval[string](t, ctx, cell+`.textContent`), "a late answer overwrote the finished call's state")
	require.True(t, eval[bool](t, ctx, `window.__noReload === true`), "the page was not reloaded")
	require.Contains(t, text(t, ctx, "#events"), "round_finished")
	res := c.resultOf(t, wfA)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	got, err := os.ReadFile(filepath.Join(e.workdir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "# Notes\none\n2\nand a new line\nthree\n", string(got))

	// Edited arguments are checked before anything is sent.
	b := cardSel(wfB, "e2")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css(b)),
		chromedp.Click(css(b+" details.more > summary")),
		chromedp.Click(css(b+" details.edit summary")),
		chromedp.SetValue(css(b+` textarea[name="args"]`), `{"path": "todo.txt",`),
		chromedp.Click(css(b+` button[value="approve_edited"]`)),
	))
	poll(t, ctx, `document.querySelector(`+jsString(b+` textarea[name="args"]`)+`).getAttribute("aria-invalid") === "true"`)
	require.Contains(t, text(t, ctx, b+" .hint.bad"), "Not valid JSON")
	require.True(t, eval[bool](t, ctx, `document.activeElement.name === "args"`), "the editor has the focus")
	c.pendingOf(t, wfB, "e2")

	// A pattern over a program that runs the workspace's code: the card
	// says what remembering it means before it is remembered (T11).
	notice := jsString(b + " p.workspace-code")
	require.True(t, eval[bool](t, ctx, `document.querySelector(`+notice+`).hidden`), "edit_file's card shows no notice")
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(css(b+` input[name="pattern"]`), "python3 *")))
	poll(t, ctx, `!document.querySelector(`+notice+`).hidden`)
	require.Contains(t, text(t, ctx, b+" p.workspace-code"), "python3 runs the workspace's code")
	require.Contains(t, text(t, ctx, b+" p.workspace-code"), "its scope is always write")
	eval[bool](t, ctx, `(() => { const i = document.querySelector(`+jsString(b+` input[name="pattern"]`)+`); i.value = "git *"; i.dispatchEvent(new Event("input")); return true; })()`)
	poll(t, ctx, `document.querySelector(`+notice+`).hidden`)
	eval[bool](t, ctx, `(() => { const i = document.querySelector(`+jsString(b+` input[name="pattern"]`)+`); i.value = ""; i.dispatchEvent(new Event("input")); return true; })()`)

	// Deny it with a reason, from the inbox.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(css(b+` input[name="reason"]`), "not in this sprint"),
		chromedp.Click(css(b+` button[value="deny"]`)),
	))
	poll(t, ctx, `document.querySelector(`+jsString(b+" .status")+`).textContent.startsWith("Denied")`)
	require.Equal(t, "Denied by alice.", text(t, ctx, b+" .status"))
	res = c.resultOf(t, wfB)
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	require.Contains(t, res.Results[0].Content, "not in this sprint")
	_, err = os.Stat(filepath.Join(e.workdir, "todo.txt"))
	require.True(t, os.IsNotExist(err))
}

// screenshots writes the pictures of docs/console.md (the README shows the inbox) of the inbox and of a call.
func screenshots(t *testing.T, ctx context.Context, c *consoleProc, wfID string) {
	t.Helper()
	// The window grows to the page's height, so the picture is the whole page.
	whole := func() []byte {
		h := eval[int64](t, ctx, `document.documentElement.scrollHeight`)
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1100, h)))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900)))
		return png
	}
	inbox := whole()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/calls/"+wfID+"?call=e1"),
		chromedp.WaitVisible(css(".card")),
	))
	eval[bool](t, ctx, `document.querySelector(".card details.more").open = document.querySelector(".card details.edit").open = true`)
	callPage := whole()
	require.True(t, strings.HasPrefix(string(inbox[1:4]), "PNG"))
	require.NoError(t, os.WriteFile("../docs/console-inbox.png", inbox, 0o644))
	require.NoError(t, os.WriteFile("../docs/console-call.png", callPage, 0o644))
}

// TestConsoleBrowserTellsTheTruthAfterADecision: after a decision the page
// says what became of the call and the counts follow; every card names its
// round; the session page replays the events from before it was opened,
// shows a call approved while another still waits as approved (not just
// "planned"), marks a call decided elsewhere, and drops the cards of a
// round that finished.
func TestConsoleBrowserTellsTheTruthAfterADecision(t *testing.T) {
	e := newEnv(t)
	ctx := browserCtx(t)
	e.startWorker()
	c := e.startConsole()

	first := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "a.txt", "new_text": "a\n"}),
		call("e2", "edit_file", map[string]any{"path": "b.txt", "new_text": "b\n"}))
	second := e.input(2, "claude-code", &round.RunState{Fetched: allTools},
		call("f1", "edit_file", map[string]any{"path": "c.txt", "new_text": "c\n"}),
		call("f2", "edit_file", map[string]any{"path": "d.txt", "new_text": "d\n"}))
	for _, in := range []round.Input{first, second} {
		r := c.call(t, "POST", "/api/v1/rounds", c.agent, in)
		require.Equal(t, http.StatusAccepted, r.code, string(r.body))
	}
	wf1, wf2 := first.WorkflowID(), second.WorkflowID()
	c.pendingOf(t, wf1, "e2")
	c.pendingOf(t, wf2, "f2")
	c.waitInbox(t, e.session, 4)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), c.approver+kb.Enter),
		chromedp.WaitVisible(css(cardSel(wf1, "e1"))),
	))
	require.Equal(t, "4 calls wait for a person, newest first.", text(t, ctx, "#inbox-count"))
	require.Equal(t, "round 1 of run run-1", text(t, ctx, cardSel(wf1, "e1")+" .round-of"))
	require.Equal(t, "round 2 of run run-1", text(t, ctx, cardSel(wf2, "f1")+" .round-of"))

	// Approve e1 from the inbox: the card says what happens next and the
	// count drops without a reload.
	a := cardSel(wf1, "e1")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(a+` button[value="approve"]`))))
	poll(t, ctx, `document.querySelector(`+jsString(a+" .status")+`).textContent !== ""`)
	require.Equal(t, "Approved by alice, running.", text(t, ctx, a+" .status"))
	require.Equal(t, "3 calls wait for a person, newest first.", text(t, ctx, "#inbox-count"))

	// The session page, opened now: e1 is approved and waits for e2, and
	// the events from before the page was opened are there.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/sessions/"+e.session),
		chromedp.WaitVisible(css(`#live[data-live="1"]`)),
	))
	require.Equal(t, "approved by alice, runs when the round's other calls are decided",
		text(t, ctx, `[data-status-for="`+wf1+`|e1"]`))
	poll(t, ctx, `[...document.querySelectorAll("#events li")].some(li => li.textContent.includes("round 2  confirmation_requested  f1"))`)
	require.Contains(t, eval[string](t, ctx, `document.getElementById("events").textContent`), "round 1  round_started")

	// f1 decided elsewhere (the API) while the page is open and f2 still
	// waits: f1's card says so and takes no decision.
	deny := func(wf, id string) {
		p := c.pendingOf(t, wf, id)
		r := c.call(t, "POST", "/api/v1/approvals", c.approver, map[string]any{"workflow_id": wf, "call_id": id, "approval_id": p["approval_id"], "approve": false})
		require.Equal(t, http.StatusOK, r.code, string(r.body))
	}
	f1 := cardSel(wf2, "f1")
	deny(wf2, "f1")
	poll(t, ctx, `document.querySelector(`+jsString(f1+" .status")+`).textContent === "Decided elsewhere: denied by alice via api."`)
	require.True(t, eval[bool](t, ctx, `document.querySelector(`+jsString(f1+` button[value="approve"]`)+`).disabled`))

	// e2 denied too: round 1 finishes, its cards go and its calls show
	// their results; round 2's f2 still waits.
	deny(wf1, "e2")
	poll(t, ctx, `document.querySelector('[data-round-status=`+jsString(wf1)+`]').textContent === "completed"`)
	poll(t, ctx, `document.querySelectorAll('section.round[data-workflow=`+jsString(wf1)+`] .card').length === 0`)
	poll(t, ctx, `document.querySelector('[data-status-for=`+jsString(wf1+"|e1")+`]').textContent === "ok"`)
	poll(t, ctx, `document.querySelector('[data-status-for=`+jsString(wf1+"|e2")+`]').textContent === "skipped"`)
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll(".card").length`), "round 2's cards stay")
	deny(wf2, "f2")
	poll(t, ctx, `document.querySelectorAll(".card").length === 0`)

	// The inbox, reloaded, has nothing left.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(c.url+"/?session="+e.session), chromedp.WaitVisible(css("#inbox-count"))))
	require.Equal(t, "Nothing waits for a person.", text(t, ctx, "#inbox-count"))
}

// TestConsoleBrowserSignedLinkN2 opens a webhook's approve link in
// Chromium: the page shows the call (its tool and arguments, T14) as text
// and a confirm button and
// decides nothing; confirm decides via link as the approver, not
// verified; the same link opened and confirmed again shows link_used.
func TestConsoleBrowserSignedLinkN2(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-browser")
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	workerTokens := approverTokens(t, "worker-side-token-0002")
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-browser", "NOTIFY_LINK_KEY="+key, "NOTIFY_APPROVER=alice")
	ctx := browserCtx(t)
	c := e.startConsole()
	e.startWorkerBin(workerBin, "CONSOLE_URL="+c.url, "CONSOLE_TOKENS="+workerTokens)
	in, done, w := e.linkedRound(h, "echo '<b>linked</b>'")
	require.Equal(t, "r1", w.CallID)

	open := func() {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(w.Links.Approve),
			chromedp.WaitVisible(css("#link-confirm")),
		))
	}
	open()
	require.Equal(t, "Confirm to approve the call below.", text(t, ctx, "#link-what"))
	require.Equal(t, "r1", text(t, ctx, "#link-callid"))
	require.Equal(t, in.WorkflowID(), text(t, ctx, "#link-workflow"))
	require.Equal(t, "alice", text(t, ctx, "#link-by"))
	// T14: the page shows the tool and its arguments, as text.
	poll(t, ctx, `document.querySelector("#link-tool").textContent === "run_command"`)
	require.Contains(t, text(t, ctx, "#link-args"), `"command": "echo '<b>linked</b>'"`)
	require.NotEmpty(t, text(t, ctx, "#link-reasons"))
	require.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll("#link-call a, #link-call script, #link-call img, #link-call b").length`),
		"the call is inert text")
	require.NotContains(t, eval[string](t, ctx, `location.href`), "#", "the token leaves the address bar")
	require.Len(t, e.waitPending(in.WorkflowID(), "r1", "r2"), 2, "opening the link decides nothing")

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css("#link-confirm")), chromedp.WaitVisible(css("#link-result"))))
	require.Equal(t, "The call r1 was approved as alice.", text(t, ctx, "#link-result"))
	require.Eventually(t, func() bool { return len(e.waitPending(in.WorkflowID(), "r2")) == 1 }, 30*time.Second, 100*time.Millisecond)

	open()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css("#link-confirm")), chromedp.WaitVisible(css("#link-result"))))
	require.Equal(t, "This link has decided already.", text(t, ctx, "#link-result"))
	require.Equal(t, "409 link_used", text(t, ctx, "#link-code"))

	e.mustStarter("deny", in.WorkflowID(), "r2")
	res := decodeResult(t, <-done)
	a := byID(res)["r1"].Approval
	require.Equal(t, round.StatusOK, byID(res)["r1"].Status)
	require.Equal(t, round.DecisionApproved, a.Decision)
	require.Equal(t, "link", a.Via)
	require.Equal(t, "alice", a.By)
	require.False(t, a.Verified)
}

// TestConsoleBrowserTwoConsolesO3: two consoles with one tokens file,
// CONSOLE_SESSION_KEY and link key, as replicas behind one address. In
// Chromium a person signs in on the first and decides on the second, whose
// page follows the session's events as the first's does; a webhook's link
// minted for the first console decides on the second.
func TestConsoleBrowserTwoConsolesO3(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-o3")
	linkKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{4}, 32))
	sessionKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32))
	workerTokens := approverTokens(t, "worker-side-token-0003")
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-o3", "NOTIFY_LINK_KEY="+linkKey, "NOTIFY_APPROVER=alice")
	cs := e.startConsoles(2, "CONSOLE_SESSION_KEY="+sessionKey, "CONSOLE_REPLICAS=2")
	a, b := cs[0], cs[1]
	require.NotEqual(t, a.url, b.url)
	e.startWorkerBin(workerBin, "CONSOLE_URL="+a.url, "CONSOLE_TOKENS="+workerTokens)
	ctx := browserCtx(t)

	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("r1", "run_command", map[string]any{"command": "echo by link"}),
		call("r2", "run_command", map[string]any{"command": "echo on the second console"}))
	done := e.startRound(in)
	p := e.waitPending(in.WorkflowID(), "r1", "r2")

	// Sign in on the first console.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(a.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), a.approver+kb.Enter),
		chromedp.WaitVisible(css("#inbox-summary")),
		chromedp.Navigate(a.url+"/sessions/"+e.session),
		chromedp.WaitVisible(css(`#live[data-live="1"]`)),
	))
	// The second console knows the person and follows the events too.
	r2 := cardSel(in.WorkflowID(), "r2")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(b.url+"/sessions/"+e.session),
		chromedp.WaitVisible(css(`#live[data-live="1"]`)),
		chromedp.WaitVisible(css(r2)),
	))
	require.Equal(t, "alice", text(t, ctx, ".who strong"), "signed in on the first console, known to the second")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(r2+` button[value="approve"]`))))
	poll(t, ctx, `(document.querySelector(`+jsString(r2+" .status")+`) || {textContent: ""}).textContent.startsWith("Approved")`)

	// The first console's link, opened on the second.
	w := h.waiting(p[0].WaitID)
	require.True(t, strings.HasPrefix(w.Links.Approve, a.url+"/link#"), w.Links.Approve)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(b.url+strings.TrimPrefix(w.Links.Approve, a.url)),
		chromedp.WaitVisible(css("#link-confirm")),
	))
	poll(t, ctx, `document.querySelector("#link-tool").textContent === "run_command"`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css("#link-confirm")), chromedp.WaitVisible(css("#link-result"))))
	require.Equal(t, "The call r1 was approved as alice.", text(t, ctx, "#link-result"))

	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, byID(res)["r1"].Status)
	require.Equal(t, "link", byID(res)["r1"].Approval.Via)
	require.Equal(t, round.StatusOK, byID(res)["r2"].Status)
	require.Equal(t, "console", byID(res)["r2"].Approval.Via)
	require.Equal(t, "alice", byID(res)["r2"].Approval.By)
	require.True(t, byID(res)["r2"].Approval.Verified)
}

// In real Chromium, the inbox's card of a user tool's waiting call names
// its queue and that one tool worker polls it (Y2).
func TestConsoleBrowserUserToolCardY2(t *testing.T) {
	e := newEnv(t)
	ctx := browserCtx(t)
	queue := e.startWorkerForTools("py-", false)
	e.startPythonToolWorker(queue, t.TempDir())
	e.waitForTools(queue, "py_refund")
	c := e.startConsole()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"py_refund"}},
		call("b", "py_refund", map[string]any{"order_id": "G-7", "amount": 3}))
	done := e.startRound(in)
	wid := in.WorkflowID()
	e.waitPending(wid, "b")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.url+"/?session="+e.session),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), c.approver+kb.Enter),
		chromedp.WaitVisible(css(cardSel(wid, "b")+" .queue")),
	))
	require.Equal(t, "Your own tool, served by the tool workers of queue "+queue+": 1 tool worker polls it.",
		text(t, ctx, cardSel(wid, "b")+" .queue"))

	r := e.starter(context.Background(), "", "cancel", wid)
	require.Equal(t, 0, r.code, r.stderr)
	<-done
}
