package round

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ThoughtWithheld is the text that stands in a sealed thinking block or
// reasoning item in place of the model's own (F2).
const ThoughtWithheld = "[withheld: it holds a stored secret's value; the block is kept sealed]"

// SealThoughts replaces every thinking block (format anthropic) and
// reasoning item (format responses) of the turn whose JSON text holds
// reports true for with a block of the same type that keeps the whole
// block only in its "sealed" field, as seal gives it (F2: a stored
// secret's value is never in history). OpenThoughts gives the block back
// where the model needs it sent back. Blocks that hold no value, and turns
// of format openai, stay byte for byte; the input's fields are replaced,
// never written to.
func (in *Input) SealThoughts(holds func(string) bool, seal func(string) (string, error)) error {
	return in.mapThoughts(func(kind string, block map[string]json.RawMessage, raw json.RawMessage) (json.RawMessage, error) {
		if _, done := block["sealed"]; done || !holds(string(raw)) {
			return nil, nil
		}
		sealed, err := seal(string(raw))
		if err != nil {
			return nil, err
		}
		out := map[string]any{"type": kind, "sealed": sealed}
		if kind == "thinking" {
			out["thinking"], out["signature"] = ThoughtWithheld, ""
		} else {
			var id string
			_ = json.Unmarshal(block["id"], &id)
			out["id"], out["summary"] = id, []map[string]string{{"type": "summary_text", "text": ThoughtWithheld}}
		}
		return json.Marshal(out)
	})
}

// OpenThoughts puts back every block that SealThoughts sealed, as open
// gives it; a sealed form that does not open to a block of its type is an
// error that never holds the block's text.
func (in *Input) OpenThoughts(open func(string) (string, error)) error {
	return in.mapThoughts(func(kind string, block map[string]json.RawMessage, _ json.RawMessage) (json.RawMessage, error) {
		raw, ok := block["sealed"]
		if !ok {
			return nil, nil
		}
		var sealed string
		if err := json.Unmarshal(raw, &sealed); err != nil {
			return nil, fmt.Errorf("a sealed %s block: its sealed field is not a string", kind)
		}
		plain, err := open(sealed)
		if err != nil {
			return nil, fmt.Errorf("a sealed %s block: %w", kind, err)
		}
		var back struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(plain), &back) != nil || back.Type != kind {
			return nil, fmt.Errorf("a sealed %s block does not open to a %s block", kind, kind)
		}
		return json.RawMessage(plain), nil
	})
}

// HasThoughts reports whether the turn has a thinking block (format
// anthropic) or a reasoning item (format responses) that is not sealed.
func (in *Input) HasThoughts() bool {
	found := false
	_ = in.mapThoughts(func(_ string, block map[string]json.RawMessage, _ json.RawMessage) (json.RawMessage, error) {
		if _, sealed := block["sealed"]; !sealed {
			found = true
		}
		return nil, nil
	})
	return found
}

// mapThoughts replaces the thinking blocks or reasoning items of the turn
// for which fn returns a block; nil keeps the block as it is.
func (in *Input) mapThoughts(fn func(kind string, block map[string]json.RawMessage, raw json.RawMessage) (json.RawMessage, error)) error {
	var list []json.RawMessage
	var msg map[string]json.RawMessage
	kind := ""
	switch in.Format.Name() {
	case FormatAnthropic:
		kind = "thinking"
		if err := json.Unmarshal(in.Turn, &msg); err != nil {
			return err
		}
		if err := json.Unmarshal(msg["content"], &list); err != nil {
			return errors.New("assistant.content must be an array of content blocks in format anthropic")
		}
	case FormatResponses:
		kind = "reasoning"
		items, err := readResponses(in.Output)
		if err != nil {
			return err
		}
		list = items
	default:
		return nil
	}
	var out []json.RawMessage
	for i, raw := range list {
		var block map[string]json.RawMessage
		var typ string
		if json.Unmarshal(raw, &block) != nil || json.Unmarshal(block["type"], &typ) != nil || typ != kind {
			continue
		}
		next, err := fn(kind, block, raw)
		if err != nil {
			return err
		}
		if next == nil {
			continue
		}
		if out == nil {
			out = append([]json.RawMessage(nil), list...)
		}
		out[i] = next
	}
	if out == nil {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if kind == "reasoning" {
		in.Output = b
		return nil
	}
	msg["content"] = b
	if in.Turn, err = json.Marshal(msg); err != nil {
		return err
	}
	return nil
}
