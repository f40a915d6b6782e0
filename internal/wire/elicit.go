package wire

const (
	// SignalElicit is sent by a call's activity to its own round when the
	// server asks for input (ElicitRequest).
	SignalElicit = "elicit"
	// QueryElicitation answers, for ElicitQuery, whether the request has
	// been answered and with what (ElicitReply).
	QueryElicitation = "elicitation"
)

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

// ErrTypeOutcomeLost is the application error type of an activity that
// found the work it was to finish gone: a stdio MCP server's task whose
// server died with the worker that started it (E2). The call's outcome is
// unknown.
const ErrTypeOutcomeLost = "OutcomeLost"
