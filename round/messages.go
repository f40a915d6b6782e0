package round

// The tool messages and the history of a round are built here only: pass 3
// (workflows.Commit), Output.Result and a client that resolves large
// results (client.Resolve) all call Messages and History; an agent run's
// conversation and the model activity, which loads stored contents back,
// call NotedContent.

// MessageContent is a tool message's content: the tool's name, then its result.
func MessageContent(tool, content string) string {
	return "[" + tool + "] " + content
}

// Messages are the tool messages of the results, in call order. A repeated
// result's message first says what it repeats (U3).
func Messages(results []CallResult) []Message {
	out := make([]Message, len(results))
	for i, r := range results {
		out[i] = Message{Role: "tool", ToolCallID: r.CallID, Content: NotedContent(r.Tool, r.Repeat.Note(), r.Content)}
	}
	return out
}

// NotedContent is a tool message's content with a repeat's note (empty when
// the result is not a repeat) before the result.
func NotedContent(tool, note, content string) string {
	if note != "" {
		content = note + "\n" + content
	}
	return MessageContent(tool, content)
}

// History is the assistant message followed by its tool messages.
func History(assistant Message, messages []Message) []Message {
	if assistant.Role == "" {
		assistant.Role = "assistant"
	}
	return append([]Message{assistant}, messages...)
}
