package round

import "encoding/json"

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
	Format    Format          `json:"format,omitempty"`
	Assistant Message         `json:"assistant"`
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
	messages := o.Format.Messages(o.Results)
	content := make(map[string]string, len(o.Results))
	approvals := make(map[string]*Approval, len(o.Results))
	for _, r := range o.Results {
		content[r.CallID] = r.Content
		approvals[r.CallID] = r.Approval
	}
	events := make([]Event, len(o.Events))
	for i, e := range o.Events {
		e.SessionID, e.RunID, e.Round, e.WorkflowID = o.SessionID, o.RunID, o.Round, o.WorkflowID
		if e.Type == EventToolResult && e.Detail == "" {
			e.Detail = ResultPreview(content[e.CallID])
		}
		if e.Type == EventToolResult && e.Approval == nil {
			e.Approval = approvals[e.CallID]
		}
		events[i] = e
	}
	return Result{
		WorkflowID: o.WorkflowID, Format: o.Format, Results: o.Results, Messages: messages,
		History: o.Format.History(o.Assistant, o.Turn, messages), Events: events, State: o.State,
	}
}
