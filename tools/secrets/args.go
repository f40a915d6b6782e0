package secrets

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolround/toolround/tools"
)

// SealArguments takes the JSON arguments text of a store_secret call and
// returns it with its value sealed, so that the plaintext never reaches the
// round's history. The tool decodes its arguments as encoding/json does,
// which matches keys in any letter case and keeps the last of duplicates,
// so every key that is "value" in some letter case is sealed: a string as
// it is, anything else (a number, an object) as its JSON text; a value
// already sealed is left alone. The result is the arguments re-encoded, so
// that duplicate keys are gone. Arguments that are not a JSON object are an
// error, and then the text is returned unchanged: the caller must not
// submit it.
func SealArguments(key []byte, args string) (string, error) {
	return sealing{key: key}.arguments(args)
}

// sealing says what becomes of a store_secret value: Seal under key, or,
// when stable, a keyed digest of its plaintext (sealed values are opened
// first), so that a call reads the same sealed or not.
type sealing struct {
	key    []byte
	stable bool
	found  *[]string // when set, collects each value's plaintext
}

func (s sealing) seal(plain string) (string, error) {
	if !s.stable {
		return Seal(s.key, plain)
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte("toolround stable value v1"))
	mac = hmac.New(sha256.New, mac.Sum(nil))
	mac.Write([]byte(plain))
	return "stable:" + hex.EncodeToString(mac.Sum(nil)), nil
}

func (s sealing) arguments(args string) (string, error) {
	fields, err := decodeObject(args)
	if err != nil {
		return args, fmt.Errorf("secrets: seal store_secret arguments: %w", err)
	}
	changed := false
	for k, raw := range fields {
		if !strings.EqualFold(k, "value") {
			continue
		}
		sealed, err := s.raw(raw)
		if err != nil {
			return args, err
		}
		if sealed != nil {
			fields[k], changed = sealed, true
		}
	}
	if !changed && len(fields) > 0 && !hasDuplicateKeys(args) {
		return args, nil
	}
	return encodeObject(fields)
}

// raw seals one JSON value; nil when there is nothing to seal.
func (s sealing) raw(raw json.RawMessage) (json.RawMessage, error) {
	text := strings.TrimSpace(string(raw))
	if text == "null" {
		return nil, nil
	}
	var value string
	if json.Unmarshal(raw, &value) == nil {
		text = value
		if IsSealed(value) {
			if !s.stable {
				return nil, nil
			}
			plain, err := Open(s.key, value)
			if err != nil {
				return nil, nil
			}
			text = plain
		}
	}
	if s.found != nil {
		*s.found = append(*s.found, text)
	}
	sealed, err := s.seal(text)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return nil, fmt.Errorf("secrets: encode sealed value: %w", err)
	}
	return b, nil
}

// hasDuplicateKeys reports whether a JSON object repeats a key at its top
// level; decoding into a map keeps only the last, so the text still holds
// the others.
func hasDuplicateKeys(text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := t.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// SealToolCall seals the value of a store_secret call given by tool name and
// arguments text, whether it is called directly or through run_tool (whose
// "args" may be an object or a JSON string; the shape is kept). Names match
// whatever their letter case and surrounding spaces, and run_tool's keys in
// any letter case, since sealing one call too many costs nothing and one too
// few puts a secret in history. Calls of other tools come back unchanged.
func SealToolCall(key []byte, tool, args string) (string, error) {
	return sealing{key: key}.toolCall(tool, args)
}

// StableToolCall is SealToolCall with each store_secret value, sealed or
// not, replaced by a keyed digest of its plaintext: the same text whether
// or not the call was sealed (Seal takes a fresh nonce each time), for a
// digest of a round's input. It is never submitted.
func StableToolCall(key []byte, tool, args string) (string, error) {
	return sealing{key: key, stable: true}.toolCall(tool, args)
}

// ToolCallValues returns the plaintext of each store_secret value of a
// call, spelled in any of the ways SealToolCall reads (sealed values are
// opened with key; one that does not open gives none). A
// thinking block or reasoning item that holds one of them is sealed too
// (F2). A call that cannot be read gives none.
func ToolCallValues(key []byte, tool, args string) []string {
	var found []string
	_, _ = sealing{key: key, stable: true, found: &found}.toolCall(tool, args)
	return found
}

// Holds reports, for text, whether it holds one of values in any of the
// encodings the Redactor reads; nil when there are no values.
func Holds(values []string) func(string) bool {
	m := make(map[string]string, len(values))
	for i, v := range values {
		m[fmt.Sprint(i)] = v
	}
	r := NewRedactor(m)
	if r == nil {
		return nil
	}
	return r.Contains
}

func (s sealing) toolCall(tool, args string) (string, error) {
	switch {
	case sameName(tool, tools.StoreSecret):
		return s.arguments(args)
	case sameName(tool, tools.RunTool):
	default:
		return args, nil
	}
	outer, err := decodeObject(args)
	if err != nil {
		// A malformed run_tool call may still carry a plaintext value; the
		// caller must not submit it as it is.
		if mentionsStoreSecret(args) {
			return args, fmt.Errorf("secrets: seal run_tool arguments: %w", err)
		}
		return args, nil
	}
	target := false
	for k, raw := range outer {
		var name string
		if strings.EqualFold(k, "name") && json.Unmarshal(raw, &name) == nil && sameName(name, tools.StoreSecret) {
			target = true
		}
	}
	if !target {
		return args, nil
	}
	changed := false
	for k, inner := range outer {
		if !strings.EqualFold(k, "args") {
			continue
		}
		sealed, err := s.inner(inner)
		if err != nil {
			return args, fmt.Errorf("secrets: seal run_tool arguments: %w", err)
		}
		if sealed != nil {
			outer[k], changed = sealed, true
		}
	}
	if !changed && !hasDuplicateKeys(args) {
		return args, nil
	}
	return encodeObject(outer)
}

// inner seals run_tool's args, an object or a JSON string holding one;
// nil when nothing changed.
func (s sealing) inner(inner json.RawMessage) (json.RawMessage, error) {
	if strings.TrimSpace(string(inner)) == "null" {
		return nil, nil
	}
	var text string
	asString := json.Unmarshal(inner, &text) == nil
	if !asString {
		text = string(inner)
	}
	sealed, err := s.arguments(text)
	if err != nil {
		return nil, err
	}
	if sealed == text {
		return nil, nil
	}
	if !asString {
		return json.RawMessage(sealed), nil
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func sameName(got, want string) bool { return strings.EqualFold(strings.TrimSpace(got), want) }

// mentionsStoreSecret looks for the name in text that may escape it, once
// or twice (run_tool's args as a JSON string).
func mentionsStoreSecret(text string) bool {
	for range 3 {
		if strings.Contains(strings.ToLower(text), tools.StoreSecret) {
			return true
		}
		b := &builder{}
		decodeJSON(text, b)
		text = b.text.String()
	}
	return false
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
