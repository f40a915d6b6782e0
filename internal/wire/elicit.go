package wire

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/toolround/toolround/round"
)

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

// ErrTypeTransient is the application error type of a tool's passing
// failure, which Temporal retries with the tool's policy; its details are
// the attempt that failed.
const ErrTypeTransient = "ToolTransient"

// ElicitationOf is the pending view of a request.
func ElicitationOf(e round.ElicitRequest) *round.Elicitation {
	out := &round.Elicitation{Server: e.Server, Mode: e.Mode, Message: e.Message, RequestedSchema: e.RequestedSchema, URL: e.URL}
	if u, err := url.Parse(e.URL); err == nil && e.URL != "" {
		out.Host = u.Host
	}
	return out
}

// MaxInputTrips bounds a call's input_required round trips: after this
// many the call ends with an error (E1).
const MaxInputTrips = 10

// WithDefaults fills what an accepted form leaves out with the requested
// schema's defaults (its top-level properties, as MCP's forms are flat;
// SEP-1034), as the client must before it answers the server.
func WithDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return content
	}
	// Each property is filled in on its own, so the order does not matter.
	//workflowcheck:ignore
	for name, p := range s.Properties {
		if len(p.Default) == 0 {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) != nil {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = v
	}
	return content
}

// MaxTaskPoll bounds how long the round polls an MCP task in one
// activity, whatever time to live its server gives it.
const MaxTaskPoll = 24 * time.Hour
