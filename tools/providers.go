package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolround/toolround/round"
)

// FunctionSpec and ToolSpec are part of a round's input (client_tools), so
// they are defined with the rest of the round's contract.
type (
	FunctionSpec = round.FunctionSpec
	ToolSpec     = round.ToolSpec
)

// RunToolSpec is the schema of run_tool, the call through which deferred
// tools run (P1.1).
var RunToolSpec = FunctionSpec{
	Name:        RunTool,
	Description: "Run a tool that the turn context lists by name. Fetch its schema with find_tools first, then call run_tool with the tool's name and its arguments.",
	Parameters: Schema(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"the tool to run"},` +
		`"args":{"type":["object","string"],"description":"the tool's arguments, as an object or a JSON string"}},` +
		`"required":["name"],"additionalProperties":false}`),
}

// Toolset is what one provider's request carries: the tools array with
// schemas, and the names listed in the turn context whose schemas are fetched
// with find_tools (S1, S2).
type Toolset struct {
	Provider string     `json:"provider"`
	Tools    []ToolSpec `json:"tools"`
	Deferred []string   `json:"deferred"`
	// TurnContext is the line that lists the deferred names for the model.
	TurnContext string `json:"turn_context,omitempty"`
	// Unavailable are the worker's MCP servers whose tools are missing
	// from Tools, and why (`starter tools --worker`).
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	// Queues are the worker's tool queues (TOOL_QUEUES, Y2): whether a
	// tool worker serves each, and its tools.
	Queues []QueueState `json:"queues,omitempty"`
}

// Unavailable is a configured MCP server whose tools a worker does not
// offer.
type Unavailable struct {
	Server string `json:"server"`
	// Reason is why: the error of its start.
	Reason string `json:"reason"`
	// NeedsSignIn marks a server waiting for a person's OAuth sign-in,
	// SignIn where to do it (the console's MCP page) when known.
	NeedsSignIn bool   `json:"needs_sign_in,omitempty"`
	SignIn      string `json:"sign_in,omitempty"`
}

// ToolsFor returns the provider's tools array and deferred names.
func (r *Registry) ToolsFor(provider string, client []ToolSpec) Toolset {
	ts := Toolset{Provider: provider, Deferred: []string{}}
	clientNames := map[string]bool{}
	for _, c := range client {
		clientNames[c.Function.Name] = true
	}
	inArray := LoadedSet(provider, r.Names(), client)
	for _, name := range SortedNames(inArray) {
		if clientNames[name] {
			continue
		}
		if name == RunTool {
			ts.Tools = append(ts.Tools, ToolSpec{Type: "function", Function: RunToolSpec})
			continue
		}
		if d, ok := r.Lookup(name); ok {
			ts.Tools = append(ts.Tools, ToolSpec{Type: "function", Function: d.Spec()})
		}
	}
	ts.Tools = append(ts.Tools, client...)
	for _, name := range r.Names() {
		if !inArray[name] && !clientNames[name] {
			ts.Deferred = append(ts.Deferred, name)
		}
	}
	ts.turnContext()
	return ts
}

func (ts *Toolset) turnContext() {
	ts.TurnContext = ""
	if len(ts.Deferred) > 0 {
		ts.TurnContext = "More tools are available by name: " + strings.Join(ts.Deferred, ", ") +
			". Fetch a tool's schema with find_tools, then call it as run_tool(name, args)."
	}
}

// Without is ts less the named tools, in its array and among the deferred
// ones (a subagent's exclusions, G1).
func (ts Toolset) Without(exclude []string) Toolset {
	if len(exclude) == 0 {
		return ts
	}
	out := map[string]bool{}
	for _, n := range exclude {
		out[n] = true
	}
	var kept []ToolSpec
	for _, t := range ts.Tools {
		if !out[t.Function.Name] {
			kept = append(kept, t)
		}
	}
	ts.Tools = kept
	deferred := []string{}
	for _, n := range ts.Deferred {
		if !out[n] {
			deferred = append(deferred, n)
		}
	}
	ts.Deferred = deferred
	ts.turnContext()
	return ts
}

// Spec is the definition as the tools array lists it.
func (d *Definition) Spec() FunctionSpec {
	return FunctionSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
}

// LoadedSet is the set of names a model may call directly in a round (P1.2):
// the provider's tools array.
func LoadedSet(provider string, registered []string, client []ToolSpec) map[string]bool {
	set := map[string]bool{}
	if provider == ProviderClaudeCode {
		for _, n := range registered {
			set[n] = true
		}
	} else {
		set[RunTool] = true
		reg := map[string]bool{}
		for _, n := range registered {
			reg[n] = true
		}
		for _, n := range AlwaysLoaded {
			if reg[n] {
				set[n] = true
			}
		}
	}
	for _, c := range client {
		set[c.Function.Name] = true
	}
	return set
}

// Preloaded is the set of tools whose schemas the model has from the start of
// a run, so their first call runs (P1.4): the tools array for most providers;
// only find_tools, read_result and the client's tools for claude-code (S2).
func Preloaded(provider string, registered []string, client []ToolSpec) map[string]bool {
	if provider != ProviderClaudeCode {
		return LoadedSet(provider, registered, client)
	}
	set := map[string]bool{FindTools: true, ReadResult: true}
	for _, c := range client {
		set[c.Function.Name] = true
	}
	return set
}

// SortedNames lists the names of a set in order.
func SortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SchemaResult is the content of a deferred-schema result (P1.4).
func SchemaResult(spec FunctionSpec) string {
	if !json.Valid(spec.Parameters) {
		spec.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(spec); err != nil {
		return fmt.Sprintf("The schema of %s was not loaded yet, so it did not run; fetch it with find_tools.", spec.Name)
	}
	return fmt.Sprintf("The schema of %s was not loaded yet, so it did not run. Schema: %s. Call %s again with arguments that match this schema.",
		spec.Name, bytes.TrimSpace(buf.Bytes()), spec.Name)
}
