package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
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

	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
)

// hookReceiver is a webhook receiver that checks each POST's signature and
// keeps the first body of each Idempotency-Key, counting repeats.
type hookReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server

	mu      sync.Mutex
	bodies  map[string][]byte
	raw     []string
	headers []string             // each successful POST's headers, as text
	okAt    map[string]time.Time // when each key first succeeded
	count   map[string]int
	failFor int // answer 503 to the first failFor POSTs
	posts   int
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{t: t, secret: secret, bodies: map[string][]byte{}, count: map[string]int{}, okAt: map[string]time.Time{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := notify.Verify(secret, r.Header, body, time.Now()); err != nil {
			t.Errorf("webhook: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		key := r.Header.Get(notify.HeaderIdempotency)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.posts++
		if h.posts <= h.failFor {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if _, seen := h.bodies[key]; !seen {
			h.bodies[key] = body
			h.okAt[key] = time.Now()
		}
		h.count[key]++
		h.raw = append(h.raw, string(body))
		var hb strings.Builder
		_ = r.Header.Write(&hb)
		h.headers = append(h.headers, hb.String())
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) payload(key string) (notify.Payload, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.bodies[key]
	var p notify.Payload
	if ok {
		require.NoError(h.t, json.Unmarshal(b, &p))
	}
	return p, ok
}

func (h *hookReceiver) keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.bodies {
		out = append(out, k)
	}
	return out
}

// waiting is the payload of the waiting webhook of waitID, once it came.
func (h *hookReceiver) waiting(waitID string) notify.Payload {
	h.t.Helper()
	var w notify.Payload
	require.Eventually(h.t, func() bool {
		var ok bool
		w, ok = h.payload("notify/" + waitID + "/waiting")
		return ok
	}, 30*time.Second, 50*time.Millisecond)
	return w
}

// linkedRound starts round 1 of two run_command calls, r1 of command and
// r2, which both wait for a person; it returns the round's input, its end,
// and r1's waiting webhook, which h received.
func (e *env) linkedRound(h *hookReceiver, command string) (round.Input, <-chan result, notify.Payload) {
	e.t.Helper()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("r1", "run_command", map[string]any{"command": command}),
		call("r2", "run_command", map[string]any{"command": "echo other"}))
	done := e.startRound(in)
	p := e.waitPending(in.WorkflowID(), "r1", "r2")
	return in, done, h.waiting(p[0].WaitID)
}

// approverTokens is a worker's CONSOLE_TOKENS file that holds token, for
// alice, an approver.
func approverTokens(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(token+" alice approver\n"), 0o600))
	return path
}

// A call that waits sends waiting, both reminders and expired, each once
// under its own notify/<wait_id>/<type> key, signed; an approval sends
// decided.
func TestNotifyWebhooksOfAWaitN1(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-1")
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-1")
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("w1", "run_command", map[string]any{"command": "echo '<b>hi</b>'"}))
	in.ConfirmTimeoutSeconds = 4
	res := e.round(in)
	require.Equal(t, round.StatusExpired, byID(res)["w1"].Status)
	var waitID string
	require.Eventually(t, func() bool {
		for _, k := range h.keys() {
			if strings.HasSuffix(k, "/expired") {
				waitID = strings.Split(k, "/")[1]
			}
		}
		return waitID != "" && len(h.keys()) == 4
	}, 30*time.Second, 50*time.Millisecond, "keys: %v", h.keys())
	for _, typ := range []string{"waiting", "reminder-1", "reminder-2", "expired"} {
		key := "notify/" + waitID + "/" + typ
		p, ok := h.payload(key)
		require.True(t, ok, "no %s in %v", key, h.keys())
		require.Equal(t, strings.Split(typ, "-")[0], p.Type)
		require.Equal(t, in.WorkflowID(), p.WorkflowID)
		require.Equal(t, e.session, p.SessionID)
		require.Equal(t, "w1", p.CallID)
		require.Equal(t, "run_command", p.Tool)
		require.Equal(t, waitID, p.WaitID)
		require.NotEmpty(t, p.ApprovalID)
		require.NotContains(t, p.Summary, "<", "summary is escaped")
		require.Contains(t, p.Summary, "command", "summary previews the arguments (T14)")
		require.Contains(t, p.Summary, "hi")
		require.False(t, p.WaitingSince.IsZero())
		require.Equal(t, 4*time.Second, p.Deadline.Sub(p.WaitingSince))
	}
	h.mu.Lock()
	for k, n := range h.count {
		require.Equal(t, 1, n, k)
	}
	h.mu.Unlock()

	// An approval sends decided.
	in2 := e.input(2, "claude-code", res.State, call("w2", "run_command", map[string]any{"command": "echo two"}))
	done := e.startRound(in2)
	p := e.waitPending(in2.WorkflowID(), "w2")
	e.mustStarter("approve", in2.WorkflowID(), "w2", "--as", "alice")
	require.Equal(t, round.StatusOK, byID(decodeResult(t, <-done))["w2"].Status)
	require.Eventually(t, func() bool {
		d, ok := h.payload("notify/" + p[0].WaitID + "/decided")
		return ok && d.Type == "decided" && strings.Contains(d.Reason, "alice")
	}, 30*time.Second, 50*time.Millisecond, "keys: %v", h.keys())
}

// The waiting webhook carries approve and deny links to the console; GET
// changes nothing, POST of the token decides via link as the approver, not
// verified, once (also after the worker restarts); a forged token is 403
// and an expired one 410.
func TestNotifySignedLinksDecideOnceN2(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-2")
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	workerTokens := approverTokens(t, "worker-side-token-0001")
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-2", "NOTIFY_LINK_KEY="+key, "NOTIFY_APPROVER=alice")
	c := e.startConsole()
	wk := e.startWorkerBin(workerBin, "CONSOLE_URL="+c.url, "CONSOLE_TOKENS="+workerTokens)
	in, done, w := e.linkedRound(h, "echo linked")
	require.True(t, strings.HasPrefix(w.Links.Approve, c.url+"/link#"), w.Links.Approve)
	require.True(t, strings.HasPrefix(w.Links.Deny, c.url+"/link#"), w.Links.Deny)
	require.Equal(t, c.url+"/calls/"+in.WorkflowID(), w.Links.Open)
	token := strings.SplitN(w.Links.Approve, "#", 2)[1]

	get, err := http.Get(w.Links.Approve)
	require.NoError(t, err)
	_ = get.Body.Close()
	require.Equal(t, http.StatusOK, get.StatusCode)
	require.Equal(t, "no-referrer", get.Header.Get("Referrer-Policy"))
	require.Equal(t, "no-store", get.Header.Get("Cache-Control"))
	require.Contains(t, get.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Len(t, e.waitPending(in.WorkflowID(), "r1", "r2"), 2, "GET decides nothing")

	post := func(tok string) int {
		resp, err := http.PostForm(c.url+"/link", url.Values{"token": {tok}})
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	// One character of the middle changed: the last ones of base64 carry
	// padding bits, and "AA" there was the same token 1 time in 256.
	mid := len(token) / 2
	swap := byte('A')
	if token[mid] == 'A' {
		swap = 'B'
	}
	forged := token[:mid] + string(swap) + token[mid+1:]
	require.Equal(t, http.StatusForbidden, post(forged))
	k, _ := base64.StdEncoding.DecodeString(key)
	l, err := notify.VerifyLink(k, token, time.Now())
	require.NoError(t, err)
	l.Expires, l.Nonce = time.Now().Add(-time.Minute).Unix(), "other"
	require.Equal(t, http.StatusGone, post(notify.MintLink(k, l)))

	require.Equal(t, http.StatusOK, post(token))
	require.Equal(t, http.StatusConflict, post(token), "a link decides once (link_used)")
	// The used nonce is in the round's history: a new worker, replaying
	// it, refuses the link too.
	wk.kill(t)
	e.startWorkerBin(workerBin, "CONSOLE_URL="+c.url, "CONSOLE_TOKENS="+workerTokens)
	require.Equal(t, http.StatusConflict, post(token), "a link decides once, across a worker restart")
	e.mustStarter("deny", in.WorkflowID(), "r2")
	res := decodeResult(t, <-done)
	a := byID(res)["r1"].Approval
	require.Equal(t, round.DecisionApproved, a.Decision)
	require.Equal(t, "link", a.Via)
	require.Equal(t, "alice", a.By)
	require.False(t, a.Verified)
	require.NotContains(t, c.logs.String(), token, "no log holds a token")
	require.Equal(t, http.StatusNotFound, post(strings.SplitN(w.Links.Deny, "#", 2)[1]), "the round has ended")
}
