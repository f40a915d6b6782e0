package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolround/toolround/tools"
)

const findToolsSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":1000,"description":"words matched against tool names and descriptions; select:NAME (or select:A,B) loads exactly those tools"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":25,"description":"at most this many tools (default 5)"}},` +
	`"required":["query"],"additionalProperties":false}`

// FindTools is find_tools: it returns the schemas of the tools that match a
// query, and the engine marks them fetched for the run (S4).
func FindTools(reg *tools.Registry) tools.Definition {
	return tools.Definition{
		Name:        tools.FindTools,
		Description: "Find tools by what they do and load their schemas. Returns each matching tool's name, description and JSON Schema; call a loaded tool with run_tool(name, args) (or directly, if your tool list has it). Use select:NAME to load one tool by name.",
		Parameters:  tools.Schema(findToolsSchema),
		Concurrent:  true,
		SideEffect:  tools.ReadOnly,
		Confirm:     tools.ConfirmNever,
		Source:      tools.SourceBuiltin,
		Handler: tools.Typed(func(ctx context.Context, req tools.Request, a struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}) (tools.Result, error) {
			if a.Limit <= 0 {
				a.Limit = 5
			}
			defs, missing := findTools(reg, a.Query, a.Limit)
			if len(defs) == 0 {
				msg := fmt.Sprintf("no tool matches %q", a.Query)
				if len(missing) > 0 {
					msg += ": " + strings.Join(missing, "; ")
				}
				return tools.Result{}, fmt.Errorf("%s; the tools are: %s", msg, strings.Join(visibleNames(reg), ", "))
			}
			specs := make([]tools.FunctionSpec, len(defs))
			names := make([]string, len(defs))
			for i, d := range defs {
				specs[i], names[i] = d.Spec(), d.Name
			}
			body, err := json.Marshal(specs)
			if err != nil {
				return tools.Result{}, fmt.Errorf("encode schemas: %w", err)
			}
			content := fmt.Sprintf("Loaded %d tool(s): %s. Call them with run_tool(name, args) (or directly if they are in your tool list).\n%s",
				len(names), strings.Join(names, ", "), body)
			if len(missing) > 0 {
				content += "\nNot found: " + strings.Join(missing, "; ")
			}
			return tools.Result{Content: content, Fetched: names}, nil
		}),
	}
}

func visibleNames(reg *tools.Registry) []string {
	var out []string
	for _, n := range reg.Names() {
		if n != tools.FindTools {
			out = append(out, n)
		}
	}
	return out
}

// findTools ranks the registered tools for a query: exact selects first,
// else words in the name count more than words in the description.
func findTools(reg *tools.Registry, query string, limit int) (found []*tools.Definition, missing []string) {
	query = strings.TrimSpace(query)
	if rest, ok := strings.CutPrefix(query, "select:"); ok {
		for _, name := range strings.Split(rest, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if d, ok := reg.Lookup(name); ok {
				found = append(found, d)
			} else if msg, gone := reg.Missing(name); gone {
				missing = append(missing, msg)
			}
		}
		return found, missing
	}
	words := strings.Fields(strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(query)))
	type scored struct {
		d     *tools.Definition
		score int
	}
	var hits []scored
	for _, d := range reg.Definitions() {
		if d.Name == tools.FindTools {
			continue
		}
		name := strings.ToLower(d.Name)
		desc := strings.ToLower(d.Description)
		score := 0
		if name == strings.ToLower(query) {
			score += 100
		}
		for _, w := range words {
			if strings.Contains(name, w) {
				score += 10
			}
			if strings.Contains(desc, w) {
				score += 3
			}
		}
		if score > 0 {
			hits = append(hits, scored{d, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	for i := 0; i < len(hits) && i < limit; i++ {
		found = append(found, hits[i].d)
	}
	return found, nil
}
