package round

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ParseInput decodes a round input as the command line and the console
// read it, with errors that say where it is wrong, refuses fields that are
// not part of the contract (CheckFields, U8) and validates it. Go programs
// that read a round input from JSON use it too; the workflow does not.
func ParseInput(b []byte) (*Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&in); err != nil {
		// A mistyped format reads the turn in the default format, and the
		// decoder's complaint would hide the value that caused it.
		var head struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(b, &head) == nil && head.Format != "" {
			if _, ferr := ParseFormat(head.Format); ferr != nil {
				return nil, ferr
			}
		}
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("round input is not valid JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			hint := ""
			if te.Field == "assistant.content" && te.Value == "array" {
				hint = ` (an Anthropic assistant message? set "format": "anthropic")`
			}
			return nil, fmt.Errorf("round input: field %q must be %s, not %s%s", te.Field, te.Type, te.Value, hint)
		default:
			return nil, fmt.Errorf("round input is not valid JSON: %v", err)
		}
	}
	// More() alone misses a stray ']' or '}' after the object.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("round input has data after its JSON object")
	}
	if err := CheckFields(b, &in, "the round input"); err != nil {
		return nil, err
	}
	if err := checkTurnFields(&in, "the round input"); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("invalid round input: %w", err)
	}
	return &in, nil
}
