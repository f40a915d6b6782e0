package round

import (
	"encoding/json"
	"fmt"
)

// MCP elicitation (SPEC E1): an MCP server asks the user for input during a
// call. The call's activity tells its round (wire.SignalElicit), the round lists
// the wait in pending (KindElicitation, with an Elicitation) and takes the
// answer by the validated UpdateAnswer; the activity reads it back with
// wire.QueryElicitation and hands it to the server.
const (
	// KindElicitation is a call whose MCP server asks for input.
	KindElicitation = "elicitation"
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
	// Key names a 2026-07-28 server's input request (InputRequired).
	Key    string `json:"key,omitempty"`
	Server string `json:"server"`
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

// InputRequired is a 2026-07-28 MCP server's input_required result, as a
// call's activity hands it to its round (E1): the requests a person must
// answer, those the worker answered itself (roots), and the server's
// opaque state. The round waits for each request in turn, then runs the
// call again with the answers (wire.ExecuteInput.InputResponses) and the state.
// It sits in history, so a worker that dies while a person thinks loses
// nothing: the next worker runs the call again with the answers.
type InputRequired struct {
	// Asks are the requests for a person, in key order; each one's Key
	// names it among the server's input requests.
	Asks []ElicitRequest `json:"asks"`
	// Answered are the responses the worker gave itself, by key.
	Answered map[string]json.RawMessage `json:"answered,omitempty"`
	// State is the server's requestState, echoed back as it is.
	State string `json:"state,omitempty"`
}

// MCPTask is a long MCP tool call that its server runs as a task (E2): the
// tools/call that created it returned this handle instead of a result. It
// sits in history (ExecuteOutput.Task), and the call's next activity polls
// the task with it (wire.ExecuteInput.Task) until it ends; that activity may be
// retried, since polling changes nothing on the server.
type MCPTask struct {
	// Server is the MCP server's name in MCP_CONFIG; ID its task id.
	Server string `json:"server"`
	ID     string `json:"id"`
	// Protocol is the session's protocol version: 2025-11-25 tasks are
	// read with tasks/result, 2026-07-28 ones from tasks/get, and answered
	// with tasks/update.
	Protocol string `json:"protocol"`
	// Conn names the connection to a stdio server that created the task:
	// such a task lives in the server's process, which ends with the
	// worker's, so a poll over any other connection finds it lost (T8).
	// Empty for a streamable HTTP server, whose tasks outlive a worker.
	Conn string `json:"conn,omitempty"`
	// PollMS is the server's suggested polling interval, TTLMS how long it
	// keeps the task (0: it did not say).
	PollMS int64 `json:"poll_ms,omitempty"`
	TTLMS  int64 `json:"ttl_ms,omitempty"`
}
