package console

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/tools/files"
)

// previewFake is the fake backend with a FilePreviewer that answers from
// a table of paths, and remembers what it was asked.
type previewFake struct {
	*fakeBackend
	mu     sync.Mutex
	asked  []string // session|path|placed
	files  map[string]files.Preview
	failed error
}

func (p *previewFake) PreviewFile(_ context.Context, session, path string, placed bool) (files.Preview, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	placedS := "shared"
	if placed {
		placedS = "host"
	}
	p.asked = append(p.asked, session+"|"+path+"|"+placedS)
	if p.failed != nil {
		return files.Preview{}, p.failed
	}
	return p.files[path], nil
}

// TestCardAndLinkShowTheFileAnOverwriteReplacesT14: a waiting edit_file
// without old_text shows, on the card and on the link page, the size and
// first lines of the file it would replace, read when the page is shown
// (escaped as text); a key file shows only its size; a preview that fails
// says it is unavailable and why; an agent token's page and a call with
// old_text read none.
func TestCardAndLinkShowTheFileAnOverwriteReplacesT14(t *testing.T) {
	key := make([]byte, 32)
	f := &previewFake{fakeBackend: newFake(), files: map[string]files.Preview{
		"notes.txt": {Exists: true, Size: 42, Lines: []string{"first <line>", "second line"}, More: true},
		".env":      {Exists: true, Size: 17, KeyFile: true},
	}}
	f.inbox[0].Pending[0].Arguments = `{"path":"notes.txt","new_text":"all new\n"}`
	s, err := New(Options{Backend: f, LinkKey: key, Placement: "host", Tokens: []Token{
		{Secret: approverToken, Name: "alice", Role: RoleApprover}, {Secret: agentToken, Name: "bot", Role: RoleAgent}}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c := browser(t)
	signIn(t, ts, c, approverToken)
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(ts.URL + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		return string(b)
	}

	for _, page := range []string{"/", "/sessions/s1", "/calls/toolround/s1/r1/1?call=call_1"} {
		body := get(page)
		require.Contains(t, body, "The file as it is now", page)
		require.Contains(t, body, "42 bytes", page)
		require.Contains(t, body, "first &lt;line&gt;\nsecond line\n", page)
		require.Contains(t, body, "of more", page)
	}
	require.Contains(t, f.asked, "s1|notes.txt|host", "the workspace's host is asked under placement")

	link := notify.Link{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", Decision: notify.DecisionApprove, By: "alice",
		Expires: time.Now().Add(time.Hour).Unix(), Nonce: "n1"}
	readLink := func() linkCallView {
		t.Helper()
		var v linkCallView
		code, err := postJSON(t, ts.URL+"/link/call", url.Values{"token": {notify.MintLink(key, link)}}, &v)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		return v
	}
	v := readLink()
	require.NotNil(t, v.Preview)
	require.Equal(t, filePreview{Exists: true, Size: 42, Lines: []string{"first <line>", "second line"}, More: true}, *v.Preview)

	f.inbox[0].Pending[0].Arguments = `{"path":".env","new_text":"A=1\n"}`
	body := get("/")
	require.Contains(t, body, "17 bytes · a key file: only its size is shown")
	require.Equal(t, filePreview{Exists: true, Size: 17, KeyFile: true}, *readLink().Preview)

	f.failed = errors.New("no worker of the workspace's host answered within 5s")
	body = get("/")
	require.Contains(t, body, "The preview is unavailable: no worker of the workspace&#39;s host answered within 5s")
	require.Equal(t, "no worker of the workspace's host answered within 5s", readLink().Preview.Unavailable)

	// An agent token sees the card but decides nothing there: no preview.
	f.inbox[0].Pending[0].Arguments = `{"path":"notes.txt","new_text":"all new\n"}`
	f.asked = nil
	agent := browser(t)
	signIn(t, ts, agent, agentToken)
	resp, err := agent.Get(ts.URL + "/calls/toolround/s1/r1/1?call=call_1")
	require.NoError(t, err)
	agentPage, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(agentPage), "call_1")
	require.NotContains(t, string(agentPage), "The file as it is now")
	require.Empty(t, f.asked, "no preview is read for an agent token")

	f.failed = nil
	f.asked = nil
	f.inbox[0].Pending[0].Arguments = `{"path":"notes.txt","old_text":"a","new_text":"b"}`
	body = get("/")
	require.NotContains(t, body, "The file as it is now")
	require.Nil(t, readLink().Preview)
	require.Empty(t, f.asked, "a call that replaces text in a file reads no preview")
	require.Empty(t, f.decisions, "showing decides nothing")
}

func postJSON(t *testing.T, u string, form url.Values, v any) (int, error) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}
