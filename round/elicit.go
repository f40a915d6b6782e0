package round

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// MCP elicitation (SPEC E1): an MCP server asks the user for input during a
// call. The call's activity tells its round (SignalElicit), the round lists
// the wait in pending (KindElicitation, with an Elicitation) and takes the
// answer by the validated UpdateAnswer; the activity reads it back with
// QueryElicitation and hands it to the server.
const (
	// KindElicitation is a call whose MCP server asks for input.
	KindElicitation = "elicitation"
	// UpdateAnswer carries a person's answer to an elicitation
	// (ElicitAnswer). Its validator refuses, before anything is recorded,
	// a call that does not wait for one (ErrNotWaiting), a wait_id that is
	// not the current wait's (ErrStaleWait) and content that fails the
	// requested schema or an action that is none of the three
	// (ErrInvalidAnswer). ask_user answers stay on SignalAnswer.
	UpdateAnswer = "answer"
	// SignalElicit is sent by a call's activity to its own round when the
	// server asks for input (ElicitRequest).
	SignalElicit = "elicit"
	// QueryElicitation answers, for ElicitQuery, whether the request has
	// been answered and with what (ElicitReply).
	QueryElicitation = "elicitation"
	// ErrInvalidAnswer: an answer's content fails the requested schema, or
	// its action is not accept, decline or cancel.
	ErrInvalidAnswer = "invalid_answer"
)

// Elicitation actions, as MCP names them.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitRequest is one elicitation/create of an MCP server, as the call's
// activity sends it to the round. Seq counts the call's requests from 1,
// within the activity's attempt.
type ElicitRequest struct {
	CallID  string `json:"call_id"`
	Attempt int    `json:"attempt"`
	Seq     int    `json:"seq"`
	Server  string `json:"server"`
	// Mode is "form" (RequestedSchema) or "url" (URL, to be opened by the
	// person, never by the system).
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitation_id,omitempty"`
}

// Validate refuses a request the round cannot show.
func (e ElicitRequest) Validate() error {
	switch {
	case e.CallID == "":
		return fmt.Errorf("call_id is empty")
	case e.Seq < 1:
		return fmt.Errorf("seq must be 1 or more")
	case e.Mode != "form" && e.Mode != "url":
		return fmt.Errorf("mode must be form or url, not %q", e.Mode)
	case e.Mode == "url" && e.URL == "":
		return fmt.Errorf("a url request has no url")
	}
	return nil
}

// Elicitation is what pending shows of a call whose server asks for input
// (KindElicitation): the server, its message as text, and the request with
// its schema (form) or its URL and the URL's host (url mode; shown, never
// opened or linked).
type Elicitation struct {
	Server          string          `json:"server"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
	URL             string          `json:"url,omitempty"`
	Host            string          `json:"host,omitempty"`
}

// ElicitationOf is the pending view of a request.
func ElicitationOf(e ElicitRequest) *Elicitation {
	out := &Elicitation{Server: e.Server, Mode: e.Mode, Message: e.Message, RequestedSchema: e.RequestedSchema, URL: e.URL}
	if u, err := url.Parse(e.URL); err == nil && e.URL != "" {
		out.Host = u.Host
	}
	return out
}

// ElicitAnswer is the payload of UpdateAnswer.
type ElicitAnswer struct {
	CallID string `json:"call_id"`
	// WaitID, when set, must be the wait's wait_id.
	WaitID string `json:"wait_id,omitempty"`
	// Action is accept, decline or cancel; Content, for accept, the
	// values of the requested schema (an object that it validates).
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	// By and Via say who answered and through what.
	By  string `json:"by,omitempty"`
	Via string `json:"via,omitempty"`
}

// ElicitQuery names the request QueryElicitation is asked about.
type ElicitQuery struct {
	CallID  string `json:"call_id"`
	Attempt int    `json:"attempt"`
	Seq     int    `json:"seq"`
}

// ElicitReply is QueryElicitation's answer: Known when the round has the
// request; Answered with Action and Content once a person answered or the
// wait expired (Action cancel, Expired).
type ElicitReply struct {
	Known    bool           `json:"known"`
	Answered bool           `json:"answered"`
	Action   string         `json:"action,omitempty"`
	Content  map[string]any `json:"content,omitempty"`
	Expired  bool           `json:"expired,omitempty"`
}
