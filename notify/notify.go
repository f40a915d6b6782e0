// Package notify sends the webhooks of waits (N1) and mints and verifies the
// signed approve and deny links they carry (N2). The round starts one
// notification workflow (Workflow) per event of a wait; the workflow runs
// one activity (Notifier.Post) that POSTs the event to every URL of the
// session, retried with backoff for NOTIFY_RETRY.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools/secrets"
)

// Event types (N1).
const (
	TypeWaiting  = "waiting"
	TypeReminder = "reminder"
	TypeDecided  = "decided"
	TypeExpired  = "expired"
)

// Names of the notification workflow and its activity.
const (
	WorkflowName = "ToolroundNotify"
	ActivityPost = "NotifyPost"
)

// WorkflowID is the id of the notification of one event of a wait:
// notify/<wait_id>/<type>, and for reminders notify/<wait_id>/reminder-<n>.
// It is also the webhook's Idempotency-Key.
func WorkflowID(waitID, typ string, n int) string {
	if typ == TypeReminder {
		return "notify/" + waitID + "/" + typ + "-" + strconv.Itoa(n)
	}
	return "notify/" + waitID + "/" + typ
}

// Event is what the round knows of one event of a wait: the notification
// workflow's input, recorded in the round's history. Its text comes from
// the round's calls, whose store_secret arguments the client sealed.
type Event struct {
	Type         string    `json:"type"`
	WorkflowID   string    `json:"workflow_id"`
	SessionID    string    `json:"session_id"`
	CallID       string    `json:"call_id"`
	ApprovalID   string    `json:"approval_id"`
	WaitID       string    `json:"wait_id"`
	Kind         string    `json:"kind"`
	Tool         string    `json:"tool"`
	Summary      string    `json:"summary"`
	Reason       string    `json:"reason"`
	WaitingSince time.Time `json:"waiting_since"`
	Deadline     time.Time `json:"deadline"`
	// Retry bounds how long the POST is retried (NOTIFY_RETRY, recorded in
	// the round's snapshot).
	Retry time.Duration `json:"retry"`
}

// decides reports whether the wait takes an approve or deny (a confirm or
// limit wait): only those get approve and deny links.
func (e Event) decides() bool { return e.Kind == "confirm" || e.Kind == "limit" }

// Links are the console's pages for the wait.
type Links struct {
	Approve string `json:"approve,omitempty"`
	Deny    string `json:"deny,omitempty"`
	Open    string `json:"open,omitempty"`
}

// Payload is the JSON body of a webhook (N1).
type Payload struct {
	Type         string    `json:"type"`
	WorkflowID   string    `json:"workflow_id"`
	SessionID    string    `json:"session_id"`
	CallID       string    `json:"call_id"`
	ApprovalID   string    `json:"approval_id"`
	WaitID       string    `json:"wait_id"`
	Tool         string    `json:"tool"`
	Summary      string    `json:"summary"`
	Reason       string    `json:"reason"`
	WaitingSince time.Time `json:"waiting_since"`
	Deadline     time.Time `json:"deadline"`
	Links        Links     `json:"links"`
}

// MaxText bounds the summary and the reason, in characters.
const MaxText = 300

// Clean is model- or server-supplied text made safe for a receiver that
// renders it: control characters become spaces, other hidden characters
// (bidi overrides, zero-width and tag characters: text.Hidden) are written
// as \uXXXX, &, < and > are escaped (as
// HTML and Slack's mrkdwn expect), then the text is cut so that what is
// sent, its escapes included, is at most MaxText characters; an escape is
// never cut in half.
func Clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	escaped := textEscaper.Replace(text.Visible(s))
	if utf8.RuneCountInString(escaped) <= MaxText {
		return escaped
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		e := textEscaper.Replace(text.Visible(string(r)))
		k := utf8.RuneCountInString(e)
		if n+k > MaxText-1 { // room for the ellipsis
			break
		}
		b.WriteString(e)
		n += k
	}
	return b.String() + "…"
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Sign is the webhook's signature over "<timestamp>.<body>":
// "sha256=" and the hex HMAC-SHA256 keyed with NOTIFY_SECRET.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Headers of a webhook.
const (
	HeaderTimestamp   = "X-Toolround-Timestamp"
	HeaderSignature   = "X-Toolround-Signature"
	HeaderIdempotency = "Idempotency-Key"
)

// MaxAge is how old a timestamp receivers accept (N1).
const MaxAge = 5 * time.Minute

// Verify is what a receiver checks: the signature over the timestamp and
// body, and a timestamp at most MaxAge old.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("notify: %s %q is not a Unix time", HeaderTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxAge || d < -MaxAge {
		return fmt.Errorf("notify: %s is %s away from now, more than %s", HeaderTimestamp, d.Round(time.Second), MaxAge)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(h.Get(HeaderSignature))) {
		return fmt.Errorf("notify: bad %s", HeaderSignature)
	}
	return nil
}

// Route sends the webhooks of the sessions that match Pattern (path.Match)
// to URLs.
type Route struct {
	Pattern string
	URLs    []string
}

// Config is the worker's notification settings.
type Config struct {
	// URLs is NOTIFY_URL, comma-separated: where every session's webhooks
	// go unless a route matches it.
	URLs []string
	// Routes is NOTIFY_ROUTES, `PATTERN=URL[,URL]` entries separated by
	// `;`: the first whose pattern matches the session picks its URLs.
	Routes []Route
	// Secret is NOTIFY_SECRET, the key of the signature. Empty: unsigned.
	Secret string
	// Format is NOTIFY_FORMAT: "json" (default) or "slack".
	Format string
	// Retry is NOTIFY_RETRY: how long a webhook is retried. Default 24h.
	Retry time.Duration
	// ConsoleURL is CONSOLE_URL, the console's base URL for links.
	ConsoleURL string
	// Approver is NOTIFY_APPROVER, the console token name links decide as.
	Approver string
	// LinkKey is the NOTIFY_LINK_KEY key that signs links (nil: no links).
	LinkKey []byte
	// Covers reports whether Approver's console token covers a session;
	// nil: no links.
	Covers func(session string) bool
	// Client posts the webhooks; nil: a client with a 30 s timeout.
	Client *http.Client
}

// Environment variables of the configuration.
const (
	EnvURL         = "NOTIFY_URL"
	EnvRoutes      = "NOTIFY_ROUTES"
	EnvSecret      = "NOTIFY_SECRET"
	EnvFormat      = "NOTIFY_FORMAT"
	EnvRetry       = "NOTIFY_RETRY"
	EnvApprover    = "NOTIFY_APPROVER"
	EnvLinkKey     = "NOTIFY_LINK_KEY"
	EnvLinkKeyFile = "NOTIFY_LINK_KEY_FILE"
	// EnvLinkKeyPrevious holds the link key being rotated out.
	EnvLinkKeyPrevious = "NOTIFY_LINK_KEY_PREVIOUS"
	EnvConsoleURL      = "CONSOLE_URL"
)

// DefaultRetry is NOTIFY_RETRY's default.
const DefaultRetry = 24 * time.Hour

// ConfigFromEnv reads the configuration but the link key and Covers, which
// the engine fills in (LinkKeyConfig, the console's tokens).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{Secret: getenv(EnvSecret), Approver: strings.TrimSpace(getenv(EnvApprover)), Retry: DefaultRetry}
	var err error
	if c.URLs, err = parseURLs(EnvURL, getenv(EnvURL)); err != nil {
		return c, err
	}
	for _, entry := range strings.Split(getenv(EnvRoutes), ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		pat, urls, ok := strings.Cut(entry, "=")
		pat = strings.TrimSpace(pat)
		if !ok || pat == "" {
			return c, fmt.Errorf("%s: entry %q: want PATTERN=URL[,URL]", EnvRoutes, entry)
		}
		if _, err := path.Match(pat, ""); err != nil {
			return c, fmt.Errorf("%s: pattern %q: %w", EnvRoutes, pat, err)
		}
		r := Route{Pattern: pat}
		if r.URLs, err = parseURLs(EnvRoutes, urls); err != nil {
			return c, err
		}
		if len(r.URLs) == 0 {
			return c, fmt.Errorf("%s: pattern %q names no URL", EnvRoutes, pat)
		}
		c.Routes = append(c.Routes, r)
	}
	switch c.Format = strings.TrimSpace(getenv(EnvFormat)); c.Format {
	case "":
		c.Format = "json"
	case "json", "slack":
	default:
		return c, fmt.Errorf("%s=%q: want json or slack", EnvFormat, c.Format)
	}
	if v := strings.TrimSpace(getenv(EnvRetry)); v != "" {
		d, err := time.ParseDuration(v)
		if n, nerr := strconv.Atoi(v); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d < time.Second || d > 30*24*time.Hour {
			return c, fmt.Errorf("%s=%q: want a duration from 1s to 720h, such as 24h", EnvRetry, v)
		}
		c.Retry = d
	}
	if v := strings.TrimSpace(getenv(EnvConsoleURL)); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%s=%q: want an http or https URL", EnvConsoleURL, v)
		}
		c.ConsoleURL = strings.TrimRight(v, "/")
	}
	return c, nil
}

func parseURLs(name, v string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: %q is not an http or https URL", name, redactURL(s))
		}
		out = append(out, s)
	}
	return out, nil
}

// redactURL keeps a URL's scheme and host only: webhook URLs often hold a
// secret in their path (Slack's do).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// Enabled reports whether any webhook is configured: what the round
// records in its snapshot.
func (c Config) Enabled() bool { return len(c.URLs) > 0 || len(c.Routes) > 0 }

// urlsFor are the webhook URLs of a session.
func (c Config) urlsFor(session string) []string {
	for _, r := range c.Routes {
		if ok, _ := path.Match(r.Pattern, session); ok {
			return r.URLs
		}
	}
	return c.URLs
}

// links are the event's console links: open for every wait; approve and
// deny for a decision wait, when the approver covers the session and a
// link key and console URL are set.
func (c Config) links(e Event, notifyID string) Links {
	if c.ConsoleURL == "" {
		return Links{}
	}
	l := Links{Open: c.ConsoleURL + "/calls/" + e.WorkflowID}
	if e.Type == TypeDecided || e.Type == TypeExpired || !e.decides() || c.LinkKey == nil || c.Approver == "" || c.Covers == nil || !c.Covers(e.SessionID) {
		return l
	}
	mint := func(decision string) string {
		t := Link{WorkflowID: e.WorkflowID, CallID: e.CallID, WaitID: e.WaitID, Decision: decision, By: c.Approver,
			Expires: e.Deadline.Unix(), Nonce: nonce(c.LinkKey, notifyID, decision)}
		return c.ConsoleURL + "/link#" + MintLink(c.LinkKey, t)
	}
	l.Approve, l.Deny = mint(DecisionApprove), mint(DecisionDeny)
	return l
}

// Body is the webhook's body for e in the configured format.
func (c Config) Body(e Event, notifyID string) ([]byte, error) {
	p := Payload{
		Type: e.Type, WorkflowID: e.WorkflowID, SessionID: e.SessionID, CallID: e.CallID, ApprovalID: e.ApprovalID,
		WaitID: e.WaitID, Tool: e.Tool, Summary: Clean(e.Summary), Reason: Clean(e.Reason),
		WaitingSince: e.WaitingSince.UTC(), Deadline: e.Deadline.UTC(), Links: c.links(e, notifyID),
	}
	if c.Format == "slack" {
		return json.Marshal(slackBody(p))
	}
	return json.Marshal(p)
}

// slackBody is a Slack incoming-webhook message: the model's and server's
// text only in plain_text objects, and no link but the console's page of
// the call (signed links stay out of a channel's history).
func slackBody(p Payload) map[string]any {
	head := fmt.Sprintf("%s: %s in %s (%s)", p.Type, p.Tool, p.SessionID, p.CallID)
	plain := func(s string) map[string]any { return map[string]any{"type": "plain_text", "text": s, "emoji": false} }
	blocks := []any{
		map[string]any{"type": "section", "text": plain(head)},
	}
	if p.Summary != "" {
		blocks = append(blocks, map[string]any{"type": "section", "text": plain(p.Summary)})
	}
	if p.Reason != "" {
		blocks = append(blocks, map[string]any{"type": "section", "text": plain(p.Reason)})
	}
	if p.Links.Open != "" {
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "text": plain("Open in the console"), "url": p.Links.Open},
		}})
	}
	return map[string]any{"text": html.UnescapeString(strings.NewReplacer("<", "", ">", "").Replace(head)), "blocks": blocks}
}

// Notifier posts webhooks: the activity of the notification workflow.
type Notifier struct {
	Config Config
	// Now is the clock of the signature's timestamp; nil: time.Now.
	Now func() time.Time
	// Secrets, when set, are the sessions' stored secrets: a value that
	// the model wrote out in a call's arguments, or that a reason repeats,
	// is redacted from the body before it is sent (T9).
	Secrets SecretValues
}

// SecretValues reads a session's stored secrets (secrets.Store does).
type SecretValues interface {
	Names(ctx context.Context, sessionID string) ([]string, error)
	Get(ctx context.Context, sessionID, name string) (string, error)
}

// redact replaces the session's stored values in the event's model- and
// server-supplied text with [secret:NAME]. A store that does not answer
// fails the attempt, which is retried: nothing goes out unredacted.
func (n *Notifier) redact(ctx context.Context, e *Event) error {
	if n.Secrets == nil || e.SessionID == "" {
		return nil
	}
	names, err := n.Secrets.Names(ctx, e.SessionID)
	if err != nil {
		return fmt.Errorf("notify: the session's secrets, to redact the body: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	values := make(map[string]string, len(names))
	for _, name := range names {
		v, err := n.Secrets.Get(ctx, e.SessionID, name)
		if err != nil {
			return fmt.Errorf("notify: the session's secrets, to redact the body: %w", err)
		}
		values[name] = v
	}
	r := secrets.NewRedactor(values)
	e.Summary, e.Reason, e.Tool = r.Redact(e.Summary), r.Redact(e.Reason), r.Redact(e.Tool)
	return nil
}

// Post sends the event to every URL of its session, signed, under the
// notification's id as Idempotency-Key. A URL that fails fails the
// attempt, and the workflow retries it; a receiver dedupes by the key.
func (n *Notifier) Post(ctx context.Context, e Event, notifyID string) error {
	c := n.Config
	if err := n.redact(ctx, &e); err != nil {
		return err
	}
	body, err := c.Body(e, notifyID)
	if err != nil {
		return err
	}
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	now := time.Now
	if n.Now != nil {
		now = n.Now
	}
	var failed []string
	for _, u := range c.urlsFor(e.SessionID) {
		if err := post(ctx, client, c.Secret, u, notifyID, body, now()); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("notify: %s", strings.Join(failed, "; "))
	}
	return nil
}

func post(ctx context.Context, client *http.Client, secret, u, key string, body []byte, now time.Time) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %v", redactURL(u), err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotency, key)
	req.Header.Set(HeaderTimestamp, ts)
	if secret != "" {
		req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s", redactURL(u), errText(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d", redactURL(u), resp.StatusCode)
	}
	return nil
}

// errText is err without the URL that net/http puts in it.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
