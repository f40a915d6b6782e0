package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolround/toolround/round"
)

// Agent runs over HTTP (H7, A4).
//
// Sealing (T9): nothing here needs it. The task and user messages are
// conversation text, not tool calls; the calls of an agent run come from
// the model, and the model activity seals their store_secret arguments
// before they reach history (internal/activities/model.go). A round submitted with
// POST /api/v1/rounds is still sealed by the client, as before.

// AgentView is an agent run as GET /api/v1/agents/{workflow_id} shows it:
// round.AgentStatus as `starter agent-status` prints it, with Error set
// when the run failed (status failed) or a running run could not answer
// its status query (status running, no conversation).
type AgentView struct {
	round.AgentStatus
	Error string `json:"error,omitempty"`
}

// agentRequest is POST /api/v1/agents's body. Only these fields are taken:
// an unknown field (a misspelt one, or the run's own carry) is refused.
type agentRequest struct {
	SessionID             string `json:"session_id"`
	RunID                 string `json:"run_id"`
	Task                  string `json:"task"`
	Provider              string `json:"provider"`
	AutoApprove           bool   `json:"auto_approve"`
	MaxRounds             int    `json:"max_rounds"`
	ConfirmTimeoutSeconds int    `json:"confirm_timeout_seconds"`
	// Limits bound the run (B1).
	Limits *round.Limits `json:"limits"`
}

// defaultAgentProvider is the provider of a run whose request names none,
// as for `starter agent`.
const defaultAgentProvider = "openai"

// postAgent starts (or attaches to) an agent run: 202 {"workflow_id"}.
// An agent token may start runs, never with auto_approve (403).
func (s *Server) postAgent(w http.ResponseWriter, r *http.Request, p principal) {
	var req agentRequest
	if err := s.decodeStrict(w, r, s.opts.MaxRoundBody, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.AutoApprove && p.Role != RoleApprover {
		writeError(w, codeForbidden, "auto_approve needs an approver token: an agent token may not approve its own calls")
		return
	}
	if req.Provider == "" {
		req.Provider = defaultAgentProvider
	}
	in := round.AgentInput{SessionID: req.SessionID, RunID: req.RunID, Task: req.Task, Provider: req.Provider,
		AutoApprove: req.AutoApprove, MaxRounds: req.MaxRounds, ConfirmTimeoutSeconds: req.ConfirmTimeoutSeconds, Limits: req.Limits}
	if err := in.Validate(); err != nil {
		s.fail(w, r, fmt.Errorf("%w: %w", ErrBadInput, err))
		return
	}
	if !p.allows(in.SessionID) {
		forbidSession(w, p, in.SessionID)
		return
	}
	id, err := s.b.StartAgent(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"workflow_id": id})
}

// getAgent is the run's status and conversation; 404 for no such run.
func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, p principal) {
	id := r.PathValue("workflow_id")
	if strings.HasSuffix(id, "/messages") {
		// POST .../messages sends a message; an agent run's id never ends so.
		noEndpoint(w, r)
		return
	}
	if err := target(p, id, kindAgent); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.b.Agent(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if v.Conversation == nil {
		v.Conversation = []round.AgentMessage{}
	}
	writeJSON(w, http.StatusOK, v)
}

// postAgentPath serves POST /api/v1/agents/{workflow_id}/messages: a user
// message {text} that joins the conversation before the next model call
// (signal user_message, A3). An agent token may send one: a message is
// conversation, as the task is, and approves nothing; cancelling a run
// (POST /api/v1/cancel) stays with approvers.
func (s *Server) postAgentPath(w http.ResponseWriter, r *http.Request, p principal) {
	id, ok := strings.CutSuffix(r.PathValue("path"), "/messages")
	if !ok {
		if allowedMethod(r.URL.Path) != "" {
			noEndpoint(w, r) // an agent run's own path: 405, it takes GET
			return
		}
		writeError(w, round.CodeNotFound, "no such endpoint: POST "+r.URL.Path+" (POST /api/v1/agents/agentrun/<session>/<run>/messages sends a user message)")
		return
	}
	if err := target(p, id, kindAgent); err != nil {
		s.fail(w, r, err)
		return
	}
	var req struct {
		Text *string `json:"text"`
	}
	if err := s.decodeStrict(w, r, s.opts.MaxRoundBody, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Text == nil || strings.TrimSpace(*req.Text) == "" {
		s.fail(w, r, fmt.Errorf("%w: text (a non-empty string) is required", ErrBadInput))
		return
	}
	if len(*req.Text) > round.MaxTaskBytes {
		s.fail(w, r, fmt.Errorf("%w: the message is %d bytes; at most %d are accepted", ErrBadInput, len(*req.Text), round.MaxTaskBytes))
		return
	}
	if err := s.b.SendUserMessage(r.Context(), id, *req.Text); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"workflow_id": id, "sent": true})
}

// decodeStrict reads one JSON object of known fields, within limit bytes;
// an unknown one is refused with the closest known name (U8).
func (s *Server) decodeStrict(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: field %q must be %s, not %s", ErrBadInput, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the body has data after its JSON object", ErrBadInput)
	}
	if err := round.CheckFields(body, v, "the request"); err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return nil
}
