package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/toolround/toolround/internal/text"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Registry holds the tools a worker can run, by name. It is safe for
// concurrent use; tools may be added while the worker runs (MCP servers that
// connect late), and each round records the part it uses in its history.
type Registry struct {
	mu   sync.RWMutex
	defs map[string]*Definition
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{defs: make(map[string]*Definition)}
}

// Register adds a tool. It rejects bad names, duplicate names, removed names,
// schemas that do not compile and definitions without a handler.
func (r *Registry) Register(def Definition) error {
	if !validName.MatchString(def.Name) {
		return fmt.Errorf("tools: register %q: a name is 1-64 letters, digits, '_' or '-'", def.Name)
	}
	if def.Name == RunTool {
		return fmt.Errorf("tools: register %q: the name is reserved for unwrapping deferred calls", def.Name)
	}
	if msg, ok := Retired(def.Name); ok {
		return fmt.Errorf("tools: register %q: %s", def.Name, msg)
	}
	if def.Handler == nil {
		return fmt.Errorf("tools: register %q: no handler", def.Name)
	}
	if why := def.kindConflict(); why != "" {
		return fmt.Errorf("tools: register %q: it sets the facts of more than one kind (%s): a round runs a tool one way", def.Name, why)
	}
	if def.SideEffect == "" {
		def.SideEffect = AtMostOnce
	}
	switch def.SideEffect {
	case ReadOnly, Idempotent, AtMostOnce:
	default:
		return fmt.Errorf("tools: register %q: unknown side-effect class %q", def.Name, def.SideEffect)
	}
	if def.Source == "" {
		def.Source = SourceApp
	}
	if def.Source == SourceMCP || def.Interactive {
		def.Concurrent = false // C2: MCP and interactive tools are always serial
	}
	if len(def.Parameters) == 0 {
		def.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	if _, err := CompileSchema(def.Parameters); err != nil {
		return fmt.Errorf("tools: register %q: %w", def.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.defs[def.Name]; dup {
		return fmt.Errorf("tools: register %q: already registered", def.Name)
	}
	d := def
	r.defs[def.Name] = &d
	return nil
}

// RegisterAll registers each definition, stopping at the first error.
func (r *Registry) RegisterAll(defs ...Definition) error {
	for _, d := range defs {
		if err := r.Register(d); err != nil {
			return err
		}
	}
	return nil
}

// MustRegister is Register for start-up code, where a bad definition is a bug.
func (r *Registry) MustRegister(defs ...Definition) {
	if err := r.RegisterAll(defs...); err != nil {
		panic(err)
	}
}

// Lookup returns the definition of a registered tool.
func (r *Registry) Lookup(name string) (*Definition, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.defs[name]
	return d, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.defs))
	for n := range r.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Definitions returns every registered definition, sorted by name.
func (r *Registry) Definitions() []*Definition {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Definition, 0, len(names))
	for _, n := range names {
		out = append(out, r.defs[n])
	}
	return out
}

// Missing explains why a name cannot run (P1.5, C3): a removed or renamed
// tool, a host tool the application has not registered, or an unknown name
// with the closest known ones. ok is false when the name is registered.
func (r *Registry) Missing(name string) (msg string, ok bool) {
	if _, found := r.Lookup(name); found {
		return "", false
	}
	if m, retiredName := Retired(name); retiredName {
		return m, true
	}
	if name == RunTool {
		return "run_tool must name another tool: run_tool(name, args)", true
	}
	msg = fmt.Sprintf("unknown tool %q", name)
	if close := r.Closest(name, 3); len(close) > 0 {
		msg += "; closest known tools: " + strings.Join(close, ", ")
	}
	return msg, true
}

// Closest returns up to n registered names nearest to name: names that
// contain it or that it contains first, then by edit distance.
func (r *Registry) Closest(name string, n int) []string {
	type cand struct {
		name  string
		score int
	}
	lower := strings.ToLower(name)
	var cands []cand
	for _, known := range r.Names() {
		k := strings.ToLower(known)
		d := text.EditDistance(lower, k)
		if strings.Contains(k, lower) || strings.Contains(lower, k) {
			d = d / 2
		}
		limit := max(len(k), len(lower))/2 + 1
		if d <= limit {
			cands = append(cands, cand{known, d})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score < cands[j].score })
	out := make([]string, 0, n)
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}
