package console

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// consoles starts n consoles over one backend with the given session key
// and revocations, as replicas behind one address would run.
func consoles(t *testing.T, f *fakeBackend, key []byte, rev Revocations, tokens ...[]Token) []*httptest.Server {
	t.Helper()
	var out []*httptest.Server
	for _, ts := range tokens {
		s, err := New(Options{Backend: f, Tokens: ts, SessionKey: key, Revocations: rev})
		require.NoError(t, err)
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		out = append(out, srv)
	}
	return out
}

// status GETs path on srv with the cookie jar's cookie for from.
func withCookie(t *testing.T, c *http.Client, from, to *httptest.Server, method, path string, form url.Values) int {
	t.Helper()
	u, _ := url.Parse(from.URL)
	req, err := http.NewRequest(method, to.URL+path, bytes.NewBufferString(form.Encode()))
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, k := range c.Jar.Cookies(u) {
		req.AddCookie(k)
	}
	resp, err := (&http.Client{CheckRedirect: c.CheckRedirect}).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// O3: consoles that share CONSOLE_SESSION_KEY share sign-ins: signed in on
// one, a person acts on the other with the same CSRF token; a sign-out on
// one holds on the other (shared revocations); a console with another key,
// or without the person's token, refuses the cookie.
func TestConsolesShareSignInsO3(t *testing.T) {
	f := newFake()
	key := bytes.Repeat([]byte{5}, SessionKeySize)
	rev := &memoryRevocations{m: map[string]time.Time{}}
	tokens := []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}
	cs := consoles(t, f, key, rev, tokens, tokens)
	a, b := cs[0], cs[1]
	other := consoles(t, f, bytes.Repeat([]byte{6}, SessionKeySize), nil, tokens)[0]
	without := consoles(t, f, key, nil, []Token{{Secret: "another-approver-token-01", Name: "bob", Role: RoleApprover}})[0]

	c := browser(t)
	csrf := signIn(t, a, c, approverToken)
	require.Equal(t, http.StatusOK, withCookie(t, c, a, b, "GET", "/", nil), "signed in on a, read on b")
	require.Equal(t, http.StatusSeeOther, withCookie(t, c, a, other, "GET", "/", nil), "another session key: to the sign-in page")
	require.Equal(t, http.StatusSeeOther, withCookie(t, c, a, without, "GET", "/", nil), "a token the console does not know")

	form := url.Values{"workflow_id": {"toolround/s1/r1/1"}, "call_id": {"call_1"}, "approval_id": {"abc"}, "decision": {"deny"},
		"return": {"/"}, "csrf": {csrf}}
	require.Equal(t, http.StatusSeeOther, withCookie(t, c, a, b, "POST", "/api/v1/approvals", form), "b takes a's CSRF token")
	require.Len(t, f.decisions, 1)
	require.Equal(t, "alice", f.decisions[0].By)
	require.Equal(t, "console", f.decisions[0].Via)

	// Sign out on b: a refuses the cookie too.
	require.Equal(t, http.StatusSeeOther, withCookie(t, c, a, b, "POST", "/logout", url.Values{"csrf": {csrf}}))
	require.Equal(t, http.StatusSeeOther, withCookie(t, c, a, a, "GET", "/", nil), "signed out everywhere")
}

// A cookie is sealed: changed, expired or from another key it signs no one in.
func TestSealedCookiesRefuseTampering(t *testing.T) {
	key := bytes.Repeat([]byte{5}, SessionKeySize)
	pc, err := newPageCookies(key, time.Hour, nil)
	require.NoError(t, err)
	ts := newTokenSet([]Token{{Secret: approverToken, Name: "alice", Role: RoleApprover, Sessions: []string{"s*"}}})
	e, _ := ts.lookup(approverToken)
	now := time.Now()
	v, ps := pc.create(e, now)
	got, ok := pc.open(t.Context(), v, ts, now)
	require.True(t, ok)
	require.Equal(t, ps, got)
	require.Equal(t, []string{"s*"}, got.scope)
	require.NotContains(t, v, approverToken)

	flip := []byte(v)
	flip[len(flip)/2] ^= 1
	_, ok = pc.open(t.Context(), string(flip), ts, now)
	require.False(t, ok, "a changed cookie")
	_, ok = pc.open(t.Context(), v, ts, now.Add(2*time.Hour))
	require.False(t, ok, "an expired cookie")
	pc2, err := newPageCookies(bytes.Repeat([]byte{7}, SessionKeySize), time.Hour, nil)
	require.NoError(t, err)
	_, ok = pc2.open(t.Context(), v, ts, now)
	require.False(t, ok, "another key")
	_, ok = pc.open(t.Context(), "", ts, now)
	require.False(t, ok)
	require.NoError(t, pc.drop(t.Context(), v))
	_, ok = pc.open(t.Context(), v, ts, now)
	require.False(t, ok, "signed out")
}

// Rotating CONSOLE_SESSION_KEY: a console with the new key and the old one
// as CONSOLE_SESSION_KEY_PREVIOUS keeps the sign-ins the old key sealed,
// with their CSRF tokens, and seals new ones with the new key only; once the
// previous key is gone the old sign-ins end, the new ones go on.
func TestSessionKeyRotation(t *testing.T) {
	f := newFake()
	oldKey, newKey := bytes.Repeat([]byte{5}, SessionKeySize), bytes.Repeat([]byte{6}, SessionKeySize)
	tokens := []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}
	serve := func(key, previous []byte) *httptest.Server {
		s, err := New(Options{Backend: f, Tokens: tokens, SessionKey: key, SessionKeyPrevious: previous})
		require.NoError(t, err)
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return srv
	}
	before, during, after := serve(oldKey, nil), serve(newKey, oldKey), serve(newKey, nil)

	old := browser(t)
	csrf := signIn(t, before, old, approverToken)
	require.Equal(t, http.StatusOK, withCookie(t, old, before, during, "GET", "/", nil), "the old key's sign-in goes on during the window")
	form := url.Values{"workflow_id": {"toolround/s1/r1/1"}, "call_id": {"call_1"}, "approval_id": {"abc"}, "decision": {"deny"},
		"return": {"/"}, "csrf": {csrf}}
	require.Equal(t, http.StatusSeeOther, withCookie(t, old, before, during, "POST", "/api/v1/approvals", form), "with its CSRF token")
	require.Len(t, f.decisions, 1)
	require.Equal(t, http.StatusSeeOther, withCookie(t, old, before, after, "GET", "/", nil), "after the window it ends")

	fresh := browser(t)
	signIn(t, during, fresh, approverToken)
	require.Equal(t, http.StatusOK, withCookie(t, fresh, during, after, "GET", "/", nil), "a sign-in of the window is the new key's")
	require.Equal(t, http.StatusSeeOther, withCookie(t, fresh, during, before, "GET", "/", nil), "not the old key's")

	_, err := New(Options{Backend: f, Tokens: tokens, SessionKey: newKey, SessionKeyPrevious: []byte("short")})
	require.Error(t, err, "a previous key of the wrong size")
}
