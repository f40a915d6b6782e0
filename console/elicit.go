package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// An MCP server's request for input (E1) on the page: the server's text
// shown as text, a form built from the requested schema (its top-level
// properties, as MCP allows), or a URL shown in full with its host and
// never made a link.

// elicitField is one input of the form.
type elicitField struct {
	Name, Title, Description string
	// Input is the HTML input type: text, number, checkbox, or select
	// (Options) for an enum.
	Input    string
	Step     string // "1" for an integer
	Required bool
	Default  string
	Checked  bool
	// Options are a select's choices; Multiple: several may be chosen
	// (an array of an enum).
	Options  []elicitOption
	Multiple bool
}

// elicitOption is one choice: the value sent and the label shown.
type elicitOption struct {
	Value, Label string
	Selected     bool
}

// choice is a titled value of oneOf or anyOf.
type choice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// propSchema is what the form reads of one property.
type propSchema struct {
	Type        any      `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Default     any      `json:"default"`
	Enum        []any    `json:"enum"`
	OneOf       []choice `json:"oneOf"`
	Format      string   `json:"format"`
	Items       *struct {
		Enum  []any    `json:"enum"`
		AnyOf []choice `json:"anyOf"`
	} `json:"items"`
}

// options are the property's choices: enum, oneOf, or an array's items.
func (p propSchema) options() []elicitOption {
	var out []elicitOption
	add := func(enum []any, titled []choice) {
		for _, v := range enum {
			out = append(out, elicitOption{Value: fmt.Sprint(v), Label: fmt.Sprint(v)})
		}
		for _, c := range titled {
			o := elicitOption{Value: fmt.Sprint(c.Const), Label: c.Title}
			if o.Label == "" {
				o.Label = o.Value
			}
			out = append(out, o)
		}
	}
	add(p.Enum, p.OneOf)
	if p.Items != nil {
		add(p.Items.Enum, p.Items.AnyOf)
	}
	chosen := map[string]bool{}
	switch d := p.Default.(type) {
	case nil:
	case []any:
		for _, v := range d {
			chosen[fmt.Sprint(v)] = true
		}
	default:
		chosen[fmt.Sprint(d)] = true
	}
	for i := range out {
		out[i].Selected = chosen[out[i].Value]
	}
	return out
}

type formSchema struct {
	Properties map[string]propSchema `json:"properties"`
	Required   []string              `json:"required"`
}

// typeOf is a property's JSON type; the first non-null of a list.
func (p propSchema) typeOf() string {
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				return s
			}
		}
	}
	return "string"
}

// elicitFields are the form's inputs, in name order.
func elicitFields(schema json.RawMessage) []elicitField {
	var s formSchema
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]elicitField, 0, len(names))
	for _, n := range names {
		p := s.Properties[n]
		f := elicitField{Name: n, Title: p.Title, Description: p.Description, Required: required[n], Input: "text"}
		if f.Title == "" {
			f.Title = n
		}
		if p.Default != nil {
			f.Default = fmt.Sprint(p.Default)
		}
		switch t := p.typeOf(); {
		case t == "array":
			f.Input, f.Multiple, f.Options = "select", true, p.options()
		case len(p.Enum) > 0 || len(p.OneOf) > 0:
			f.Input, f.Options = "select", p.options()
		case t == "boolean":
			f.Input, f.Checked = "checkbox", p.Default == true
		case t == "integer":
			f.Input, f.Step = "number", "1"
		case t == "number":
			f.Input, f.Step = "number", "any"
		case p.Format == "email":
			f.Input = "email"
		case p.Format == "date":
			f.Input = "date"
		}
		out = append(out, f)
	}
	return out
}

// formContent turns the page's form (field.<name> inputs) into the
// answer's content, typed as the schema says. An empty optional input is
// left out; a number that does not parse is an error.
func formContent(schema json.RawMessage, form url.Values) (map[string]any, error) {
	var s formSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("%w: the request's schema cannot be read: %v", ErrBadInput, err)
	}
	out := map[string]any{}
	for name, p := range s.Properties {
		v, given := form["field."+name]
		t := p.typeOf()
		if t == "boolean" {
			if len(p.Enum) == 0 {
				out[name] = given && len(v) > 0 && (v[0] == "on" || v[0] == "true" || v[0] == "1")
				continue
			}
		}
		if !given || len(v) == 0 || strings.TrimSpace(v[0]) == "" {
			continue
		}
		if t == "array" {
			out[name] = append([]string(nil), v...)
			continue
		}
		text := strings.TrimSpace(v[0])
		switch t {
		case "integer":
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: %s must be a whole number", ErrBadInput, name)
			}
			out[name] = n
		case "number":
			n, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: %s must be a number", ErrBadInput, name)
			}
			out[name] = n
		case "boolean":
			out[name] = text == "true"
		default:
			out[name] = v[0]
		}
	}
	return out, nil
}

// pendingSchema is the requested schema of the call's current request.
func (s *Server) pendingSchema(ctx context.Context, workflowID, callID string) (json.RawMessage, error) {
	v, err := s.b.Round(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	for _, p := range v.Pending {
		if p.CallID == callID && p.Elicitation != nil {
			return p.Elicitation.RequestedSchema, nil
		}
	}
	return nil, fmt.Errorf("call %s of %s does not wait for an answer to an MCP server: %w", callID, workflowID, ErrNotWaiting)
}
