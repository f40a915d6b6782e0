package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round/names"
)

//go:embed assets
var assets embed.FS

type pages struct {
	byName map[string]*template.Template
}

func loadPages() (*pages, error) {
	base, err := template.New("layout").Funcs(template.FuncMap{"visible": text.Visible}).ParseFS(assets, "assets/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range []string{"login", "inbox", "session", "call", "error", "mcp"} {
		t, err := template.Must(base.Clone()).ParseFS(assets, "assets/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

func assetHandler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".html") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// pageData is what every page's layout reads.
type pageData struct {
	Title, Who, Role, CSRF, Session, Return, Message string
	// Rendered is when the page was made (RFC 3339): the session page's
	// script tells replayed events from new ones by it.
	Rendered   string
	InboxCount int
	Content    any
}

const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.byName[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		s.log.Error("console: render page", "page", name, "err", err)
		http.Error(w, "page failed to render", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type pageHandler func(w http.ResponseWriter, r *http.Request, p principal)

// page needs a signed-in person; others are sent to the sign-in form.
func (s *Server) page(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.authenticate(r)
		if !ok || p.Via != "console" {
			http.Redirect(w, r, "/login?return="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(w, r, p)
	}
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", loginData{pageData{Title: "Sign in", Return: localPath(r.URL.Query().Get("return"))}})
}

type loginData struct{ pageData }

// signInForm reads a sign-in form (the token's or a sign-in link's code).
// The form has no session yet to carry a CSRF token; a cross-site post is
// refused by its Origin instead. False when it answered the request.
func signInForm(w http.ResponseWriter, r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			http.Error(w, "cross-site sign-in refused", http.StatusForbidden)
			return false
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return false
	}
	return true
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !signInForm(w, r) {
		return
	}
	ret := localPath(r.PostForm.Get("return"))
	e, ok := s.tokens.lookup(strings.TrimSpace(r.PostForm.Get("token")))
	if !ok {
		s.render(w, http.StatusUnauthorized, "login", loginData{pageData{Title: "Sign in", Return: ret, Message: "That token is not known to this console."}})
		return
	}
	id, _ := s.cookies.create(e, time.Now())
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.opts.SessionTTL / time.Second)})
	http.Redirect(w, r, ret, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	p, ok := s.authenticate(r)
	if ok && p.Via == "console" {
		if !csrfOK(p, r) {
			http.Error(w, "missing or wrong CSRF token", http.StatusForbidden)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil {
			if err := s.cookies.drop(r.Context(), c.Value); err != nil {
				s.log.Error("sign-out not recorded", "err", err)
				http.Error(w, "the sign-out could not be recorded: try again", http.StatusServiceUnavailable)
				return
			}
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *Server) base(p principal, title, ret string) pageData {
	return pageData{Title: title, Who: p.Name, Role: p.Role, CSRF: p.CSRF, Return: ret, Rendered: s.opts.Now().UTC().Format(time.RFC3339Nano)}
}

// card is one waiting call as the page shows it.
type card struct {
	WorkflowID, SessionID, Anchor, Return, CSRF string
	// RunID and Round name the round the call belongs to.
	RunID                                   string
	Round                                   int
	P                                       PendingCall
	CanDecide                               bool
	ArgsPretty                              string
	Path, DiffNote                          string
	Diff                                    []DiffLine
	Waited, Deadline, SinceISO, DeadlineISO string
	// Fields are the form of an MCP server's request (E1).
	Fields []elicitField
	// WorkspaceCode is the notice shown beside the remember control when
	// the call's command is one of a program that runs the workspace's
	// code (T11); the page's script shows it for the pattern a person
	// types, from WorkspaceCodePrograms and WorkspaceCodeTemplate.
	WorkspaceCode         string
	WorkspaceCodePrograms string
	WorkspaceCodeTemplate string
	// Preview is the file the call would overwrite, as it is now (T14).
	Preview *filePreview
	// Queue is the state of a user tool's queue, read when the page is
	// shown (Y2); nil for a built-in, or a backend that reads none.
	Queue *queueView
	// order is the call's place among its round's waiting calls.
	order int
	// Grouped: the card shows under its round's heading (the inbox), which
	// names its session.
	Grouped bool
}

// workspaceCodeTemplate is approval.WorkspaceCodeNotice with {program} for
// the program, for the page's script.
var workspaceCodeTemplate = approval.WorkspaceCodeNotice("{program}") + "."

// workspaceCodeNotice is the notice of a call whose "command" argument is
// a command over a program that runs the workspace's code, or "".
func workspaceCodeNotice(args string) string {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.Command == "" {
		return ""
	}
	if prog, ok := approval.WorkspaceCodeProgram(a.Command); ok {
		return approval.WorkspaceCodeNotice(prog) + "."
	}
	return ""
}

func (s *Server) newCard(p principal, wfID, session string, pc PendingCall, ret string) card {
	now := s.opts.Now()
	c := card{WorkflowID: wfID, SessionID: session, P: pc, Return: ret, CSRF: p.CSRF, CanDecide: p.Role == RoleApprover,
		Anchor: anchor(wfID + "|" + pc.CallID), ArgsPretty: prettyJSON(string(pc.Arguments)),
		Waited: since(now, pc.Since), SinceISO: pc.Since.UTC().Format(time.RFC3339), DeadlineISO: pc.Deadline.UTC().Format(time.RFC3339)}
	_, c.RunID, c.Round = splitWorkflowID(wfID)
	c.WorkspaceCode = workspaceCodeNotice(string(pc.Arguments))
	c.WorkspaceCodePrograms = strings.Join(approval.WorkspaceCodePrograms(), " ")
	c.WorkspaceCodeTemplate = workspaceCodeTemplate
	if e := pc.Elicitation; e != nil && e.Mode == "form" {
		c.Fields = elicitFields(e.RequestedSchema)
	}
	if !pc.Deadline.IsZero() {
		c.Deadline = pc.Deadline.UTC().Format("2006-01-02 15:04:05 UTC")
		if d := pc.Deadline.Sub(now); d > 0 {
			c.Deadline += " (in " + human(d) + ")"
		} else {
			c.Deadline += " (passed)"
		}
	}
	// A call that replaces text in a file (a "path" and a "new_text", and
	// the "old_text" it replaces, as edit_file's arguments are) shows the
	// change as a diff, whichever tool it is.
	var a struct {
		Path    string  `json:"path"`
		OldText *string `json:"old_text"`
		NewText *string `json:"new_text"`
	}
	if json.Unmarshal([]byte(pc.Arguments), &a) == nil && a.Path != "" && a.NewText != nil {
		c.Path = text.Visible(a.Path)
		old := ""
		if a.OldText != nil {
			old = *a.OldText
			c.DiffNote = "the text it replaces, once"
		} else {
			c.DiffNote = "creates or overwrites the file"
		}
		c.Diff = Diff(old, *a.NewText)
		for i := range c.Diff {
			c.Diff[i].Text = text.Visible(c.Diff[i].Text)
		}
	}
	return c
}

func prettyJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return text.Visible(s)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return s
	}
	return text.Visible(strings.TrimSuffix(b.String(), "\n"))
}

func anchor(s string) string {
	var b strings.Builder
	b.WriteString("c-")
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func since(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return human(now.Sub(t))
}

func human(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

type inboxData struct {
	pageData
	Filter string
	Cards  []card
	// Rounds are the cards by round: the round whose newest wait is the
	// newest first, its calls in call order.
	Rounds []inboxRound
}

// inboxRound is one round's waiting calls on the inbox.
type inboxRound struct {
	WorkflowID, SessionID, RunID, Anchor string
	Round                                int
	Cards                                []card
}

func (s *Server) inboxPage(w http.ResponseWriter, r *http.Request, p principal) {
	filter := r.URL.Query().Get("session")
	entries, err := s.inbox(r, p, filter)
	if errors.Is(err, ErrBadInput) {
		s.errorPage(w, r, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if err != nil {
		s.errorPage(w, r, http.StatusBadGateway, "backend", err.Error())
		return
	}
	d := inboxData{pageData: s.base(p, "Inbox", r.URL.RequestURI()), Filter: filter}
	for _, e := range entries {
		for i, pc := range e.Pending {
			c := s.newCard(p, e.WorkflowID, e.SessionID, pc, r.URL.RequestURI())
			c.order, c.Grouped = i, true
			d.Cards = append(d.Cards, c)
		}
	}
	s.withPreviews(r.Context(), d.Cards)
	s.withQueues(r.Context(), d.Cards)
	sort.SliceStable(d.Cards, func(i, j int) bool { return d.Cards[i].P.Since.After(d.Cards[j].P.Since) })
	d.InboxCount = len(d.Cards)
	d.Rounds = byRound(d.Cards)
	s.render(w, http.StatusOK, "inbox", d)
}

// byRound groups cards (newest first) by their round: the rounds in the
// order of their newest card, each round's cards in the order the round
// gave them (its calls' order).
func byRound(cards []card) []inboxRound {
	var out []inboxRound
	at := map[string]int{}
	for _, c := range cards {
		i, ok := at[c.WorkflowID]
		if !ok {
			i = len(out)
			at[c.WorkflowID] = i
			out = append(out, inboxRound{WorkflowID: c.WorkflowID, SessionID: c.SessionID, RunID: c.RunID,
				Anchor: "r-" + anchor(c.WorkflowID), Round: c.Round})
		}
		out[i].Cards = append(out[i].Cards, c)
	}
	for i := range out {
		sort.SliceStable(out[i].Cards, func(a, b int) bool { return out[i].Cards[a].order < out[i].Cards[b].order })
	}
	return out
}

type roundSection struct {
	WorkflowID, Anchor string
	View               RoundView
	Cards              []card
}

type sessionData struct {
	pageData
	Rounds []roundSection
	Agents []agentLine
	// AgentsError says why the agent runs could not be listed.
	AgentsError string
}

// agentLine is one agent run on a session's page.
type agentLine struct {
	View  AgentView
	Final string // the final answer's first 200 bytes
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request, p principal) {
	session := r.PathValue("session")
	if !names.ValidIdentifier(session) {
		s.errorPage(w, r, http.StatusBadRequest, "bad_request", fmt.Sprintf("session %q is not a session id", session))
		return
	}
	if !p.allows(session) {
		// As for a round of such a session: nothing tells it exists.
		s.errorPage(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("session %s: %v", session, ErrNotFound))
		return
	}
	views, err := s.b.Session(r.Context(), session)
	if err != nil {
		s.errorPage(w, r, http.StatusBadGateway, "backend", err.Error())
		return
	}
	d := sessionData{pageData: s.base(p, "Session "+session, r.URL.RequestURI())}
	d.Session = session
	for _, v := range views {
		sec := roundSection{WorkflowID: v.WorkflowID, Anchor: anchor(v.WorkflowID), View: v}
		for _, pc := range v.Pending {
			sec.Cards = append(sec.Cards, s.newCard(p, v.WorkflowID, session, pc, r.URL.RequestURI()))
		}
		s.withPreviews(r.Context(), sec.Cards)
		s.withQueues(r.Context(), sec.Cards)
		d.Rounds = append(d.Rounds, sec)
	}
	agents, err := s.b.SessionAgents(r.Context(), session)
	if err != nil {
		d.AgentsError = err.Error()
	}
	for _, a := range agents {
		final := a.Final
		if len(final) > 200 {
			final = text.Cut(final, 200) + "…"
		}
		d.Agents = append(d.Agents, agentLine{View: a, Final: final})
	}
	s.render(w, http.StatusOK, "session", d)
}

type callData struct {
	pageData
	WorkflowID, CallID, RoundStatus, CallStatus, Content string
	BuildID                                              string
	Card                                                 *card
}

func (s *Server) callPage(w http.ResponseWriter, r *http.Request, p principal) {
	wfID, callID := r.PathValue("workflow_id"), r.URL.Query().Get("call")
	err := target(p, wfID, kindRound)
	var v *RoundView
	if err == nil {
		v, err = s.b.Round(r.Context(), wfID)
	}
	if err != nil {
		status, code := statusOf(err)
		s.errorPage(w, r, status, code, err.Error())
		return
	}
	d := callData{pageData: s.base(p, "Call "+callID, r.URL.RequestURI()), WorkflowID: wfID, CallID: callID, RoundStatus: v.Status, BuildID: v.BuildID}
	d.Session = v.SessionID
	for _, pc := range v.Pending {
		if pc.CallID == callID {
			cards := []card{s.newCard(p, wfID, v.SessionID, pc, r.URL.RequestURI())}
			s.withPreviews(r.Context(), cards)
			s.withQueues(r.Context(), cards)
			d.Card = &cards[0]
		}
	}
	if v.Result != nil {
		for _, cr := range v.Result.Results {
			if cr.CallID == callID {
				d.CallStatus, d.Content = string(cr.Status), cr.Content
			}
		}
	}
	for _, c := range v.Calls {
		if c.CallID == callID && d.CallStatus == "" {
			d.CallStatus = c.Status
			if d.CallStatus == "" {
				d.CallStatus = c.State
			}
		}
	}
	s.render(w, http.StatusOK, "call", d)
}

type errorData struct {
	pageData
	Status        int
	Code, Message string
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	p, _ := s.authenticate(r)
	ret := "/"
	if r.Method == http.MethodPost && r.PostForm != nil {
		ret = localPath(r.PostForm.Get("return"))
	}
	d := errorData{pageData: s.base(p, http.StatusText(status), ret), Status: status, Code: code, Message: msg}
	s.render(w, status, "error", d)
}
