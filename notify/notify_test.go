package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCleanEscapesAndCutsModelText(t *testing.T) {
	got := Clean("<script>alert(1)</script> & <@here>\x1b[31m\nnext")
	for _, bad := range []string{"<", ">", "\x1b", "\n"} {
		if strings.Contains(got, bad) {
			t.Errorf("Clean kept %q: %q", bad, got)
		}
	}
	if !strings.Contains(got, "&lt;script&gt;") || !strings.Contains(got, "&amp;") {
		t.Errorf("Clean did not escape: %q", got)
	}

	long := strings.Repeat("é", 1000)
	got = Clean(long)
	if n := utf8.RuneCountInString(got); n != MaxText {
		t.Errorf("Clean of 1000 characters has %d characters, want %d", n, MaxText)
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("a cut text does not end with an ellipsis: %q", got[len(got)-8:])
	}
	// The cut comes after escaping: the value sent is at most MaxText
	// characters, its escapes included, and no escape is cut in half (N1).
	got = Clean(strings.Repeat("<", 1000))
	if want := strings.Repeat("&lt;", (MaxText-1)/4) + "…"; got != want {
		t.Errorf("Clean of 1000 '<' is %d characters %q..., want %d", utf8.RuneCountInString(got), got[:12], utf8.RuneCountInString(want))
	}
	for _, s := range []string{strings.Repeat("a", MaxText-1) + "&", strings.Repeat("a&<>", 200), strings.Repeat("é>", 400)} {
		got := Clean(s)
		if n := utf8.RuneCountInString(got); n > MaxText {
			t.Errorf("Clean gives %d characters, at most %d are sent", n, MaxText)
		}
		if u := html.UnescapeString(strings.TrimSuffix(got, "…")); !strings.HasPrefix(s, u) {
			t.Errorf("the cut text is not the start of the text: an escape was cut in half: %q", got[len(got)-12:])
		}
	}
	if s := strings.Repeat("a", MaxText); Clean(s) != s {
		t.Errorf("a text of exactly %d characters was changed", MaxText)
	}
	// Hidden characters are shown, not sent as themselves (T14), and the
	// cut never halves their escape.
	if got := Clean("refund \u202e001$ zw\u200b \U000E0041"); got != `refund \u202e001$ zw\u200b \U000e0041` {
		t.Errorf("Clean of hidden characters: %q", got)
	}
	if got := Clean(strings.Repeat("a", MaxText-3) + "\u202e"); got != strings.Repeat("a", MaxText-3)+"…" {
		t.Errorf("an escape was cut in half: %q", got[len(got)-12:])
	}
	if got := Clean("ok\xffok"); !utf8.ValidString(got) {
		t.Errorf("Clean kept invalid UTF-8: %q", got)
	}
}

func testConfig() Config {
	return Config{
		ConsoleURL: "https://console.example", Approver: "ops", LinkKey: make([]byte, 32),
		Covers: func(string) bool { return true },
	}
}

func testEvent() Event {
	return Event{
		Type: TypeWaiting, WorkflowID: "round-1", SessionID: "s1", CallID: "c1", ApprovalID: "a1", WaitID: "w1",
		Kind: "confirm", Tool: "rm_rf", Summary: "<b>delete</b> https://evil.example/x", Reason: "model <says> so",
		WaitingSince: time.Unix(1000, 0), Deadline: time.Now().Add(time.Hour),
	}
}

func TestJSONBodyCarriesCleanTextAndSignedLinks(t *testing.T) {
	c := testConfig()
	b, err := c.Body(testEvent(), "notify/w1/waiting")
	if err != nil {
		t.Fatal(err)
	}
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Summary != Clean(testEvent().Summary) || p.Reason != Clean(testEvent().Reason) {
		t.Errorf("summary %q, reason %q: not cleaned", p.Summary, p.Reason)
	}
	if !strings.HasPrefix(p.Links.Approve, "https://console.example/link#") || !strings.HasPrefix(p.Links.Deny, "https://console.example/link#") {
		t.Errorf("links %+v: want approve and deny console links", p.Links)
	}
	if p.Links.Open != "https://console.example/calls/round-1" {
		t.Errorf("open link %q", p.Links.Open)
	}
}

// walk calls f on every JSON object in v.
func walk(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, x := range v {
			walk(x, f)
		}
	case []any:
		for _, x := range v {
			walk(x, f)
		}
	}
}

func TestSlackBodyKeepsModelTextPlainAndOnlyTheConsoleLink(t *testing.T) {
	c := testConfig()
	c.Format = "slack"
	e := testEvent()
	b, err := c.Body(e, "notify/w1/waiting")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if s, _ := m["text"].(string); !strings.Contains(s, "rm_rf") || !strings.Contains(s, "waiting") {
		t.Errorf("text %q: want the event type and tool", m["text"])
	}
	if blocks, _ := m["blocks"].([]any); len(blocks) == 0 {
		t.Fatalf("no blocks: %s", b)
	}
	for k := range m {
		if k != "text" && k != "blocks" {
			t.Errorf("extra top-level field %q", k)
		}
	}
	// Every text object is plain_text, and the model's text appears only in
	// them (never in mrkdwn, never in a url).
	sawSummary, sawReason := false, false
	var urls []string
	walk(m["blocks"], func(o map[string]any) {
		if u, ok := o["url"].(string); ok {
			urls = append(urls, u)
		}
		if o["type"] == "mrkdwn" {
			t.Errorf("mrkdwn object: %v", o)
		}
		if txt, ok := o["text"].(map[string]any); ok {
			if txt["type"] != "plain_text" {
				t.Errorf("text object of type %v: %v", txt["type"], txt)
			}
			s, _ := txt["text"].(string)
			sawSummary = sawSummary || s == Clean(e.Summary)
			sawReason = sawReason || s == Clean(e.Reason)
		}
	})
	if !sawSummary || !sawReason {
		t.Errorf("summary or reason not in a plain_text object: %s", b)
	}
	if len(urls) != 1 || urls[0] != "https://console.example/calls/round-1" {
		t.Errorf("urls %v: want only the console's page of the call", urls)
	}
	if strings.Contains(string(b), "/link#") {
		t.Errorf("a signed link went to Slack: %s", b)
	}
	if strings.Contains(m["text"].(string), "<") {
		t.Errorf("text %q holds a Slack link markup", m["text"])
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRoutesMapSessionPatternsToURLs(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{
		EnvURL:    "https://default.example/a, https://default.example/b",
		EnvRoutes: " prod-*=https://prod.example/h ; team/?=https://t.example/1,https://t.example/2;",
	}))
	if err != nil {
		t.Fatal(err)
	}
	for session, want := range map[string]string{
		"prod-eu": "https://prod.example/h",
		"team/x":  "https://t.example/1,https://t.example/2",
		"team/xy": "https://default.example/a,https://default.example/b",
		"dev":     "https://default.example/a,https://default.example/b",
	} {
		if got := strings.Join(c.urlsFor(session), ","); got != want {
			t.Errorf("session %q goes to %q, want %q", session, got, want)
		}
	}
	if !c.Enabled() {
		t.Error("not Enabled with URLs and routes")
	}
}

func TestBadNotifyConfigIsAClearError(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvRoutes: "prod-*"}, "want PATTERN=URL"},
		{map[string]string{EnvRoutes: "=https://x.example"}, "want PATTERN=URL"},
		{map[string]string{EnvRoutes: "[=https://x.example"}, `pattern "["`},
		{map[string]string{EnvRoutes: "a=,"}, "names no URL"},
		{map[string]string{EnvRoutes: "a=ftp://x.example/secret-path"}, "not an http or https URL"},
		{map[string]string{EnvURL: "hooks.slack.com/services/T/B/SECRET"}, "not an http or https URL"},
		{map[string]string{EnvFormat: "xml"}, "want json or slack"},
		{map[string]string{EnvRetry: "forever"}, "want a duration"},
		{map[string]string{EnvRetry: "0s"}, "want a duration"},
		{map[string]string{EnvConsoleURL: "console"}, "want an http or https URL"},
	} {
		_, err := ConfigFromEnv(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "secret-path") {
			t.Errorf("%v: error %q shows the URL's path", tc.env, err)
		}
	}
	c, err := ConfigFromEnv(env(map[string]string{EnvRetry: "90"}))
	if err != nil || c.Retry != 90*time.Second || c.Format != "json" {
		t.Errorf("NOTIFY_RETRY=90: %v %v %q", c.Retry, err, c.Format)
	}
}

func signed(secret string, body []byte, at time.Time) http.Header {
	h := http.Header{}
	ts := strconv.FormatInt(at.Unix(), 10)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, Sign(secret, ts, body))
	return h
}

func TestSignatureIsOverTimestampAndBody(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"type":"waiting"}`)
	if got, want := Sign("k", "1700000000", body), "sha256="; !strings.HasPrefix(got, want) || len(got) != len(want)+64 {
		t.Fatalf("signature %q: want sha256=<64 hex>", got)
	}
	// The signed message is "<timestamp>.<body>", as a receiver computes it.
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte("1700000000." + string(body)))
	if got, want := Sign("k", "1700000000", body), "sha256="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	if err := Verify("k", signed("k", body, now), body, now.Add(MaxAge-time.Second)); err != nil {
		t.Fatalf("a fresh, well-signed body is refused: %v", err)
	}
	if err := Verify("k", signed("k", body, now), []byte(`{"type":"decided"}`), now); err == nil {
		t.Error("Verify accepts a changed body")
	}
	if err := Verify("other", signed("k", body, now), body, now); err == nil {
		t.Error("Verify accepts another secret")
	}
	if err := Verify("k", signed("k", body, now), body, now.Add(MaxAge+time.Second)); err == nil {
		t.Error("Verify accepts a timestamp older than 5 minutes")
	}
	if err := Verify("k", signed("k", body, now), body, now.Add(-MaxAge-time.Second)); err == nil {
		t.Error("Verify accepts a timestamp more than 5 minutes in the future")
	}
	if err := Verify("k", signed("k", body, now.Add(24*time.Hour)), body, now); err == nil {
		t.Error("Verify accepts a well-signed timestamp a day in the future")
	}
	h := signed("k", body, now)
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10))
	if err := Verify("k", h, body, now); err == nil {
		t.Error("Verify accepts a changed timestamp")
	}
	h.Set(HeaderTimestamp, "soon")
	if err := Verify("k", h, body, now); err == nil || !strings.Contains(err.Error(), "not a Unix time") {
		t.Errorf("a bad timestamp: %v", err)
	}
}

// fakeSecrets is a session's stored secrets for Notifier.Secrets.
type fakeSecrets struct {
	values map[string]string
	err    error
}

func (f fakeSecrets) Names(context.Context, string) ([]string, error) {
	var out []string
	for k := range f.values {
		out = append(out, k)
	}
	return out, f.err
}

func (f fakeSecrets) Get(_ context.Context, _, name string) (string, error) {
	return f.values[name], f.err
}

// TestPostRedactsStoredValues: a stored value that a summary or a reason
// holds in plain text is redacted before the body is sent (T9); a secret
// store that does not answer fails the attempt instead of sending it.
func TestPostRedactsStoredValues(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
	}))
	defer srv.Close()
	e := Event{Type: TypeWaiting, SessionID: "s1", CallID: "c1", Tool: "run_command", Summary: "curl -H 'token: tok-1234567890'", Reason: "it sends tok-1234567890"}
	n := &Notifier{Config: Config{URLs: []string{srv.URL}, Secret: "k"}, Secrets: fakeSecrets{values: map[string]string{"TOKEN": "tok-1234567890"}}}
	if err := n.Post(context.Background(), e, "notify/w/waiting"); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || strings.Contains(bodies[0], "tok-1234567890") || !strings.Contains(bodies[0], "[secret:TOKEN]") {
		t.Fatalf("the body holds the stored value or no redaction: %v", bodies)
	}
	n.Secrets = fakeSecrets{err: errors.New("redis down")}
	if err := n.Post(context.Background(), e, "notify/w/waiting"); err == nil || !strings.Contains(err.Error(), "redis down") {
		t.Fatalf("a store that does not answer: %v", err)
	}
	if len(bodies) != 1 {
		t.Fatal("a body went out without its redaction")
	}
}
