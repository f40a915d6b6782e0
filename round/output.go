package round

import (
	"encoding/json"
	"slices"
	"strings"
)

// Output is what the round workflow returns: the results without the tool
// messages and the history, which repeat every result's content and which
// Result rebuilds, so that the payload stays well under Temporal's limit.
//
// Its events are compact too: the call_started events stay on the session's
// stream only, and what every event of the round shares (session, run,
// round, workflow id) and the tool_result previews and approval records,
// which repeat the results, are left out and put back by Result.
type Output struct {
	WorkflowID string `json:"workflow_id"`
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	Round      int    `json:"round"`
	// Format is the input's; Result gives the messages and the history in
	// it (F2). Empty for format openai, whose turn is Assistant; in the
	// others Turn is the turn as given (Input.TurnJSON).
	//
	// A round of today leaves both out (H3): the turn is the round's input,
	// which the caller has, and WithTurn puts it back. TurnLeftOut says
	// which shape an output has; both read the same through WithTurn.
	Format    Format          `json:"format,omitempty"`
	Assistant Message         `json:"assistant,omitzero"`
	Turn      json.RawMessage `json:"turn,omitempty"`
	Results   []CallResult    `json:"results"`
	Events    []Event         `json:"events"`
	State     *RunState       `json:"state"`
}

// NewOutput is the workflow's return value for a finished round: res as
// pass 3 built it, less what Result rebuilds.
func NewOutput(in *Input, res Result) Output {
	o := Output{
		WorkflowID: res.WorkflowID, SessionID: in.SessionID, RunID: in.RunID, Round: in.Round,
		Results: res.Results, Events: CompactEvents(res.Events), State: res.State,
	}
	if f := in.Format.Name(); f != FormatOpenAI {
		o.Format, o.Turn = f, in.TurnJSON()
	} else {
		o.Assistant = res.History[0]
	}
	return o
}

// Lean is the output of a round of today (H3): without the turn, which
// the caller rebuilds the history from (WithTurn), and with events that
// leave out what the output holds elsewhere: an id's workflow id prefix,
// and a tool_result's tool and status, which are its call's result's; and
// the workflow id prefix of the results' operation ids.
// Result puts them back.
func (o *Output) Lean() {
	o.Assistant, o.Turn = Message{}, nil
	for i := range o.Events {
		e := &o.Events[i]
		if rest, ok := strings.CutPrefix(e.ID, o.WorkflowID); ok && strings.HasPrefix(rest, "/") {
			e.ID = rest
		}
		if e.Type == EventToolResult {
			e.Tool, e.Status = "", ""
		}
	}
	// A result's operation id is the workflow id, the run id and the call
	// id (R): the first is the output's.
	results := slices.Clone(o.Results)
	for i := range results {
		if rest, ok := strings.CutPrefix(results[i].OperationID, o.WorkflowID); ok && strings.HasPrefix(rest, "/") {
			results[i].OperationID = rest
		}
	}
	o.Results = results
}

// TurnLeftOut reports whether o holds no turn: an output of a round that
// left it out (Lean). An output that holds one always has an
// assistant message with its role (openai) or the turn as given.
func (o Output) TurnLeftOut() bool { return o.Assistant.Role == "" && len(o.Turn) == 0 }

// WithTurn is o with the turn of in, the round's input as the workflow got
// it, when o left it out; o itself otherwise.
func (o Output) WithTurn(in *Input) Output {
	if !o.TurnLeftOut() || in == nil {
		return o
	}
	if f := in.Format.Name(); f != FormatOpenAI {
		o.Format, o.Turn = f, in.TurnJSON()
	} else {
		o.Assistant = History(in.ChatAssistant(), nil)[0]
	}
	return o
}

// CompactEvents is what Output keeps of a round's events.
func CompactEvents(events []Event) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Type == EventCallStarted {
			continue
		}
		e.SessionID, e.RunID, e.Round, e.WorkflowID = "", "", 0, ""
		if e.Type == EventToolResult {
			e.Detail, e.Approval = "", nil
		}
		out = append(out, e)
	}
	return out
}

// Result is the round's result as clients see it (P3.1).
func (o Output) Result() Result {
	if lean := slices.ContainsFunc(o.Results, func(r CallResult) bool { return strings.HasPrefix(r.OperationID, "/") }); lean {
		o.Results = slices.Clone(o.Results)
		for i := range o.Results {
			if r := &o.Results[i]; strings.HasPrefix(r.OperationID, "/") {
				r.OperationID = o.WorkflowID + r.OperationID
			}
		}
	}
	messages := o.Format.Messages(o.Results)
	byCall := make(map[string]*CallResult, len(o.Results))
	for i := range o.Results {
		byCall[o.Results[i].CallID] = &o.Results[i]
	}
	events := make([]Event, len(o.Events))
	for i, e := range o.Events {
		e.SessionID, e.RunID, e.Round, e.WorkflowID = o.SessionID, o.RunID, o.Round, o.WorkflowID
		if strings.HasPrefix(e.ID, "/") {
			e.ID = o.WorkflowID + e.ID // a lean output's (Lean)
		}
		r := byCall[e.CallID]
		if e.Type != EventToolResult || r == nil {
			events[i] = e
			continue
		}
		if e.Tool == "" && e.Status == "" {
			e.Tool, e.Status = r.Tool, r.Status
		}
		if e.Detail == "" {
			e.Detail = ResultPreview(r.Content)
		}
		if e.Approval == nil {
			e.Approval = r.Approval
		}
		events[i] = e
	}
	return Result{
		WorkflowID: o.WorkflowID, Format: o.Format, Results: o.Results, Messages: messages,
		History: o.Format.History(o.Assistant, o.Turn, messages), Events: events, State: o.State,
	}
}
