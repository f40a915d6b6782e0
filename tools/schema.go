package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/xeipuuv/gojsonreference"
	"github.com/xeipuuv/gojsonschema"
)

// Schema is how a tool declares fixed parameters: a JSON Schema written as
// JSON in the source, compacted here. Register compiles it; a schema that is
// not JSON is a bug in the tool, so Schema panics. Parameters that take
// values from the configuration are built as a JSONSchema (SchemaOf).
func Schema(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(fmt.Sprintf("tools: schema is not JSON: %v", err))
	}
	return b.Bytes()
}

// JSONSchema is a JSON Schema built in Go, for parameters that take values
// from the configuration (a limit, a list of names, a text built at
// start-up): every value is written as JSON, so nothing is quoted by hand.
// Its fields are written in sorted order of their keywords, and Properties
// in sorted order of their names.
type JSONSchema struct {
	AdditionalProperties *bool                  `json:"additionalProperties,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Enum                 []string               `json:"enum,omitempty"`
	Items                *JSONSchema            `json:"items,omitempty"`
	MaxItems             *int                   `json:"maxItems,omitempty"`
	MaxLength            *int                   `json:"maxLength,omitempty"`
	Maximum              *float64               `json:"maximum,omitempty"`
	MinItems             *int                   `json:"minItems,omitempty"`
	MinLength            *int                   `json:"minLength,omitempty"`
	Minimum              *float64               `json:"minimum,omitempty"`
	OneOf                []*JSONSchema          `json:"oneOf,omitempty"`
	Pattern              string                 `json:"pattern,omitempty"`
	Properties           map[string]*JSONSchema `json:"properties,omitempty"`
	Required             []string               `json:"required,omitempty"`
	Type                 string                 `json:"type,omitempty"`
}

// Object is the schema of an object with these properties and no others;
// required names the ones a call must give.
func Object(properties map[string]*JSONSchema, required ...string) *JSONSchema {
	return &JSONSchema{AdditionalProperties: Ptr(false), Properties: properties, Required: required, Type: "object"}
}

// Ptr is a pointer to v, for the optional keywords of a JSONSchema.
func Ptr[T any](v T) *T { return &v }

// SchemaOf is s written as JSON. Register compiles it.
func SchemaOf(s *JSONSchema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: schema does not encode: %v", err))
	}
	return b
}

// CompileSchema parses a JSON Schema that must describe an object.
func CompileSchema(schema json.RawMessage) (*gojsonschema.Schema, error) {
	var top map[string]any
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if t, ok := top["type"]; ok && t != "object" {
		return nil, fmt.Errorf("schema type is %v, want object", t)
	}
	s, err := gojsonschema.NewSchema(localLoader{gojsonschema.NewBytesLoader(schema)})
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return s, nil
}

// localLoader is a schema whose references may point only inside itself.
// Schemas come from clients and MCP servers and are compiled in workflow
// code: a remote $ref would fetch a URL (past the network policy) or read a
// file of the worker, and make replay depend on what it finds.
type localLoader struct{ gojsonschema.JSONLoader }

func (localLoader) LoaderFactory() gojsonschema.JSONLoaderFactory { return noRemoteRefs{} }

type noRemoteRefs struct{}

func (noRemoteRefs) New(source string) gojsonschema.JSONLoader { return refusedRef(source) }

// refusedRef is a reference outside the schema; loading it fails.
type refusedRef string

func (r refusedRef) JsonSource() any { return string(r) }

func (r refusedRef) LoadJSON() (any, error) { return nil, r.err() }

func (r refusedRef) err() error {
	return fmt.Errorf("$ref %q points outside the schema; only references inside it (#/...) are allowed", string(r))
}

// outsideRef is the first, in sorted order, of a schema's $ref values that
// do not point inside it: a fault named the same way on every run.
func outsideRef(schema json.RawMessage) (string, bool) {
	var doc any
	if json.Unmarshal(schema, &doc) != nil {
		return "", false
	}
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok && !strings.HasPrefix(r, "#") {
				refs = append(refs, r)
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	if len(refs) == 0 {
		return "", false
	}
	sort.Strings(refs)
	return refs[0], true
}

func (r refusedRef) JsonReference() (gojsonreference.JsonReference, error) {
	return gojsonreference.NewJsonReference(string(r))
}

func (refusedRef) LoaderFactory() gojsonschema.JSONLoaderFactory { return noRemoteRefs{} }

// Validate checks args against a JSON Schema and returns every violation,
// each with its field path, sorted so that the message is stable (P1.7).
// Arguments that are not a JSON object are one violation.
func Validate(schema json.RawMessage, args json.RawMessage) []string {
	return new(Schemas).Validate(schema, args)
}

// Schemas validates like Validate and compiles each distinct schema once, so
// that a round of many calls of one tool compiles its schema once (workflow
// code has a second before the deadlock detector fires). The zero value is
// ready; it is not safe for concurrent use.
type Schemas struct {
	compiled map[string]compiledSchema
}

type compiledSchema struct {
	s   *gojsonschema.Schema
	err error
}

func (c *Schemas) compile(schema json.RawMessage) (*gojsonschema.Schema, error) {
	if got, ok := c.compiled[string(schema)]; ok {
		return got.s, got.err
	}
	s, err := CompileSchema(schema) //workflowcheck:ignore
	if c.compiled == nil {
		c.compiled = map[string]compiledSchema{}
	}
	c.compiled[string(schema)] = compiledSchema{s, err}
	return s, err
}

// Validate is Validate with the schemas compiled so far reused.
func (c *Schemas) Validate(schema json.RawMessage, args json.RawMessage) []string {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"(root): arguments are not valid JSON: " + err.Error()}
	}
	// Handlers decode the whole text; a second value after the object
	// would pass here and fail there, after a confirmation showed only
	// the first.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return []string{"(root): arguments are not valid JSON: more data after the arguments object"}
	}
	if _, ok := v.(map[string]any); !ok {
		return []string{fmt.Sprintf("(root): arguments must be a JSON object, got %s", jsonKind(v))}
	}
	if len(schema) == 0 {
		return nil
	}
	// Validation is a pure function of the schema and the arguments; the
	// library ranges over maps inside, so its violations are sorted below.
	s, err := c.compile(schema)
	if err != nil {
		// Which of a broken schema's faults the library reports first
		// depends on map order; workflow code needs the same text on
		// replay, so the fault itself is left to the registration check
		// (CompileSchema), which names it.
		if ref, ok := outsideRef(schema); ok {
			return []string{"(schema): " + refusedRef(ref).err().Error()}
		}
		return []string{"(schema): the tool's parameters schema does not compile, so no arguments can be checked against it"}
	}
	res, err := s.Validate(gojsonschema.NewBytesLoader(args)) //workflowcheck:ignore
	if err != nil {
		return []string{"(root): " + err.Error()}
	}
	if res.Valid() {
		return nil
	}
	out := make([]string, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		out = append(out, e.Field()+": "+e.Description())
	}
	sort.Strings(out)
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// Canonical re-encodes JSON with sorted keys and no insignificant space; ok is
// false when raw is not valid JSON (P1.3).
func Canonical(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", false // trailing data after the value
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(buf.String(), "\n"), true
}

// DedupeKey is the run-wide identity of a call: name|canonical-args, where
// args that are not valid JSON use their trimmed raw text (P1.3).
func DedupeKey(name string, args []byte) string {
	if c, ok := Canonical(args); ok {
		return name + "|" + c
	}
	return name + "|" + strings.TrimSpace(string(args))
}
