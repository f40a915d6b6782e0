package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolround/toolround/tools"
)

// SealArguments takes the JSON arguments text of a store_secret call and
// returns it with "value" replaced by its sealed form, so that the plaintext
// never reaches the round's history. A value that is already sealed, or that
// is not a string, is left alone; arguments without a value come back as
// they are. Arguments that are not a JSON object are an error, and then the
// text is returned unchanged: the caller decides whether to submit it.
func SealArguments(key []byte, args string) (string, error) {
	fields, err := decodeObject(args)
	if err != nil {
		return args, fmt.Errorf("secrets: seal store_secret arguments: %w", err)
	}
	changed, err := sealValueField(key, fields)
	if err != nil || !changed {
		return args, err
	}
	return encodeObject(fields)
}

// SealToolCall seals the value of a store_secret call given by tool name and
// arguments text, whether it is called directly or through run_tool (whose
// "args" may be an object or a JSON string; the shape is kept). Calls of
// other tools come back unchanged.
func SealToolCall(key []byte, tool, args string) (string, error) {
	switch tool {
	case tools.StoreSecret:
		return SealArguments(key, args)
	case tools.RunTool:
	default:
		return args, nil
	}
	outer, err := decodeObject(args)
	if err != nil {
		// A malformed run_tool call may still carry a plaintext value; the
		// caller must not submit it as it is.
		if bytes.Contains([]byte(args), []byte(tools.StoreSecret)) {
			return args, fmt.Errorf("secrets: seal run_tool arguments: %w", err)
		}
		return args, nil
	}
	var name string
	if json.Unmarshal(outer["name"], &name) != nil || name != tools.StoreSecret {
		return args, nil
	}
	inner, ok := outer["args"]
	if !ok {
		return args, nil
	}
	var innerText string
	asString := json.Unmarshal(inner, &innerText) == nil
	if !asString {
		innerText = string(inner)
	}
	sealed, err := SealArguments(key, innerText)
	if err != nil {
		return args, fmt.Errorf("secrets: seal run_tool arguments: %w", err)
	}
	if sealed == innerText {
		return args, nil
	}
	if asString {
		b, err := json.Marshal(sealed)
		if err != nil {
			return args, fmt.Errorf("secrets: seal run_tool arguments: %w", err)
		}
		outer["args"] = b
	} else {
		outer["args"] = json.RawMessage(sealed)
	}
	return encodeObject(outer)
}

func sealValueField(key []byte, fields map[string]json.RawMessage) (bool, error) {
	raw, ok := fields["value"]
	if !ok {
		return false, nil
	}
	var value string
	if json.Unmarshal(raw, &value) != nil || IsSealed(value) {
		return false, nil
	}
	sealed, err := Seal(key, value)
	if err != nil {
		return false, err
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return false, fmt.Errorf("secrets: encode sealed value: %w", err)
	}
	fields["value"] = b
	return true, nil
}

func decodeObject(text string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		return nil, errors.New("arguments are not a JSON object")
	}
	if fields == nil {
		return nil, errors.New("arguments are not a JSON object")
	}
	return fields, nil
}

func encodeObject(fields map[string]json.RawMessage) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return "", fmt.Errorf("secrets: encode arguments: %w", err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
