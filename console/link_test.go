package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/notify"
)

// The link page shows the call it decides (T14): POST /link/call with the
// token answers the tool, why it asks and its arguments, cut past
// linkArgsMax; a forged, expired or out-of-scope token gets nothing of it,
// and reading decides nothing.
func TestLinkCallShowsTheToolAndItsArgumentsT14(t *testing.T) {
	key := bytes.Repeat([]byte{3}, 32)
	f := newFake()
	s, err := New(Options{Backend: f, LinkKey: key, Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover},
		{Secret: "scoped-approver-token-0001", Name: "carol", Role: RoleApprover, Sessions: []string{"other"}},
	}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	link := notify.Link{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", Decision: notify.DecisionApprove, By: "alice",
		Expires: time.Now().Add(time.Hour).Unix(), Nonce: "n1"}
	read := func(l notify.Link, forge bool) (int, linkCallView, http.Header) {
		t.Helper()
		tok := notify.MintLink(key, l)
		if forge { // one character of the middle: the last ones carry padding bits
			mid, swap := len(tok)/2, byte('A')
			if tok[mid] == 'A' {
				swap = 'B'
			}
			tok = tok[:mid] + string(swap) + tok[mid+1:]
		}
		resp, err := http.PostForm(ts.URL+"/link/call", url.Values{"token": {tok}})
		require.NoError(t, err)
		defer resp.Body.Close()
		var v linkCallView
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return resp.StatusCode, v, resp.Header
	}

	code, v, h := read(link, false)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "edit_file", v.Tool)
	require.Equal(t, KindConfirm, v.Kind)
	require.Equal(t, []string{"edit_file changes files"}, v.Reasons)
	require.Contains(t, v.Arguments, `"path": "notes.txt"`)
	require.Contains(t, v.Arguments, `"new_text": "one\n2\n"`)
	require.Zero(t, v.Cut)
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	require.Contains(t, h.Get("Content-Security-Policy"), "connect-src 'self'")
	require.Empty(t, f.decisions, "reading a link decides nothing")

	// Long arguments are cut, and the answer says by how much.
	long := strings.Repeat("x", 3*linkArgsMax)
	f.inbox[0].Pending[0].Arguments = `{"path":"a","new_text":"` + long + `"}`
	_, v, _ = read(link, false)
	require.Len(t, []rune(v.Arguments), linkArgsMax)
	require.Positive(t, v.Cut)

	// A call that no longer waits: nothing to show.
	gone := link
	gone.CallID = "call_9"
	code, v, _ = read(gone, false)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, v.Tool)
	require.False(t, v.Waiting)

	code, v, _ = read(link, true)
	require.Equal(t, http.StatusForbidden, code, "a forged token")
	require.Empty(t, v.Tool)
	expired := link
	expired.Expires = time.Now().Add(-time.Minute).Unix()
	code, v, _ = read(expired, false)
	require.Equal(t, http.StatusGone, code)
	require.Empty(t, v.Tool)
	scoped := link
	scoped.By = "carol"
	code, v, _ = read(scoped, false)
	require.Equal(t, http.StatusForbidden, code, "an approver whose scope does not cover the session")
	require.Empty(t, v.Tool)
}

// TestLinkKeyRotation: a console with NOTIFY_LINK_KEY_PREVIOUS takes links
// the old key signed as well as the new key's, never a stranger's; once the
// previous key is gone, the old links are refused.
func TestLinkKeyRotation(t *testing.T) {
	oldKey, newKey, stranger := bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32), bytes.Repeat([]byte{5}, 32)
	link := notify.Link{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", Decision: notify.DecisionApprove, By: "alice",
		Expires: time.Now().Add(time.Hour).Unix(), Nonce: "n1"}
	serve := func(previous []byte) *httptest.Server {
		s, err := New(Options{Backend: newFake(), LinkKey: newKey, LinkKeyPrevious: previous,
			Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
		require.NoError(t, err)
		ts := httptest.NewServer(s)
		t.Cleanup(ts.Close)
		return ts
	}
	read := func(ts *httptest.Server, key []byte) (int, string) {
		t.Helper()
		resp, err := http.PostForm(ts.URL+"/link/call", url.Values{"token": {notify.MintLink(key, link)}})
		require.NoError(t, err)
		defer resp.Body.Close()
		var v linkCallView
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v.Tool
	}
	during, after := serve(oldKey), serve(nil)
	for _, c := range []struct {
		name string
		ts   *httptest.Server
		key  []byte
		want int
	}{
		{"old link during the window", during, oldKey, http.StatusOK},
		{"new link during the window", during, newKey, http.StatusOK},
		{"a stranger's link during the window", during, stranger, http.StatusForbidden},
		{"old link after the window", after, oldKey, http.StatusForbidden},
		{"new link after the window", after, newKey, http.StatusOK},
	} {
		code, tool := read(c.ts, c.key)
		require.Equal(t, c.want, code, c.name)
		if c.want == http.StatusOK {
			require.Equal(t, "edit_file", tool, c.name)
		}
	}
}
