package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// postRound is H2: submit a round; ?wait=1 waits for its result.
func (s *Server) postRound(w http.ResponseWriter, r *http.Request, p principal) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRoundBody))
	if err != nil {
		s.fail(w, r, fmt.Errorf("read round: %w", err))
		return
	}
	in, err := round.ParseInput(body)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %w", ErrBadInput, err))
		return
	}
	if in.AutoApprove && p.Role != RoleApprover {
		writeError(w, codeForbidden, "auto_approve needs an approver token: an agent token may not approve its own calls")
		return
	}
	if !p.allows(in.SessionID) {
		forbidSession(w, p, in.SessionID)
		return
	}
	id, err := s.b.Submit(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if v := r.URL.Query().Get("wait"); v == "" || v == "0" || v == "false" {
		writeJSON(w, http.StatusAccepted, map[string]string{"workflow_id": id})
		return
	}
	res, err := s.b.Wait(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// runningRound is H3's answer for a round that has not finished.
type runningRound struct {
	WorkflowID string          `json:"workflow_id"`
	Status     string          `json:"status"`
	Error      string          `json:"error,omitempty"`
	Pending    []PendingCall   `json:"pending"`
	Progress   json.RawMessage `json:"progress,omitempty"`
}

// forbidSession answers a request into a session outside the token's
// scope (H10).
func forbidSession(w http.ResponseWriter, p principal, session string) {
	writeError(w, codeForbidden, fmt.Sprintf("the token %q may not use session %q (its sessions: %s)", p.Name, session, strings.Join(p.Scope, ",")))
}

// getRound is H3.
func (s *Server) getRound(w http.ResponseWriter, r *http.Request, p principal) {
	id := r.PathValue("workflow_id")
	if err := target(p, id, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.b.Round(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if v.Result != nil {
		writeJSON(w, http.StatusOK, v.Result)
		return
	}
	out := runningRound{WorkflowID: v.WorkflowID, Status: v.Status, Error: v.Error, Pending: v.Pending, Progress: v.Progress}
	if out.Pending == nil {
		out.Pending = []PendingCall{}
	}
	writeJSON(w, http.StatusOK, out)
}

// getTools is F3: ?provider=P[&format=F] gives the provider's tools array
// of the built-in tools in format F (openai by default), its deferred names
// and the turn-context line, as `starter tools` does without MCP_CONFIG and
// TOOLS_CONFIG (which the workers read, not the console).
func (s *Server) getTools(w http.ResponseWriter, r *http.Request, _ principal) {
	q := r.URL.Query()
	provider := q.Get("provider")
	if !names.ValidIdentifier(provider) {
		s.fail(w, r, fmt.Errorf("%w: provider %q is not a provider name", ErrBadInput, provider))
		return
	}
	if err := round.CheckProvider(provider); err != nil {
		s.fail(w, r, fmt.Errorf("%w: %v", ErrBadInput, err))
		return
	}
	f := round.FormatOpenAI
	if q.Has("format") {
		var err error
		if v := q.Get("format"); v == "" {
			err = errors.New("format is empty: give openai, anthropic or responses, or leave it out")
		} else {
			f, err = round.ParseFormat(v)
		}
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: %v", ErrBadInput, err))
			return
		}
	}
	switch w0 := q.Get("worker"); {
	case !q.Has("worker") || w0 == "false":
	case w0 == "true":
		s.getWorkerTools(w, r, provider, f)
		return
	default:
		s.fail(w, r, fmt.Errorf("%w: worker=%q: give true or false, or leave it out", ErrBadInput, q.Get("worker")))
		return
	}
	ts, err := client.ToolsIn(provider, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ts)
}

// WorkerTools is what a Backend that reaches the workers also answers: the
// tools a worker of the task queue offers, its tool queues included (Y2).
type WorkerTools interface {
	WorkerTools(ctx context.Context, provider string) (tools.Toolset, error)
}

// getWorkerTools is GET /api/v1/tools?worker=true: a running worker's own
// list, with its MCP servers' and tool workers' tools and its queues.
func (s *Server) getWorkerTools(w http.ResponseWriter, r *http.Request, provider string, f round.Format) {
	wt, ok := s.b.(WorkerTools)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: this console reaches no workers", ErrUnsupported))
		return
	}
	ts, err := wt.WorkerTools(r.Context(), provider)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, err := ts.In(f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// getInbox is H4; ?session=S keeps one session.
func (s *Server) getInbox(w http.ResponseWriter, r *http.Request, p principal) {
	entries, err := s.inbox(r, p, r.URL.Query().Get("session"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, entries)
}

// inbox is the waiting rounds p may see, of one session or of all; the
// page's inbox is the same list.
func (s *Server) inbox(r *http.Request, p principal, session string) ([]InboxEntry, error) {
	if session != "" && !names.ValidIdentifier(session) {
		return nil, fmt.Errorf("%w: session %q is not a session id", ErrBadInput, session)
	}
	out := []InboxEntry{}
	if session != "" && !p.allows(session) {
		return out, nil
	}
	entries, err := s.b.Inbox(r.Context(), session)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if target(p, e.WorkflowID, kindRound) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// approvalRequest is H5's body.
type approvalRequest struct {
	WorkflowID string          `json:"workflow_id"`
	CallID     string          `json:"call_id"`
	ApprovalID string          `json:"approval_id"`
	Approve    *bool           `json:"approve"`
	Reason     string          `json:"reason"`
	Remember   bool            `json:"remember"`
	Pattern    string          `json:"pattern"`
	AllowTurn  bool            `json:"allow_turn"`
	Args       json.RawMessage `json:"args"`
	// WaitID, when set, must be the call's current wait (B1).
	WaitID string `json:"wait_id"`
	// UpTo bounds the remembered rule to that many calls of the run (B2).
	UpTo int64 `json:"up_to"`
	// Scope is the remembered rule's scope, "read-only" or "write" (T12).
	Scope string `json:"scope"`
}

// postApproval is H5.
func (s *Server) postApproval(w http.ResponseWriter, r *http.Request, p principal) {
	var req approvalRequest
	if isForm(r) {
		if err := s.parseForm(w, r); err != nil {
			s.fail(w, r, err)
			return
		}
		f := r.PostForm
		// The page's buttons: approve, approve_edited (with the editor's
		// arguments, when they differ from the model's) and deny.
		decision := f.Get("decision")
		if decision != "approve" && decision != "approve_edited" && decision != "deny" {
			s.fail(w, r, fmt.Errorf("%w: decision must be approve, approve_edited or deny", ErrBadInput))
			return
		}
		approve := decision != "deny"
		req = approvalRequest{WorkflowID: f.Get("workflow_id"), CallID: f.Get("call_id"), ApprovalID: f.Get("approval_id"),
			Approve: &approve, Reason: f.Get("reason"), Remember: f.Get("remember") != "", Pattern: f.Get("pattern"), AllowTurn: f.Get("allow_turn") != "",
			WaitID: f.Get("wait_id")}
		if req.Remember {
			req.Scope = strings.TrimSpace(f.Get("scope")) // the card's choice counts only with remember (T12)
		}
		if v := strings.TrimSpace(f.Get("up_to")); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				s.fail(w, r, fmt.Errorf("%w: up_to must be a whole number", ErrInvalidDecision))
				return
			}
			req.UpTo = n
		}
		if a := strings.TrimSpace(f.Get("args")); decision == "approve_edited" && !sameJSON(a, f.Get("original_args")) {
			if a == "" {
				a = `""`
			}
			req.Args = json.RawMessage(a)
		}
	} else if err := s.decodeJSON(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.WorkflowID == "" || req.CallID == "" {
		s.fail(w, r, fmt.Errorf("%w: workflow_id and call_id are required", ErrBadInput))
		return
	}
	if req.Approve == nil {
		s.fail(w, r, fmt.Errorf("%w: approve (true or false) is required", ErrBadInput))
		return
	}
	if err := target(p, req.WorkflowID, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	d := Decision{WorkflowID: req.WorkflowID, CallID: req.CallID, ApprovalID: req.ApprovalID, Approve: *req.Approve,
		Reason: req.Reason, Remember: req.Remember, Pattern: req.Pattern, AllowTurn: req.AllowTurn,
		By: p.Name, Via: p.Via, Verified: true, WaitID: req.WaitID, UpTo: req.UpTo, Scope: req.Scope}
	if d.Scope != "" && (!d.Remember || !approval.ValidScope(d.Scope)) {
		s.fail(w, r, fmt.Errorf("%w: scope is a remembered rule's: give remember, and %q or %q", ErrInvalidDecision, approval.ScopeReadOnly, approval.ScopeWrite))
		return
	}
	if d.UpTo != 0 && (!d.Remember || d.UpTo < 1 || d.UpTo > round.MaxLimit) {
		s.fail(w, r, fmt.Errorf("%w: up_to bounds a remembered rule: give remember, and 1 to %d", ErrInvalidDecision, round.MaxLimit))
		return
	}
	if len(req.Args) > 0 && string(req.Args) != "null" {
		if !d.Approve {
			s.fail(w, r, fmt.Errorf("%w: args are for approving with edited arguments, not for denying", ErrInvalidArgs))
			return
		}
		args, err := objectArgs(req.Args)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d.Args = args
	}
	err := s.b.Decide(r.Context(), d)
	if err != nil && !errors.Is(err, client.ErrAlreadyDecided) {
		s.fail(w, r, err)
		return
	}
	verb := "approved"
	if !d.Approve {
		verb = "denied"
	}
	reply := map[string]any{"workflow_id": d.WorkflowID, "call_id": d.CallID, "decision": verb, "by": d.By, "via": d.Via}
	if err != nil {
		// The same decision landed before (a retry): 200, and it says so.
		reply["status"] = string(round.CodeAlreadyDecided)
	}
	s.done(w, r, reply)
}

// objectArgs checks edited arguments: a JSON object, or a JSON string that
// holds one (as function.arguments does). It returns the object's text.
func objectArgs(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidArgs, err)
		}
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "", fmt.Errorf("%w: the arguments must be a JSON object", ErrInvalidArgs)
	}
	if dec.More() {
		return "", fmt.Errorf("%w: the arguments have data after their JSON object", ErrInvalidArgs)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidArgs, err)
	}
	return string(b), nil
}

// sameJSON compares two JSON texts by value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

type answerRequest struct {
	WorkflowID string   `json:"workflow_id"`
	CallID     string   `json:"call_id"`
	Answers    []string `json:"answers"`
	// An MCP server's request (E1) is answered with action (accept,
	// decline or cancel), content for accept, and its wait_id.
	WaitID  string         `json:"wait_id"`
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// postAnswer is H6: answer an ask_user call.
func (s *Server) postAnswer(w http.ResponseWriter, r *http.Request, p principal) {
	var req answerRequest
	if isForm(r) {
		if err := s.parseForm(w, r); err != nil {
			s.fail(w, r, err)
			return
		}
		req = answerRequest{WorkflowID: r.PostForm.Get("workflow_id"), CallID: r.PostForm.Get("call_id"), Answers: r.PostForm["answers"],
			WaitID: r.PostForm.Get("wait_id"), Action: r.PostForm.Get("action")}
		if c := r.PostForm.Get("content"); c != "" {
			if err := json.Unmarshal([]byte(c), &req.Content); err != nil {
				s.fail(w, r, fmt.Errorf("%w: content must be a JSON object: %v", ErrBadInput, err))
				return
			}
		} else if req.Action == round.ElicitAccept && req.WorkflowID != "" && req.CallID != "" {
			// The page's form: its field.<name> inputs, typed by the
			// request's schema.
			schema, err := s.pendingSchema(r.Context(), req.WorkflowID, req.CallID)
			if err == nil {
				req.Content, err = formContent(schema, r.PostForm)
			}
			if err != nil {
				s.fail(w, r, err)
				return
			}
		}
	} else if err := s.decodeJSON(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Action != "" {
		s.answerElicitation(w, r, p, req)
		return
	}
	if req.WorkflowID == "" || req.CallID == "" || len(req.Answers) == 0 {
		s.fail(w, r, fmt.Errorf("%w: workflow_id, call_id and answers (a list of strings) are required", ErrBadInput))
		return
	}
	if err := target(p, req.WorkflowID, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.b.Answer(r.Context(), req.WorkflowID, req.CallID, req.Answers); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, map[string]any{"workflow_id": req.WorkflowID, "call_id": req.CallID, "answered": true})
}

// answerElicitation is postAnswer for an MCP server's request (E1).
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, p principal, req answerRequest) {
	if req.WorkflowID == "" || req.CallID == "" || len(req.Answers) > 0 {
		s.fail(w, r, fmt.Errorf("%w: an answer to an MCP server's request takes workflow_id, call_id, action, content and wait_id, not answers", ErrBadInput))
		return
	}
	if err := target(p, req.WorkflowID, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	a := round.ElicitAnswer{CallID: req.CallID, WaitID: req.WaitID, Action: req.Action, Content: req.Content, By: p.Name, Via: p.Via}
	if err := s.b.AnswerElicitation(r.Context(), req.WorkflowID, a); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, map[string]any{"workflow_id": req.WorkflowID, "call_id": req.CallID, "answered": true, "action": req.Action})
}

// toolResultRequest is the body of POST /api/v1/tool-results (Y5).
type toolResultRequest struct {
	WorkflowID string `json:"workflow_id"`
	CallID     string `json:"call_id"`
	WaitID     string `json:"wait_id"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
}

// postToolResult answers a client tool's wait with the result the client
// got (Y5), through the round's validated tool_result update. The wait is
// the agent's: any token whose scope covers the session may answer it.
func (s *Server) postToolResult(w http.ResponseWriter, r *http.Request, p principal) {
	var req toolResultRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.WorkflowID == "" || req.CallID == "" {
		s.fail(w, r, fmt.Errorf("%w: workflow_id and call_id are required", ErrBadInput))
		return
	}
	if err := target(p, req.WorkflowID, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	res := round.ToolResult{CallID: req.CallID, WaitID: req.WaitID, Content: req.Content, IsError: req.IsError}
	if err := s.b.SubmitToolResult(r.Context(), req.WorkflowID, res); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, map[string]any{"workflow_id": req.WorkflowID, "call_id": req.CallID, "accepted": true})
}

type extendRequest struct {
	WorkflowID string `json:"workflow_id"`
	CallID     string `json:"call_id"`
	Seconds    int    `json:"seconds"`
}

// maxExtend is T3's cap on one wait.
const maxExtend = 7 * 24 * 3600

// postExtend is H6: push a waiting call's deadline.
func (s *Server) postExtend(w http.ResponseWriter, r *http.Request, p principal) {
	var req extendRequest
	if isForm(r) {
		if err := s.parseForm(w, r); err != nil {
			s.fail(w, r, err)
			return
		}
		n, err := strconv.Atoi(r.PostForm.Get("seconds"))
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: seconds must be a whole number", ErrBadInput))
			return
		}
		req = extendRequest{WorkflowID: r.PostForm.Get("workflow_id"), CallID: r.PostForm.Get("call_id"), Seconds: n}
	} else if err := s.decodeJSON(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.WorkflowID == "" || req.CallID == "" {
		s.fail(w, r, fmt.Errorf("%w: workflow_id and call_id are required", ErrBadInput))
		return
	}
	if req.Seconds < 1 || req.Seconds > maxExtend {
		s.fail(w, r, fmt.Errorf("%w: seconds must be from 1 to %d (7 days)", ErrBadInput, maxExtend))
		return
	}
	if err := target(p, req.WorkflowID, kindRound); err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.b.Extend(r.Context(), req.WorkflowID, req.CallID, req.Seconds)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	reply := map[string]any{"workflow_id": req.WorkflowID, "call_id": req.CallID, "extended_seconds": res.AddedSeconds}
	if res.Deadline.IsZero() {
		// A round of an older build does not say what its cap let in.
		reply["extended_seconds"] = req.Seconds
	} else {
		reply["deadline"] = res.Deadline.UTC()
	}
	s.done(w, r, reply)
}

// postCancel is H6: cancel a round, or an agent run (agentrun/...), whose
// started round still gives every call a result (A3).
func (s *Server) postCancel(w http.ResponseWriter, r *http.Request, p principal) {
	var req struct {
		WorkflowID string `json:"workflow_id"`
	}
	if isForm(r) {
		if err := s.parseForm(w, r); err != nil {
			s.fail(w, r, err)
			return
		}
		req.WorkflowID = r.PostForm.Get("workflow_id")
	} else if err := s.decodeJSON(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.WorkflowID == "" {
		s.fail(w, r, fmt.Errorf("%w: workflow_id is required", ErrBadInput))
		return
	}
	if err := target(p, req.WorkflowID, kindRound|kindAgent); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.b.Cancel(r.Context(), req.WorkflowID); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, map[string]any{"workflow_id": req.WorkflowID, "cancelled": true})
}

// getEvents is H8: the session's events as server-sent events, one JSON
// event (as `starter watch --json` prints it) per data: line.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, p principal) {
	session := r.PathValue("session")
	if !names.ValidIdentifier(session) {
		s.fail(w, r, fmt.Errorf("%w: session %q is not a session id", ErrBadInput, session))
		return
	}
	if !p.allows(session) {
		forbidSession(w, p, session)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	var mu sync.Mutex
	started := false
	write := func(text string) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		return rc.Flush()
	}
	ready := func() {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		mu.Lock()
		started = true
		mu.Unlock()
		_ = write("retry: 2000\n: ready\n\n")
	}
	ctx := r.Context()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				mu.Lock()
				ok := started
				mu.Unlock()
				if ok {
					_ = write(": ping\n\n")
				}
			}
		}
	}()
	// EventSource sends the last event's id when it reconnects.
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	err := s.b.Events(ctx, session, after, ready, func(e round.Event) error {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return write("id: " + oneLine(e.ID) + "\ndata: " + string(b) + "\n\n")
	})
	mu.Lock()
	ok := started
	mu.Unlock()
	if err != nil && !ok {
		s.fail(w, r, err)
		return
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("event stream ended", "session", session, "err", err)
	}
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// decodeJSON reads a JSON body within MaxBody and refuses a field that v
// does not know (U8).
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: field %q must be %s, not %s", ErrBadInput, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%w: the body is not valid JSON: %v", ErrBadInput, err)
	}
	if err := round.CheckFields(body, v, "the request"); err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return nil
}

// parseForm parses a form body (api has done so, within MaxBody).
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) error {
	if r.PostForm != nil {
		return nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	return nil
}

// done answers a successful action: JSON for the API and the page's
// script, a redirect back for a plain form.
func (s *Server) done(w http.ResponseWriter, r *http.Request, v map[string]any) {
	if wantsHTML(r) {
		http.Redirect(w, r, localPath(r.PostForm.Get("return")), http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// localPath keeps redirects on this site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}
