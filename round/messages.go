package round

// The tool messages and the history of a round are built here only: pass 3
// (workflows.Commit), Output.Result and a client that resolves large
// results (client.Resolve) all call Messages and History.

// MessageContent is a tool message's content: the tool's name, then its result.
func MessageContent(tool, content string) string {
	return "[" + tool + "] " + content
}

// Messages are the tool messages of the results, in call order. A repeated
// result's message first says what it repeats (U3).
func Messages(results []CallResult) []Message {
	out := make([]Message, len(results))
	for i, r := range results {
		content := r.Content
		if note := r.Repeat.Note(); note != "" {
			content = note + "\n" + content
		}
		out[i] = Message{Role: "tool", ToolCallID: r.CallID, Content: MessageContent(r.Tool, content)}
	}
	return out
}

// History is the assistant message followed by its tool messages.
func History(assistant Message, messages []Message) []Message {
	if assistant.Role == "" {
		assistant.Role = "assistant"
	}
	return append([]Message{assistant}, messages...)
}
