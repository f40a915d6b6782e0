package agent

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"reflect"
	"sort"
	"strings"
	"text/template/parse"
	"time"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

//go:embed data/templates/*.html
var templateFiles embed.FS

// builtinTemplates describes the named templates and the data each reads.
var builtinTemplates = map[string]string{
	"page":   "title, optional heading, body (text) and/or paragraphs (list of text)",
	"list":   "title, optional intro, items (list of text), optional ordered (true for a numbered list)",
	"table":  "title, optional intro and caption, columns (list of headers), rows (list of lists of cells)",
	"report": "title, optional summary, sections (list of {heading, body, items})",
}

// Internal template functions that the renderer inserts to count work.
const (
	rangeStepFunc = "_range_step"
	callStepFunc  = "_call_step"
)

var errStepCap = errors.New("step budget spent")

type renderer struct {
	cfg    Config
	shared string // the layout and the named templates
}

func newRenderer(cfg Config) (*renderer, error) {
	names, err := templateFiles.ReadDir("data/templates")
	if err != nil {
		return nil, fmt.Errorf("agent: html templates: %w", err)
	}
	var all strings.Builder
	for _, e := range names {
		b, err := templateFiles.ReadFile("data/templates/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("agent: html templates: %w", err)
		}
		all.Write(b)
	}
	r := &renderer{cfg: cfg, shared: all.String()}
	// Parse once at start so that a broken built-in fails registration.
	for name := range builtinTemplates {
		if _, err := r.render(context.Background(), "", name, map[string]any{"title": "t"}); err != nil {
			return nil, fmt.Errorf("agent: html template %s: %w", name, err)
		}
	}
	return r, nil
}

func (r *renderer) definition() tools.Definition {
	names := make([]string, 0, len(builtinTemplates))
	for n := range builtinTemplates {
		names = append(names, n)
	}
	sort.Strings(names)
	var builtins []string
	for _, n := range names {
		builtins = append(builtins, n+" ("+builtinTemplates[n]+")")
	}
	return tools.Definition{
		Name: "html_template",
		Description: "Render an HTML page from data with Go html/template, which escapes every value for its place in the page. " +
			"Give either name, a built-in template: " + strings.Join(builtins, "; ") + ", " +
			"or template, your own template text ({{.field}}, {{range .list}}...{{end}}, {{if}}, {{with}}; the named templates can be called with {{template \"head\" .}} and {{template \"foot\" .}}). " +
			"It returns the HTML and writes nothing; save it with edit_file if needed.",
		Parameters: tools.SchemaOf(nameOrTemplate(tools.Object(map[string]*tools.JSONSchema{
			"data":     {Description: "the values the template reads, as {{.key}}", Type: "object"},
			"name":     {Description: "a built-in template", Enum: names, Type: "string"},
			"template": {Description: "template text in Go html/template syntax", MaxLength: tools.Ptr(r.cfg.MaxTemplateChars), MinLength: tools.Ptr(1), Type: "string"},
		}))),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(r.handle),
	}
}

type rendererArgs = struct {
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
}

func (r *renderer) handle(ctx context.Context, req tools.Request, args rendererArgs) (tools.Result, error) {
	switch {
	case args.Name != "" && args.Template != "":
		return tools.Result{}, errors.New("give either name or template, not both")
	case args.Name == "" && args.Template == "":
		return tools.Result{}, errors.New("give name (a built-in template) or template (template text)")
	}
	if len(args.Template) > r.cfg.MaxTemplateChars {
		return tools.Result{}, fmt.Errorf("the template is %d characters, more than the limit of %d", len(args.Template), r.cfg.MaxTemplateChars)
	}
	if len(args.Data) > r.cfg.MaxTemplateDataBytes {
		return tools.Result{}, fmt.Errorf("data is %d bytes, more than the limit of %d", len(args.Data), r.cfg.MaxTemplateDataBytes)
	}
	data, err := decodeTemplateData(args.Data)
	if err != nil {
		return tools.Result{}, err
	}
	out, err := r.render(ctx, args.Template, args.Name, data)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Text(out), nil
}

// decodeTemplateData turns JSON into maps, slices and scalars, with whole
// numbers as int64 so that they print as 3, not 3e+00, and compare with
// integer literals in {{if eq .n 3}}.
func decodeTemplateData(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("data is not valid JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("data must be a JSON object")
	}
	return normalizeNumbers(m).(map[string]any), nil
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	}
	return v
}

// render parses either src or the named built-in and executes it with a
// bounded amount of work: see guard.
func (r *renderer) render(ctx context.Context, src, name string, data map[string]any) (string, error) {
	steps := 0
	step := func(cost int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		steps += cost
		if steps > r.cfg.TemplateSteps {
			return errStepCap
		}
		return nil
	}
	funcs := template.FuncMap{
		rangeStepFunc: func(v any) (any, error) { return v, step(rangeCost(v)) },
		callStepFunc:  func(v ...any) (any, error) { return lastArg(v), step(1) },
	}
	root := template.New("html_template").Funcs(funcs)
	if _, err := root.Parse(r.shared); err != nil {
		return "", fmt.Errorf("built-in templates: %w", err)
	}
	entry := name
	if src != "" {
		entry = "template"
		if _, err := root.New(entry).Parse(src); err != nil {
			return "", fmt.Errorf("cannot parse the template: %s", cleanTemplateErr(err))
		}
	} else if root.Lookup(name) == nil {
		return "", fmt.Errorf("no built-in template %q", name)
	}
	for _, t := range root.Templates() {
		if t.Tree != nil {
			guard(t.Tree, t.Tree.Root)
		}
	}
	w := text.NewStrictWriter(r.cfg.MaxTemplateOutput)
	if err := root.ExecuteTemplate(w, entry, data); err != nil {
		switch {
		case errors.Is(err, text.ErrFull):
			return "", fmt.Errorf("the page is larger than %d bytes; render less data or split it into pages", r.cfg.MaxTemplateOutput)
		case errors.Is(err, errStepCap):
			return "", fmt.Errorf("rendering needs more than %d steps (loop iterations and template calls); render less data or fewer nested loops", r.cfg.TemplateSteps)
		case ctx.Err() != nil:
			return "", ctx.Err()
		}
		return "", errors.New(cleanTemplateErr(err))
	}
	return w.String(), nil
}

// guard makes every range and every template call with data pay into the
// step budget: the range's collection and the call's argument are piped
// through a counting function. Loops with empty bodies and recursion over
// nested data write nothing, so an output cap alone would not stop them.
func guard(tree *parse.Tree, node parse.Node) {
	switch n := node.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			guard(tree, c)
		}
	case *parse.RangeNode:
		appendStep(tree, n.Pipe, rangeStepFunc)
		guard(tree, n.List)
		guard(tree, n.ElseList)
	case *parse.IfNode:
		guard(tree, n.List)
		guard(tree, n.ElseList)
	case *parse.WithNode:
		guard(tree, n.List)
		guard(tree, n.ElseList)
	case *parse.TemplateNode:
		// Without a pipe the callee gets no data, so its recursion cannot
		// depend on data and ends at text/template's depth limit.
		if n.Pipe != nil {
			appendStep(tree, n.Pipe, callStepFunc)
		}
	}
}

func appendStep(tree *parse.Tree, pipe *parse.PipeNode, fn string) {
	if pipe == nil {
		return
	}
	ident := parse.NewIdentifier(fn).SetTree(tree).SetPos(pipe.Pos)
	pipe.Cmds = append(pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pipe.Pos, Args: []parse.Node{ident}})
}

func rangeCost(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return rv.Len()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(min(max(rv.Int(), 0), math.MaxInt32))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(min(rv.Uint(), math.MaxInt32))
	}
	return 1
}

func lastArg(v []any) any {
	if len(v) == 0 {
		return nil
	}
	return v[len(v)-1]
}

// cleanTemplateErr hides the internal step functions from messages.
func cleanTemplateErr(err error) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, " | "+rangeStepFunc, "")
	msg = strings.ReplaceAll(msg, " | "+callStepFunc, "")
	return msg
}

// nameOrTemplate is s that takes a name or a template.
func nameOrTemplate(s *tools.JSONSchema) *tools.JSONSchema {
	s.OneOf = []*tools.JSONSchema{{Required: []string{"name"}}, {Required: []string{"template"}}}
	return s
}
