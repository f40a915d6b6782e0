package wire

import (
	"fmt"

	"github.com/toolround/toolround/round"
)

const (
	// ActivityModelCall asks the model for the next assistant message.
	ActivityModelCall = "ModelCall"
)

// ModelInput is the input of the ModelCall activity: call n of the run
// (from 1) with the conversation so far.
type ModelInput struct {
	SessionID   string               `json:"session_id"`
	RunID       string               `json:"run_id"`
	WorkflowID  string               `json:"workflow_id"`
	Call        int                  `json:"call"`
	Round       int                  `json:"round"`
	Provider    string               `json:"provider"`
	ClientTools []round.ToolSpec     `json:"client_tools,omitempty"`
	Messages    []round.AgentMessage `json:"messages"`
	// Budget: keep the request under the worker's LLM_CONTEXT_TOKENS
	// (B3), replacing the oldest tool results by previews; ModelOutput
	// names them.
	Budget bool `json:"budget,omitempty"`
	// Last is the size of the run's previous request, which the budget
	// estimates this one from (B3); nil: the first, or none reported.
	Last *round.RequestSize `json:"last,omitempty"`
	// SystemPrompt joins the worker's system prompt, and Exclude leaves
	// tools out of the tools array, for a subagent (G1).
	SystemPrompt string   `json:"system_prompt,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	// Model replaces the worker's LLM_MODEL, for a chatbot (G3).
	Model string `json:"model,omitempty"`
	// Script, when set, answers in place of the worker's model: the run's
	// scripted model (AgentInput.Script).
	Script *round.ModelScript `json:"script,omitempty"`
}

// BudgetedResult is a tool message a model call's budget replaced (B3):
// conversation message Msg now has Content, a preview naming Ref.
type BudgetedResult struct {
	Msg     int    `json:"msg"`
	Ref     string `json:"ref"`
	Content string `json:"content"`
}

// ModelOutput is the model's assistant message, with store_secret
// arguments sealed.
type ModelOutput struct {
	Message      round.AgentMessage `json:"message"`
	FinishReason string             `json:"finish_reason,omitempty"`
	// Stop is why the turn ended, alike for every API (F4): answer,
	// tool_use, pause, truncated, refused. Empty in outputs recorded
	// before it existed.
	Stop string `json:"stop,omitempty"`
	// Tokens are the call's model tokens as the API reports them (B1).
	Tokens int64 `json:"tokens,omitempty"`
	// Budgeted are the tool results the budget replaced for this call
	// (B3); ContextExceeded: what cannot be shortened alone passes the
	// budget, and the model was not asked (Message is empty).
	Budgeted        []BudgetedResult `json:"budgeted,omitempty"`
	ContextExceeded bool             `json:"context_exceeded,omitempty"`
	// Request is the size of the request sent, for the next call's
	// estimate (B3); set only when the input asked for the budget.
	Request *round.RequestSize `json:"request,omitempty"`
}

// AgentScope builds an agent run's events; like Scope, it is the one
// constructor of their ids.
type AgentScope struct {
	SessionID  string
	RunID      string
	WorkflowID string
}

func (s AgentScope) event(typ, id string) round.Event {
	return round.Event{ID: s.WorkflowID + id, Type: typ, SessionID: s.SessionID, RunID: s.RunID, WorkflowID: s.WorkflowID}
}

// ModelToken is the seq-th batch of content tokens of attempt of model call
// call. An attempt that ran again streams under ids of its own.
func (s AgentScope) ModelToken(call, attempt, seq int, text string) round.Event {
	e := s.event(round.EventModelToken, fmt.Sprintf("/model/%d/%d/token/%d", call, attempt, seq))
	e.Detail = text
	return e
}

// ModelReply is model call call's answer.
func (s AgentScope) ModelReply(call, roundNo int, detail string) round.Event {
	e := s.event(round.EventModelReply, fmt.Sprintf("/model/%d/reply", call))
	e.Round, e.Detail = roundNo, detail
	return e
}

// AgentFinished ends the run's events.
func (s AgentScope) AgentFinished(roundNo int, status string) round.Event {
	e := s.event(round.EventAgentFinished, "/finished")
	e.Round, e.Detail = roundNo, status
	return e
}
