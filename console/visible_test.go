package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/files"
)

// hiddenRunes are characters that text an attacker controls (a web page,
// a file, a tool's result the model read) can carry into a call's
// arguments to make what a person sees differ from what runs: bidi
// overrides and isolates reorder it, zero-width and tag characters hide
// words in it, C1 controls and DEL act on a terminal.
var hiddenRunes = []rune{
	0x202E, 0x202D, 0x202A, 0x202B, 0x202C, 0x2066, 0x2067, 0x2068, 0x2069,
	0x200E, 0x200F, 0x061C, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD,
	0x009B, 0x0085, 0x007F, 0x180E, 0x3164, 0x115F, 0xFE0F, 0xE0041, 0xE0100, 0xF0000,
}

// TestHiddenCharactersAreShownT14: every hidden character in a waiting
// call's arguments, the change it makes and the file it replaces appears
// on the card and on the link page as a visible escape, never as itself.
func TestHiddenCharactersAreShownT14(t *testing.T) {
	for _, r := range hiddenRunes {
		hidden := string(r)
		name := "U+" + strings.ToUpper(strings.TrimPrefix(escapeRune(r), `\u`))
		t.Run(name, func(t *testing.T) {
			key := make([]byte, 32)
			f := &previewFake{fakeBackend: newFake(), files: map[string]files.Preview{
				"notes.txt": {Exists: true, Size: 9, Lines: []string{"kept" + hidden + "line"}},
			}}
			args := `{"path":"notes.txt","new_text":"rm -rf ~ #` + hidden + `safe"}`
			f.inbox[0].Pending[0].Arguments = args
			s, err := New(Options{Backend: f, LinkKey: key, Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
			require.NoError(t, err)
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			c := browser(t)
			signIn(t, ts, c, approverToken)
			for _, page := range []string{"/", "/calls/toolround/s1/r1/1?call=call_1"} {
				resp, err := c.Get(ts.URL + page)
				require.NoError(t, err)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.NotContains(t, string(b), hidden, "%s shows the character itself", page)
				require.Contains(t, string(b), "#"+escapeRune(r)+"safe", "%s: the arguments and the diff", page)
				require.Contains(t, string(b), "kept"+escapeRune(r)+"line", "%s: the preview", page)
			}
			var v linkCallView
			l := notify.Link{WorkflowID: "toolround/s1/r1/1", CallID: "call_1", Decision: notify.DecisionApprove, By: "alice",
				Expires: time.Now().Add(time.Hour).Unix(), Nonce: "n1"}
			code, err := postJSON(t, ts.URL+"/link/call", url.Values{"token": {notify.MintLink(key, l)}}, &v)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
			require.NotContains(t, v.Arguments, hidden)
			require.Contains(t, v.Arguments, "#"+escapeRune(r)+"safe")
			require.NotNil(t, v.Preview)
			require.Equal(t, []string{"kept" + escapeRune(r) + "line"}, v.Preview.Lines)
		})
	}
}

// escapeRune is how a hidden character is shown: its code point as Go and
// JSON write it.
func escapeRune(r rune) string {
	if r > 0xFFFF {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// TestHiddenCharactersInQuestionsAndServerRequestsAreShownT14: what a
// model asks a person (ask_user's questions), what an MCP server asks
// (its message, its form's titles and options) and a user tool's subject
// show their hidden characters too.
func TestHiddenCharactersInQuestionsAndServerRequestsAreShownT14(t *testing.T) {
	const rlo = "\u202e"
	f := newFake()
	p := &f.inbox[0].Pending[0]
	p.Subject = "orders/" + rlo + "fdp.exe"
	s, err := New(Options{Backend: f, Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c := browser(t)
	signIn(t, ts, c, approverToken)
	page := func() string {
		t.Helper()
		resp, err := c.Get(ts.URL + "/calls/toolround/s1/r1/1?call=call_1")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return string(b)
	}
	body := page()
	require.NotContains(t, body, rlo)
	require.Contains(t, body, `orders/\u202efdp.exe`)

	p.Kind, p.Questions = KindAnswer, []string{"Approve the refund? " + rlo + "on"}
	body = page()
	require.NotContains(t, body, rlo)
	require.Contains(t, body, `Approve the refund? \u202eon`)

	p.Kind, p.Questions = round.KindElicitation, nil
	p.Elicitation = &round.Elicitation{Server: "s", Mode: "form", Message: "Sign " + rlo + "here",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"string","title":"Pay` + rlo + `","enum":["a` + rlo + `"]}}}`)}
	body = page()
	// An option's value is what the form sends back to the server, as the
	// server wrote it; what a person reads is escaped.
	require.NotContains(t, regexp.MustCompile(`value="[^"]*"`).ReplaceAllString(body, ""), rlo)
	require.Contains(t, body, `Sign \u202ehere`)
	require.Contains(t, body, `Pay\u202e`)
	require.Contains(t, body, `a\u202e</option>`)
}
