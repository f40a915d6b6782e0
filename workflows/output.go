package workflows

import "github.com/toolround/toolround/round"

// Output is what the round workflow returns: the results without the tool
// messages and the history, which repeat every result's content and which
// Result rebuilds, so that the payload stays well under Temporal's limit.
//
// Its events are compact too: the call_started events stay on the session's
// stream only, and what every event of the round shares (session, run,
// round, workflow id) and the tool_result previews, which repeat the
// results, are left out and put back by Result.
type Output struct {
	WorkflowID string             `json:"workflow_id"`
	SessionID  string             `json:"session_id"`
	RunID      string             `json:"run_id"`
	Round      int                `json:"round"`
	Assistant  round.Message      `json:"assistant"`
	Results    []round.CallResult `json:"results"`
	Events     []round.Event      `json:"events"`
	State      *round.RunState    `json:"state"`
}

// compactEvents is what Output keeps of a round's events.
func compactEvents(events []round.Event) []round.Event {
	out := make([]round.Event, 0, len(events))
	for _, e := range events {
		if e.Type == round.EventCallStarted {
			continue
		}
		e.SessionID, e.RunID, e.Round, e.WorkflowID = "", "", 0, ""
		if e.Type == round.EventToolResult {
			e.Detail = ""
		}
		out = append(out, e)
	}
	return out
}

// Result is the round's result as clients see it (P3.1).
func (o Output) Result() round.Result {
	messages := Messages(o.Results)
	content := make(map[string]string, len(o.Results))
	for _, r := range o.Results {
		content[r.CallID] = r.Content
	}
	events := make([]round.Event, len(o.Events))
	for i, e := range o.Events {
		e.SessionID, e.RunID, e.Round, e.WorkflowID = o.SessionID, o.RunID, o.Round, o.WorkflowID
		if e.Type == round.EventToolResult && e.Detail == "" {
			e.Detail = preview(content[e.CallID], eventPreview)
		}
		events[i] = e
	}
	return round.Result{
		WorkflowID: o.WorkflowID, Results: o.Results, Messages: messages,
		History: History(o.Assistant, messages), Events: events, State: o.State,
	}
}

// Messages are the tool messages of the results, in call order.
func Messages(results []round.CallResult) []round.Message {
	out := make([]round.Message, len(results))
	for i, r := range results {
		out[i] = round.Message{Role: "tool", ToolCallID: r.CallID, Content: MessageContent(r.Tool, r.Content)}
	}
	return out
}

// History is the assistant message followed by its tool messages.
func History(assistant round.Message, messages []round.Message) []round.Message {
	if assistant.Role == "" {
		assistant.Role = "assistant"
	}
	return append([]round.Message{assistant}, messages...)
}
