package round

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/toolround/toolround/internal/text"
)

// ErrUnknownField is matched (errors.Is) by an UnknownFieldError.
var ErrUnknownField error = &Error{Code: CodeInvalidInput, Message: "unknown field"}

// UnknownFieldError is a field that is not part of the contract of the
// object it is in (U8).
type UnknownFieldError struct {
	// Field is the name as written; In is where it was, as a path below
	// What ("" at the top level): "assistant.tool_calls[0].function".
	Field, In string
	// What names the whole document: "the round input", "the request".
	What string
	// Suggest is the closest known name, "" when none is close.
	Suggest string
}

func (e *UnknownFieldError) Error() string {
	s := fmt.Sprintf("unknown field %q in ", e.Field)
	if e.In != "" {
		s += e.In + " of "
	}
	s += e.What
	if e.Suggest != "" {
		s += fmt.Sprintf("; did you mean %q?", e.Suggest)
	}
	return s
}

// Is makes errors.Is(err, ErrUnknownField) true, as for any *Error of
// CodeInvalidInput.
func (e *UnknownFieldError) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == CodeInvalidInput
}

// DuplicateFieldError is a field written twice in one object (U8):
// encoding/json would keep the last one silently, while another reader
// of the same document may take the first.
type DuplicateFieldError struct {
	// Field, In and What are as in UnknownFieldError.
	Field, In, What string
}

func (e *DuplicateFieldError) Error() string {
	s := fmt.Sprintf("duplicate field %q in ", e.Field)
	if e.In != "" {
		s += e.In + " of "
	}
	return s + e.What
}

// Is makes errors.Is(err, ErrUnknownField) true, as for any *Error of
// CodeInvalidInput.
func (e *DuplicateFieldError) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == CodeInvalidInput
}

// CheckFields reports the first field of the JSON document b that the
// contract of v's type does not know, at every level of its documented
// objects (U8). The known names are v's json tags, so they follow the
// struct; only the provider shapes below add names of their own. Names
// match exactly: encoding/json would read "Session_ID" as session_id,
// which is refused here with the right name as the suggestion; a field
// written twice in a documented object is refused too. What a
// provider puts in an assistant message beyond its tool calls, a run's
// state and the raw JSON fields (arguments, parameters) pass as they are.
// b must already decode into v; CheckFields does not report syntax or
// type errors. Workflows and activities never call it: they decode
// leniently, so that a newer build's payload does not break an older one.
func CheckFields(b []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	doc, err := decodeDoc(dec)
	if err != nil {
		return nil // the caller's decoding reports it
	}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return nil
	}
	return checkValue(doc, t, "", what)
}

var (
	rawType      = reflect.TypeOf(json.RawMessage(nil))
	argsType     = reflect.TypeOf(Arguments(""))
	stateType    = reflect.TypeOf(RunState{})
	messageType  = reflect.TypeOf(Message{})
	toolSpecType = reflect.TypeOf(ToolSpec{})
	funcSpecType = reflect.TypeOf(FunctionSpec{})
)

// functionSpecExtra are the names of a tool's function object that
// providers define beyond FunctionSpec: OpenAI's strict.
var functionSpecExtra = []string{"strict"}

// callFields are the fields of an assistant message that carry its calls:
// in a message that otherwise passes as it is, a near miss of one of them
// ("tool_call") is refused, as it would silently give a round no calls.
var callFields = []string{"tool_calls"}

// duplicate stands, in a document decodeDoc read, for the value of a key
// that its object has more than once.
type duplicate struct{}

// decodeDoc reads one JSON value as Decode into an any would, but marks a
// key that an object has twice: its value is duplicate{}.
func decodeDoc(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeDoc(dec)
			if err != nil {
				return nil, err
			}
			if _, seen := obj[k]; seen {
				v = duplicate{}
			}
			obj[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return obj, nil
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeDoc(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return list, nil
	}
	return tok, nil
}

// duplicateKey is the first key (in sorted order) that the JSON object raw
// has twice, "" when none or when raw is not an object.
func duplicateKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	doc, err := decodeDoc(dec)
	if err != nil {
		return ""
	}
	obj, _ := doc.(map[string]any)
	for _, k := range sortedKeys(obj) {
		if _, dup := obj[k].(duplicate); dup {
			return k
		}
	}
	return ""
}

func checkValue(doc any, t reflect.Type, path, what string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case rawType, argsType, stateType:
		return nil
	case messageType:
		return checkMessage(doc, path, what)
	case toolSpecType:
		return checkToolSpec(doc, path, what)
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		return checkObject(obj, fields, nil, path, what, func(name string, v any, p string) error {
			return checkValue(v, fields[name].Type, p, what)
		})
	case reflect.Slice, reflect.Array:
		list, ok := doc.([]any)
		if !ok {
			return nil
		}
		for i, v := range list {
			if err := checkValue(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), what); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMessage lets every field of an assistant message pass but near
// misses of its call fields, the message's own fields in another case or
// twice, and checks its tool_calls.
func checkMessage(doc any, path, what string) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	fields := jsonFields(messageType)
	for _, k := range sortedKeys(obj) {
		if _, known := fields[k]; known {
			if _, dup := obj[k].(duplicate); dup {
				return &DuplicateFieldError{Field: k, In: path, What: what}
			}
			continue
		}
		if name, folded := lookupFold(fields, k); folded {
			return &UnknownFieldError{Field: k, In: path, What: what, Suggest: name}
		}
		if s := closest(k, callFields); s != "" {
			return &UnknownFieldError{Field: k, In: path, What: what, Suggest: s}
		}
	}
	if v, ok := obj["tool_calls"]; ok {
		return checkValue(v, fields["tool_calls"].Type, join(path, "tool_calls"), what)
	}
	return nil
}

// checkToolSpec checks a client tool in either shape ToolSpec accepts:
// {"type", "function": {...}} or the function object alone.
func checkToolSpec(doc any, path, what string) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	if f, wrapped := obj["function"]; wrapped && f != nil {
		fields := jsonFields(toolSpecType)
		return checkObject(obj, fields, nil, path, what, func(name string, v any, p string) error {
			if name == "function" {
				return checkFunctionSpec(v, p, what, nil)
			}
			return nil
		})
	}
	return checkFunctionSpec(obj, path, what, []string{"type", "function"})
}

func checkFunctionSpec(doc any, path, what string, extra []string) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	return checkObject(obj, jsonFields(funcSpecType), append(extra, functionSpecExtra...), path, what, nil)
}

// checkObject refuses a key of obj that is neither in fields nor in extra
// (matched exactly: a name in another case is unknown, its suggestion the
// right one) or that obj has twice, and calls deeper for each key of
// fields.
func checkObject(obj map[string]any, fields map[string]reflect.StructField, extra []string, path, what string,
	deeper func(name string, v any, path string) error) error {
	for _, k := range sortedKeys(obj) {
		if _, dup := obj[k].(duplicate); dup {
			return &DuplicateFieldError{Field: k, In: path, What: what}
		}
		name, known := k, false
		if _, ok := fields[k]; ok {
			known = true
		}
		if !known {
			if slices.Contains(extra, k) {
				continue
			}
			names := append(keys(fields), extra...)
			return &UnknownFieldError{Field: k, In: path, What: what, Suggest: closest(k, names)}
		}
		if deeper != nil {
			if err := deeper(name, obj[k], join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields are a struct's fields by their JSON names, as encoding/json
// reads them (embedded structs' fields included).
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, sf := range jsonFields(et) {
					if _, ok := out[n]; !ok {
						out[n] = sf
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// lookupFold is the field whose name is k in another case, as
// encoding/json would match it.
func lookupFold(fields map[string]reflect.StructField, k string) (string, bool) {
	for _, n := range keys(fields) {
		if strings.EqualFold(n, k) {
			return n, true
		}
	}
	return "", false
}

func keys(fields map[string]reflect.StructField) []string {
	out := make([]string, 0, len(fields))
	for n := range fields {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(obj map[string]any) []string {
	out := make([]string, 0, len(obj))
	for k := range obj {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// closest is the name of known nearest to name, when it is near enough to
// be a slip: at most a third of the longer name's letters apart, and at most
// 3, by edit distance (a swap of two neighbours counts one). Ties go to the
// first in known.
func closest(name string, known []string) string {
	return text.Closest(name, known)
}
