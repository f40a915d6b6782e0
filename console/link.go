package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
)

// The signed links of webhooks (N2). GET /link is a page that changes
// nothing: its script reads the token from the URL's fragment (which no
// request carries), shows what it decides as text and offers one confirm
// button, whose form POSTs the token as the field `token`. POST /link
// verifies the token with the link key and decides as the token's
// approver, via "link", not verified. No log line holds a token.

// linkHeaders are the headers of both link responses.
func linkHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
}

var linkPage = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="referrer" content="no-referrer">
<link rel="stylesheet" href="/assets/style.css"></head>
<body><main class="link">
<h1>{{.Title}}</h1>
{{if .Message}}<p id="link-result">{{.Message}}</p>{{if .Code}}
<p id="link-code">{{.Code}}</p>{{end}}{{else}}
<p id="link-what">Reading the link…</p>
<dl id="link-call" hidden>
<dt>Decision</dt><dd id="link-decision"></dd>
<dt>Tool</dt><dd id="link-tool"></dd>
<dt>Why it asks</dt><dd id="link-reasons"></dd>
<dt>Arguments</dt><dd><pre id="link-args"></pre></dd>
<dt id="link-preview-h" hidden>The file as it is now</dt><dd id="link-preview-d" hidden><p id="link-preview-note"></p><pre id="link-preview"></pre></dd>
<dt>Round</dt><dd id="link-workflow"></dd>
<dt>Call</dt><dd id="link-callid"></dd>
<dt>As</dt><dd id="link-by"></dd>
<dt>Until</dt><dd id="link-expires"></dd>
</dl>
<form id="link-form" method="post" action="/link" hidden>
<input type="hidden" name="token" id="link-token">
<label>Reason <input type="text" name="reason" maxlength="500"></label>
<button type="submit" id="link-confirm">Confirm</button>
</form>
<script src="/assets/link.js"></script>{{end}}
</main></body></html>
`))

// linkView is the page; Code, on a refusal, is its status and error code
// (such as "409 link_used").
type linkView struct{ Title, Message, Code string }

func (s *Server) getLink(w http.ResponseWriter, r *http.Request) {
	linkHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = linkPage.Execute(w, linkView{Title: "Confirm a decision"})
}

// linkAnswer is the page of a POST's outcome, with its status.
func linkAnswer(w http.ResponseWriter, status int, msg string) {
	linkAnswerCode(w, status, "", msg)
}

// linkAnswerCode is linkAnswer of a refusal that shows its error code.
func linkAnswerCode(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	v := linkView{Title: "Decision", Message: msg}
	if code != "" {
		v.Code = strconv.Itoa(status) + " " + code
	}
	_ = linkPage.Execute(w, v)
}

// linkOf reads and checks the link a POST carries in its form field
// token: signed with the link key, not expired, its approver's scope
// covering its session, its workflow a round. On a refusal it has
// answered with fail and returns false.
func (s *Server) linkOf(w http.ResponseWriter, r *http.Request, fail func(w http.ResponseWriter, status int, msg string)) (notify.Link, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "The form could not be read.")
		return notify.Link{}, false
	}
	if s.opts.LinkKey == nil {
		fail(w, http.StatusForbidden, "This console takes no links (no link key).")
		return notify.Link{}, false
	}
	l, err := notify.VerifyLinkWith([][]byte{s.opts.LinkKey, s.opts.LinkKeyPrevious}, r.PostForm.Get("token"), s.opts.Now())
	switch {
	case errors.Is(err, notify.ErrLinkExpired):
		fail(w, http.StatusGone, "The link has expired: the call's deadline has passed.")
		return notify.Link{}, false
	case err != nil:
		fail(w, http.StatusForbidden, "The link is not valid.")
		return notify.Link{}, false
	}
	if !s.approverCovers(l.By, sessionOf(l.WorkflowID)) {
		fail(w, http.StatusForbidden, "The link's approver may not decide in this session.")
		return notify.Link{}, false
	}
	if err := target(principal{Name: l.By, Role: RoleApprover}, l.WorkflowID, kindRound); err != nil {
		fail(w, http.StatusNotFound, "No such round.")
		return notify.Link{}, false
	}
	return l, true
}

// linkArgsMax bounds the arguments the link page shows (T14): past it they
// are cut, and the page says how much was left out.
const linkArgsMax = 8 << 10

// linkCallView is what POST /link/call answers: the call a link decides,
// as the console's card shows it (T14), for the page to show as text.
type linkCallView struct {
	Waiting   bool     `json:"waiting"`
	Tool      string   `json:"tool,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
	Arguments string   `json:"arguments,omitempty"`
	// Cut is how many characters of the arguments were left out.
	Cut int `json:"cut,omitempty"`
	// Preview is the file the call would overwrite, as it is now, as the
	// card shows it.
	Preview *filePreview `json:"preview,omitempty"`
}

// linkCall answers the link page with the call its token decides: the
// tool, why it asks and its arguments, so a person never decides blind.
// It changes nothing.
func (s *Server) linkCall(w http.ResponseWriter, r *http.Request) {
	linkHeaders(w)
	fail := func(w http.ResponseWriter, status int, msg string) {
		writeJSON(w, status, map[string]string{"error": msg})
	}
	l, ok := s.linkOf(w, r, fail)
	if !ok {
		return
	}
	v, err := s.b.Round(r.Context(), l.WorkflowID)
	if err != nil {
		status, _ := statusOf(err)
		fail(w, status, "The round could not be read.")
		return
	}
	out := linkCallView{}
	for _, p := range v.Pending {
		if p.CallID != l.CallID {
			continue
		}
		out = linkCallView{Waiting: p.WaitID == l.WaitID, Tool: p.Tool, Kind: p.Kind, Reasons: visibleAll(p.Why())}
		args := []rune(prettyJSON(string(p.Arguments)))
		if len(args) > linkArgsMax {
			out.Cut = len(args) - linkArgsMax
			args = args[:linkArgsMax]
		}
		out.Arguments = string(args)
		out.Preview = s.previewOf(r.Context(), v.SessionID, p)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) postLink(w http.ResponseWriter, r *http.Request) {
	linkHeaders(w)
	l, ok := s.linkOf(w, r, linkAnswer)
	if !ok {
		return
	}
	d := Decision{WorkflowID: l.WorkflowID, CallID: l.CallID, WaitID: l.WaitID, Approve: l.Decision == notify.DecisionApprove,
		Reason: strings.TrimSpace(r.PostForm.Get("reason")), By: l.By, Via: "link", Nonce: l.Nonce}
	if v, err := s.b.Round(r.Context(), l.WorkflowID); err == nil {
		for _, p := range v.Pending {
			if p.CallID == l.CallID {
				d.ApprovalID = p.ApprovalID
			}
		}
	}
	if err := s.b.Decide(r.Context(), d); err != nil {
		status, code := statusOf(err)
		if status == http.StatusInternalServerError {
			s.log.Error("link decision failed", "workflow_id", l.WorkflowID, "call_id", l.CallID, "err", err)
		}
		msg := map[string]string{
			string(round.CodeLinkUsed):       "This link has decided already.",
			string(round.CodeNotWaiting):     "The call does not wait for a decision any more.",
			string(round.CodeStaleApproval):  "The call waits for another decision now.",
			string(round.CodeStaleWait):      "The call waits for another decision now.",
			string(round.CodeAlreadyDecided): "The call was decided already.",
		}[code]
		if errors.Is(err, client.ErrAlreadyDecided) {
			status = http.StatusConflict
		}
		if msg == "" {
			msg = "The decision did not land: " + code
		}
		linkAnswerCode(w, status, code, msg)
		return
	}
	verb := "approved"
	if !d.Approve {
		verb = "denied"
	}
	linkAnswer(w, http.StatusOK, fmt.Sprintf("The call %s was %s as %s.", l.CallID, verb, l.By))
}

// sessionOf is the session of a workflow id <type>/<session>/...
func sessionOf(workflowID string) string {
	parts := strings.Split(workflowID, "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// approverCovers reports whether name is an approver token whose scope
// covers the session (H2): links decide only as such an approver.
func (s *Server) approverCovers(name, session string) bool {
	for _, t := range s.opts.Tokens {
		if t.Name == name && t.Role == RoleApprover && t.Covers(session) {
			return true
		}
	}
	return false
}

// visibleAll is text.Visible of each of ss.
func visibleAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = text.Visible(s)
	}
	return out
}
