package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// TestRuleKeyRotationThroughTheWorker rotates TOOLROUND_RULE_KEY through
// the real worker and starter: a rule remembered under the old key still
// approves on a worker with the new key and TOOLROUND_RULE_KEY_PREVIOUS set
// to the old one, where a rule remembered meanwhile is signed with the new
// key; on a worker with the new key alone, the new rule approves and the
// old one no longer does, so its call asks a person again.
func TestRuleKeyRotationThroughTheWorker(t *testing.T) {
	oldKey, newKey := randomKey(t), randomKey(t)
	e := newEnv(t)

	before := e.startWorkerBin(workerBin, "TOOLROUND_RULE_KEY="+oldKey)
	res1 := e.rememberRule("l1", "ls -a", "ls *")
	require.Len(t, res1.State.Allow, 1)
	before.kill(t)

	during := e.startWorkerBin(workerBin, "TOOLROUND_RULE_KEY="+newKey, "TOOLROUND_RULE_KEY_PREVIOUS="+oldKey)
	in2 := e.input(2, "claude-code", res1.State,
		call("l2", "run_command", map[string]any{"command": "ls -l"}),
		call("e2", "run_command", map[string]any{"command": "echo two"}))
	done := e.startRound(in2)
	e.waitPending(in2.WorkflowID(), "e2")
	e.mustStarter("approve", in2.WorkflowID(), "e2", "--remember", "--pattern", "echo *")
	res2 := decodeResult(t, <-done)
	r2 := byID(res2)
	require.Equal(t, round.DecisionRule, r2["l2"].Approval.Decision, "the old key's rule approves during the window: %s", r2["l2"].Content)
	require.Equal(t, round.StatusOK, r2["l2"].Status, r2["l2"].Content)
	require.Len(t, res2.State.Allow, 2)
	during.kill(t)

	e.startWorkerBin(workerBin, "TOOLROUND_RULE_KEY="+newKey)
	in3 := e.input(3, "claude-code", res2.State,
		call("l3", "run_command", map[string]any{"command": "ls -1"}),
		call("e3", "run_command", map[string]any{"command": "echo three"}))
	done = e.startRound(in3)
	e.waitPending(in3.WorkflowID(), "l3")
	e.mustStarter("deny", in3.WorkflowID(), "l3", "--reason", "asked again after the rotation")
	r3 := byID(decodeResult(t, <-done))
	require.Equal(t, round.DecisionRule, r3["e3"].Approval.Decision, "the rule of the window is the new key's: %s", r3["e3"].Content)
	require.Contains(t, r3["e3"].Content, "three\n")
	require.Equal(t, round.DecisionDenied, r3["l3"].Approval.Decision, "after the window the old key's rule approves nothing")
}

// TestSecretKeyRotationThroughTheWorker rotates TOOLROUND_SECRET_KEY: a
// store_secret value the starter sealed with the old key is stored by a
// worker with the new key and TOOLROUND_SECRET_KEY_PREVIOUS, and a call
// sends it; on a worker with the new key alone the value the old key sealed
// no longer opens, and the call sends nothing.
func TestSecretKeyRotationThroughTheWorker(t *testing.T) {
	oldKey, newKey := randomKey(t), randomKey(t)
	const value = "rotated-secret-value-0042"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Token"))
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	// The starter seals with the old key; each worker is given its own.
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+oldKey)
	// Each round asks another URL, so that no answer comes from the cache.
	fetched := &round.RunState{Fetched: []string{"http_request", "store_secret"}}
	send := func(roundNo int, state *round.RunState) round.CallResult {
		t.Helper()
		in := e.input(roundNo, "claude-code", state,
			call("h", "http_request", map[string]any{"url": fmt.Sprintf("%s/round-%d", srv.URL, roundNo), "headers": map[string]string{"X-Token": "{{secret:tok}}"}}))
		done := e.startRound(in)
		e.waitPending(in.WorkflowID(), "h")
		e.mustStarter("approve", in.WorkflowID(), "h")
		return byID(decodeResult(t, <-done))["h"]
	}

	during := e.startWorkerBin(workerBin, "TOOLROUND_SECRET_KEY="+newKey, "TOOLROUND_SECRET_KEY_PREVIOUS="+oldKey)
	in1 := e.input(1, "claude-code", fetched, call("s", "store_secret", map[string]any{"name": "tok", "value": value}))
	r1 := byID(e.round(in1))["s"]
	require.Equal(t, round.StatusOK, r1.Status, "a value the old key sealed is stored during the window: %s", r1.Content)
	r2 := send(2, fetched)
	require.Equal(t, round.StatusOK, r2.Status, r2.Content)
	mu.Lock()
	require.Equal(t, []string{value}, got, "the stored secret opens during the window")
	mu.Unlock()
	during.kill(t)

	e.startWorkerBin(workerBin, "TOOLROUND_SECRET_KEY="+newKey)
	r3 := send(3, fetched)
	require.NotEqual(t, round.StatusOK, r3.Status, "after the window the old key's value does not open: %s", r3.Content)
	require.Contains(t, r3.Content, "does not open with this key", "the call says why")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1, "nothing was sent after the window")
}

// TestConsoleKeyRotationThroughTheConsole rotates NOTIFY_LINK_KEY and
// CONSOLE_SESSION_KEY through the real worker and consoles: a link the
// worker signed with the old link key is refused by a console with the new
// key alone and decides on one with NOTIFY_LINK_KEY_PREVIOUS; a page
// sign-in sealed with the old session key goes on on a console with
// CONSOLE_SESSION_KEY_PREVIOUS and ends on one with the new key alone.
func TestConsoleKeyRotationThroughTheConsole(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-rotation")
	oldLink, newLink := randomKey(t), randomKey(t)
	oldSession, newSession := randomKey(t), randomKey(t)
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-rotation", "NOTIFY_APPROVER=alice")
	approver := "approver-rotation-" + fmt.Sprint(time.Now().UnixNano())
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte(approver+" alice approver\n"), 0o600))
	start := func(extra ...string) *consoleProc {
		c := &consoleProc{approver: approver, logs: &syncBuffer{}}
		e.runConsole(c, append([]string{"CONSOLE_TOKENS=" + tokens}, extra...))
		return c
	}
	before := start("NOTIFY_LINK_KEY="+oldLink, "CONSOLE_SESSION_KEY="+oldSession)
	during := start("NOTIFY_LINK_KEY="+newLink, "NOTIFY_LINK_KEY_PREVIOUS="+oldLink,
		"CONSOLE_SESSION_KEY="+newSession, "CONSOLE_SESSION_KEY_PREVIOUS="+oldSession)
	after := start("NOTIFY_LINK_KEY="+newLink, "CONSOLE_SESSION_KEY="+newSession)

	// Sign-ins: sealed by the old key on the first console.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(before.url+"/login", url.Values{"token": {approver}, "return": {"/"}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cookies := resp.Cookies()
	require.NotEmpty(t, cookies)
	page := func(c *consoleProc) int {
		req, err := http.NewRequest("GET", c.url+"/", nil)
		require.NoError(t, err)
		for _, k := range cookies {
			req.AddCookie(k)
		}
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, page(before))
	require.Equal(t, http.StatusOK, page(during), "the old session key's sign-in goes on during the window")
	require.Equal(t, http.StatusSeeOther, page(after), "and ends after it: to the sign-in page")

	// Links: the worker still signs with the old link key.
	workerTokens := approverTokens(t, "worker-side-token-rotation")
	e.startWorkerBin(workerBin, "NOTIFY_LINK_KEY="+oldLink, "CONSOLE_URL="+during.url, "CONSOLE_TOKENS="+workerTokens)
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("r1", "run_command", map[string]any{"command": "echo by an old link"}))
	done := e.startRound(in)
	p := e.waitPending(in.WorkflowID(), "r1")
	w := h.waiting(p[0].WaitID)
	token := strings.SplitN(w.Links.Approve, "#", 2)[1]
	post := func(c *consoleProc) int {
		resp, err := http.PostForm(c.url+"/link", url.Values{"token": {token}})
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, post(after), "the new link key alone refuses the old key's link")
	require.Equal(t, http.StatusOK, post(during), "with the previous key the old link decides")
	r := byID(decodeResult(t, <-done))["r1"]
	require.Equal(t, round.StatusOK, r.Status, r.Content)
	require.Equal(t, "link", r.Approval.Via)
	require.Equal(t, "alice", r.Approval.By)
}
