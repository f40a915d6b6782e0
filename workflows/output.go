package workflows

import "github.com/toolround/toolround/round"

// Output is what the round workflow returns: the results without the tool
// messages and the history, which repeat every result's content and which
// Result rebuilds, so that the payload stays well under Temporal's limit.
type Output struct {
	WorkflowID string             `json:"workflow_id"`
	Assistant  round.Message      `json:"assistant"`
	Results    []round.CallResult `json:"results"`
	Events     []round.Event      `json:"events"`
	State      *round.RunState    `json:"state"`
}

// Result is the round's result as clients see it (P3.1).
func (o Output) Result() round.Result {
	messages := Messages(o.Results)
	return round.Result{
		WorkflowID: o.WorkflowID, Results: o.Results, Messages: messages,
		History: History(o.Assistant, messages), Events: o.Events, State: o.State,
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
