package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

const deskSchema = `{"type":"object","required":["date"],"properties":{
	"date":{"type":"string","description":"the day"},
	"seats":{"type":"integer","minimum":1,"default":2},
	"window":{"type":"boolean"},
	"meal":{"type":"string","enum":["veg","fish"]},
	"hero":{"type":"string","oneOf":[{"const":"h1","title":"Superman"},{"const":"h2","title":"Wonder Woman"}],"default":"h2"},
	"sides":{"type":"array","items":{"anyOf":[{"const":"s1","title":"Salad"},{"const":"s2","title":"Fries"}]},"default":["s1"]}}}`

// TestElicitationOnThePage: a call whose MCP server asks for input shows
// the server's text as text and a form from the requested schema (a url
// request: its URL and host in full, never a link); the form's answer
// reaches the round typed as the schema says (E1).
func TestElicitationOnThePage(t *testing.T) {
	ts, f := newTestServer(t)
	c := browser(t)
	csrf := signIn(t, ts, c, approverToken)
	now := time.Now()
	f.inbox[0].Pending = append(f.inbox[0].Pending,
		PendingCall{CallID: "e1", Tool: "mcp_desk_book", Kind: round.KindElicitation, WaitID: "w1", Arguments: `{}`, Since: now, Deadline: now.Add(time.Hour),
			Elicitation: &round.Elicitation{Server: "desk", Mode: "form", Message: "<b>When?</b>", RequestedSchema: json.RawMessage(deskSchema)}},
		PendingCall{CallID: "e2", Tool: "mcp_desk_visit", Kind: round.KindElicitation, WaitID: "w2", Arguments: `{}`, Since: now, Deadline: now.Add(time.Hour),
			Elicitation: &round.Elicitation{Server: "desk", Mode: "url", Message: "Sign here", URL: "https://forms.example.com/sign?id=42", Host: "forms.example.com"}})
	resp, err := c.Get(ts.URL + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(b)
	require.Contains(t, page, "MCP server <code>desk</code> asks")
	require.Contains(t, page, "&lt;b&gt;When?&lt;/b&gt;", "the server's text is text")
	require.NotContains(t, page, "<b>When?</b>")
	require.Regexp(t, `<input type="text" id="[^"]+-f-date" name="field.date" value="" required`, page)
	require.Regexp(t, `<input type="number" id="[^"]+-f-seats" name="field.seats" value="2" step="1"`, page)
	require.Regexp(t, `<input type="checkbox" id="[^"]+-f-window" name="field.window"`, page)
	require.Regexp(t, `<select id="[^"]+-f-meal" name="field.meal"><option value=""></option><option value="veg">`, page)
	require.Regexp(t, `<select id="[^"]+-f-hero" name="field.hero"><option value=""></option><option value="h1">Superman</option><option value="h2" selected>Wonder Woman</option></select>`, page)
	require.Regexp(t, `<select id="[^"]+-f-sides" name="field.sides" multiple><option value="s1" selected>Salad</option><option value="s2">Fries</option></select>`, page)
	require.Contains(t, page, "<code>https://forms.example.com/sign?id=42</code>")
	require.Contains(t, page, "<strong><code>forms.example.com</code></strong>")
	require.NotContains(t, page, `href="https://forms.example.com`, "a url request is never a link")

	form := url.Values{"csrf": {csrf}, "workflow_id": {"toolround/s1/r1/1"}, "call_id": {"e1"}, "wait_id": {"w1"}, "return": {"/"},
		"action": {"accept"}, "field.date": {"2026-12-24"}, "field.seats": {"3"}, "field.window": {"on"}, "field.meal": {""}, "field.sides": {"s1", "s2"}}
	resp, err = c.PostForm(ts.URL+"/api/v1/answers", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, round.ElicitAnswer{CallID: "e1", WaitID: "w1", Action: "accept", By: "alice", Via: "console",
		Content: map[string]any{"date": "2026-12-24", "seats": int64(3), "window": true, "sides": []string{"s1", "s2"}}}, f.elicited["toolround/s1/r1/1|e1"])

	form.Set("field.seats", "three")
	resp, err = c.PostForm(ts.URL+"/api/v1/answers", form)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(b), "seats must be a whole number")

	code, body := do(t, ts, "POST", "/api/v1/answers", approverToken,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"e2","wait_id":"w2","action":"decline"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, true, body["answered"])
	require.Equal(t, "decline", f.elicited["toolround/s1/r1/1|e2"].Action)
	code, body = do(t, ts, "POST", "/api/v1/answers", approverToken,
		`{"workflow_id":"toolround/s1/r1/1","call_id":"e2","action":"decline","answers":["x"]}`)
	require.Equal(t, http.StatusBadRequest, code, body)
}
