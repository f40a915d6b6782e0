package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// signInServer is a console with alice (approver) and bot (agent), whose
// clock the test moves.
func signInServer(t *testing.T, now *time.Time) (*Server, *httptest.Server) {
	t.Helper()
	var mu sync.Mutex
	s, err := New(Options{Backend: newFake(), Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover},
		{Secret: agentToken, Name: "bot", Role: RoleAgent},
	}, BaseURL: "http://console.test:8780/", Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return *now }})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// codeOf is the fragment of a sign-in link, after checking its form.
func codeOf(t *testing.T, link string) string {
	t.Helper()
	base, code, ok := strings.Cut(link, "#")
	require.True(t, ok, link)
	require.Equal(t, "http://console.test:8780/signin", base)
	require.Len(t, code, 64)
	return code
}

func postCode(t *testing.T, ts *httptest.Server, c *http.Client, code string) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(ts.URL+"/signin", url.Values{"code": {code}})
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// A sign-in link signs a browser in once, as its token: the code comes in
// the form (the page reads it from the fragment), the answer is the
// session cookie and the inbox; the same code again, a code the console
// never minted and an expired one are refused with a page that says which,
// and set no cookie.
func TestSignInLinkSignsInOnce(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, ts := signInServer(t, &now)

	// The page changes nothing and holds no code: its script posts it.
	resp, err := http.Get(ts.URL + "/signin")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), `src="/assets/signin.js"`)
	require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	link, err := s.SignInLink("alice", 0)
	require.NoError(t, err)
	code := codeOf(t, link)

	c := browser(t)
	resp, _ = postCode(t, ts, c, code)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"))
	var ck *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == cookieName {
			ck = k
		}
	}
	require.NotNil(t, ck, "the session cookie")
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	resp, err = c.Get(ts.URL + "/")
	require.NoError(t, err)
	inbox, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(inbox), "alice")

	// Once: the same code again signs no one in.
	other := browser(t)
	resp, body := postCode(t, ts, other, code)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, "used already")
	require.Empty(t, resp.Cookies())

	resp, body = postCode(t, ts, other, strings.Repeat("ab", 32))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, "not known to this console")
	resp, _ = postCode(t, ts, other, "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// An hour later an unused link has expired.
	late, err := s.SignInLink("alice", 0)
	require.NoError(t, err)
	now = now.Add(SignInLinkTTL + time.Second)
	resp, body = postCode(t, ts, other, codeOf(t, late))
	require.Equal(t, http.StatusGone, resp.StatusCode)
	require.Contains(t, body, "expired")
	require.Empty(t, resp.Cookies())

	// Its token's role holds: a link of the agent token signs in as bot.
	agentLink, err := s.SignInLink("bot", time.Minute)
	require.NoError(t, err)
	resp, _ = postCode(t, ts, other, codeOf(t, agentLink))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	_, err = s.SignInLink("carol", 0)
	require.ErrorContains(t, err, "no token named carol")
}

// A cross-site post of a code is refused by its Origin, and the code stays
// good for the person it was printed for.
func TestSignInLinkRefusesCrossSitePosts(t *testing.T) {
	now := time.Now()
	s, ts := signInServer(t, &now)
	link, err := s.SignInLink("alice", 0)
	require.NoError(t, err)
	code := codeOf(t, link)
	req, err := http.NewRequest("POST", ts.URL+"/signin", strings.NewReader(url.Values{"code": {code}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := browser(t).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = postCode(t, ts, browser(t), code)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}
