package round

import "encoding/json"

// FunctionSpec is a tool as an LLM request lists it.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolSpec is one entry of an OpenAI-style tools array.
type ToolSpec struct {
	Type     string       `json:"type"`
	Function FunctionSpec `json:"function"`
}

// UnmarshalJSON accepts both {"type":"function","function":{...}} and a bare
// {"name":...,"description":...,"parameters":...}.
func (t *ToolSpec) UnmarshalJSON(b []byte) error {
	var wrapped struct {
		Type     string        `json:"type"`
		Function *FunctionSpec `json:"function"`
	}
	if err := json.Unmarshal(b, &wrapped); err != nil {
		return err
	}
	if wrapped.Function != nil {
		t.Type, t.Function = "function", *wrapped.Function
		return nil
	}
	var bare FunctionSpec
	if err := json.Unmarshal(b, &bare); err != nil {
		return err
	}
	t.Type, t.Function = "function", bare
	return nil
}
