package tools

import (
	"encoding/json"

	"github.com/toolround/toolround/round"
)

// A Toolset's tools array in each wire format (F3). The deferred names and
// the turn-context line are the same in all of them.

// AnthropicTool is a tool of a Messages API request.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ResponsesTool is a function tool of a Responses API request. Strict is
// false: Responses tools are strict by default, and the tools' schemas are
// not strict schemas (every property required, no additional ones).
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// FormattedToolset is a Toolset whose tools array is in one format: Tools
// holds ToolSpec (openai), AnthropicTool or ResponsesTool entries.
type FormattedToolset struct {
	Provider    string       `json:"provider"`
	Format      round.Format `json:"format"`
	Tools       []any        `json:"tools"`
	Deferred    []string     `json:"deferred"`
	TurnContext string       `json:"turn_context,omitempty"`
	// Queues are a worker's tool queues (Toolset.Queues, Y2).
	Queues []QueueState `json:"queues,omitempty"`
}

// emptyObject is the schema of a tool that declares none: the APIs other
// than chat completions require one.
var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

// In is the toolset with its tools array in format f (F3).
func (ts Toolset) In(f round.Format) (FormattedToolset, error) {
	f, err := round.ParseFormat(string(f))
	if err != nil {
		return FormattedToolset{}, err
	}
	out := FormattedToolset{Provider: ts.Provider, Format: f, Tools: make([]any, 0, len(ts.Tools)), Deferred: ts.Deferred, TurnContext: ts.TurnContext, Queues: ts.Queues}
	if out.Deferred == nil {
		out.Deferred = []string{}
	}
	for _, t := range ts.Tools {
		fn := t.Function
		params := fn.Parameters
		if f != round.FormatOpenAI && len(params) == 0 {
			params = emptyObject
		}
		switch f {
		case round.FormatAnthropic:
			out.Tools = append(out.Tools, AnthropicTool{Name: fn.Name, Description: fn.Description, InputSchema: params})
		case round.FormatResponses:
			out.Tools = append(out.Tools, ResponsesTool{Type: "function", Name: fn.Name, Description: fn.Description, Parameters: params})
		default:
			out.Tools = append(out.Tools, t)
		}
	}
	return out, nil
}
