package workflows

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/toolround/toolround/round"
)

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

// ResultBudget is the content size above which a round's largest results
// are moved out of history into the blob store before pass 3; resultLimit
// is the encoded size above which the largest are cut, as a last resort.
// Temporal refuses payloads over 2 MB.
const (
	ResultBudget = 1 << 20
	resultLimit  = 1800 << 10
	previewBytes = 2 << 10
)

// OffloadInput is the input of the OffloadResults local activity.
type OffloadInput struct {
	Contents []string `json:"contents"`
}

// OffloadOutput holds one reference per content.
type OffloadOutput struct {
	Refs []string `json:"refs"`
}

// toOffload picks the outcomes whose content leaves history, largest first,
// until the round's contents fit ResultBudget.
func toOffload(outcomes []*Outcome) []int {
	total := 0
	var order []int
	for i, o := range outcomes {
		if o == nil || o.ContentRef != "" {
			continue
		}
		total += len(o.Content)
		if len(o.Content) > previewBytes {
			order = append(order, i)
		}
	}
	if total <= ResultBudget {
		return nil
	}
	sort.SliceStable(order, func(a, b int) bool { return len(outcomes[order[a]].Content) > len(outcomes[order[b]].Content) })
	var pick []int
	for _, i := range order {
		if total <= ResultBudget {
			break
		}
		pick = append(pick, i)
		total -= len(outcomes[i].Content) - previewBytes
	}
	return pick
}

// fit cuts the largest results of an output that would still be too large
// to return: a round's result is never lost to the payload limit.
func fit(o *Output) {
	b, err := json.Marshal(o)
	if err != nil || len(b) <= resultLimit {
		return
	}
	excess := len(b) - resultLimit
	order := make([]int, len(o.Results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(o.Results[order[a]].Content) > len(o.Results[order[b]].Content) })
	for _, i := range order {
		if excess <= 0 || len(o.Results[i].Content) <= previewBytes {
			return
		}
		before := len(o.Results[i].Content)
		o.Results[i].Content = preview(o.Results[i].Content, previewBytes) +
			fmt.Sprintf("\n[truncated: %d bytes did not fit in the round's result]", before)
		excess -= before - len(o.Results[i].Content)
	}
}

// stored is a large content's preview with its reference.
func stored(content, ref string) string {
	return preview(content, previewBytes) + fmt.Sprintf("\n[%d bytes in all; stored as %s]", len(content), ref)
}
