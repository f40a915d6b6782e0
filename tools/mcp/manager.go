// Package mcp connects a worker to MCP servers (stdio commands or streamable
// HTTP endpoints) and registers their tools as mcp_<server>_<tool>.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/tools"
)

// clientInfo is how the worker introduces itself to MCP servers.
var clientInfo = &sdk.Implementation{Name: "toolround", Version: "1"}

// Manager holds the connections to the configured MCP servers.
type Manager struct {
	cfg     Config
	servers []*server
	// ctx ends with Close: it bounds the wait for sign-ins (awaitGrant).
	ctx    context.Context
	cancel context.CancelFunc
	// mu guards reg, the registry of the last Register, and registered,
	// the tools of each server that are in it (readerKey for its read
	// tool).
	mu         sync.Mutex
	reg        *tools.Registry
	registered map[*server]map[string]bool
}

// ServerStatus says how one configured server is doing.
type ServerStatus struct {
	Name string
	// Transport is "stdio" or "http".
	Transport string
	// Err is why the server failed to start; its tools are then not registered.
	Err error
	// Connected reports a live session (a stdio server that died is restarted
	// by its next call).
	Connected bool
	// PID is the process id of a connected stdio server.
	PID int
	// Connects counts the sessions opened so far, the first one included.
	Connects int
	// Tools are the server's own tool names, as listed when it started.
	Tools []string
	// NeedsSignIn marks a server that waits for a person's OAuth sign-in
	// (Err is then ErrNeedsSignIn); SignIn is where, when known.
	NeedsSignIn bool
	SignIn      string
}

// Unavailable lists the servers whose tools are missing, and why.
func (m *Manager) Unavailable() []tools.Unavailable {
	var out []tools.Unavailable
	for _, st := range m.Status() {
		if st.Err == nil {
			continue
		}
		out = append(out, tools.Unavailable{Server: st.Name, Reason: st.Err.Error(), NeedsSignIn: st.NeedsSignIn, SignIn: st.SignIn})
	}
	return out
}

// Connect starts every configured server and lists its tools, all servers at
// once. A server that fails to start is logged and left out (see Status); it
// does not fail Connect, which only refuses a configuration that is invalid.
func Connect(ctx context.Context, cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	seen := make(map[string]bool)
	for _, sc := range cfg.Servers {
		if err := sc.validate(); err != nil {
			return nil, fmt.Errorf("mcp: %w", err)
		}
		if seen[sc.Name] {
			return nil, fmt.Errorf("mcp: server %q is configured twice", sc.Name)
		}
		seen[sc.Name] = true
	}
	m := &Manager{cfg: cfg, registered: map[*server]map[string]bool{}}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, sc := range cfg.Servers {
		if sc.Disabled {
			continue
		}
		s := newServer(sc, cfg)
		s.listed = m.registerLater
		m.servers = append(m.servers, s)
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].cfg.Name < m.servers[j].cfg.Name })

	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() {
			if err := s.start(ctx); err != nil {
				s.log.Warn("mcp: server failed to start; its tools are not available", "err", err)
				return
			}
			s.log.Info("mcp: server connected", "tools", len(s.tools))
		})
	}
	wg.Wait()
	for _, s := range m.servers {
		s.mu.Lock()
		needs := errors.Is(s.startErr, ErrNeedsSignIn)
		s.mu.Unlock()
		if needs && cfg.Grants != nil {
			go m.awaitGrant(s)
		}
	}
	return m, nil
}

// awaitGrant connects s, which needs a sign-in, once a person has signed
// it in through the console, and registers its tools in the registry of
// the last Register.
func (m *Manager) awaitGrant(s *server) {
	s.log.Warn("mcp: the server waits for a sign-in; its tools come once a person signs it in", "where", s.signInHint())
	tick := time.NewTicker(m.cfg.SignInPoll)
	defer tick.Stop()
	var tried string
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		gr, err := m.cfg.Grants.Grant(m.ctx, s.cfg.Name, s.cfg.URL)
		if err != nil || gr == nil || gr.Token.AccessToken == tried {
			continue
		}
		tried = gr.Token.AccessToken
		if err := s.start(m.ctx); err != nil {
			s.log.Warn("mcp: the server still does not connect after a sign-in", "err", err)
			continue
		}
		s.log.Info("mcp: server connected after a sign-in", "tools", len(s.tools))
		m.registerLater(s)
		return
	}
}

// Status reports every configured server, sorted by name.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{
			Name:      s.cfg.Name,
			Transport: "http",
			Err:       s.startErr,
			Connected: s.sess != nil,
			PID:       s.proc.pid,
			Connects:  s.connects,
		}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, t.Name)
		}
		s.mu.Unlock()
		if st.NeedsSignIn = errors.Is(st.Err, ErrNeedsSignIn); st.NeedsSignIn {
			st.SignIn = m.cfg.SignInLink
		}
		if s.cfg.stdio() {
			st.Transport = "stdio"
		}
		out = append(out, st)
	}
	return out
}

// Register adds the tools of every started server to reg. MCP tools are
// always serial (C2); a tool is read-only when the server annotates it
// readOnlyHint, and at-most-once otherwise. A server that offers resources
// also gets its read_resource tool (resources.go). A tool that cannot be registered
// does not stop the others; the returned error lists every one.
func (m *Manager) Register(reg *tools.Registry) error {
	m.mu.Lock()
	if m.reg != reg {
		m.reg, m.registered = reg, map[*server]map[string]bool{}
	}
	m.mu.Unlock()
	var errs []error
	for _, s := range m.servers {
		errs = append(errs, m.registerServer(s, reg))
	}
	return errors.Join(errs...)
}

// readerKey stands for a server's read tool among its own tools' names,
// which it cannot be one of.
const readerKey = "\x00read_resource"

// registerLater registers what s has that the registry of the last
// Register lacks: the tools of a server connected after a sign-in, or
// added since it was listed.
func (m *Manager) registerLater(s *server) {
	m.mu.Lock()
	reg := m.reg
	m.mu.Unlock()
	if reg == nil {
		return // Register, when it comes, takes them
	}
	if err := m.registerServer(s, reg); err != nil {
		s.log.Warn("mcp: some of the server's tools were not registered", "err", err)
	}
}

// registerServer adds the tools of s not yet in reg, if s has started.
func (m *Manager) registerServer(s *server, reg *tools.Registry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	list, failed, resources := slices.Clone(s.tools), s.startErr != nil, s.resources
	s.mu.Unlock()
	if failed {
		return nil
	}
	done := m.registered[s]
	if done == nil {
		done = map[string]bool{}
		m.registered[s] = done
	}
	var errs []error
	for _, t := range list {
		if done[t.Name] {
			continue
		}
		done[t.Name] = true
		def, err := m.definition(s, t, reg)
		if err == nil {
			err = reg.Register(def)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: server %q, tool %q: %w", s.cfg.Name, t.Name, err))
		}
	}
	if resources && !done[readerKey] {
		done[readerKey] = true
		if err := m.registerReader(s, reg); err != nil {
			errs = append(errs, fmt.Errorf("mcp: server %q, tool %q: %w", s.cfg.Name, readResourceTool, err))
		}
	}
	return errors.Join(errs...)
}

// Close ends every session and stops the stdio servers.
func (m *Manager) Close() error {
	m.cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, s := range m.servers {
		wg.Go(func() {
			if err := s.close(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("mcp: close server %q: %w", s.cfg.Name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) definition(s *server, t *sdk.Tool, reg *tools.Registry) (tools.Definition, error) {
	name, ok := toolName(s.cfg.Name, t.Name, func(n string) bool {
		_, found := reg.Lookup(n)
		return found
	})
	if !ok {
		return tools.Definition{}, errors.New("no free registry name")
	}
	schema, note := inputSchema(t.InputSchema)
	if note != "" {
		s.log.Warn("mcp: tool input schema replaced by a plain object schema", "tool", t.Name, "reason", note)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %q of the MCP server %q.", t.Name, s.cfg.Name)
	}
	effect := tools.AtMostOnce
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		effect = tools.ReadOnly
	}
	timeout := m.timeoutOf(s)
	return tools.Definition{
		Name:        name,
		Description: desc,
		Parameters:  schema,
		SideEffect:  effect,
		Timeout:     timeout + callGrace,
		Source:      tools.SourceMCP,
		// The hint still makes retries safe to try; only the operator's
		// trust lets it skip confirmation.
		TrustReadOnlyHints: s.cfg.TrustReadOnlyHints,
		Handler:            s.handler(t.Name, effect == tools.ReadOnly, m.cfg.MaxOutputBytes, timeout),
	}, nil
}

// inputSchema turns a server's input schema into an object schema the
// registry compiles. note says why the schema was replaced, if it was.
func inputSchema(v any) (json.RawMessage, string) {
	const plain = `{"type":"object"}`
	if v == nil {
		return json.RawMessage(plain), ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(plain), "it does not encode: " + err.Error()
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return json.RawMessage(plain), "it is not a JSON object"
	}
	if t, ok := m["type"]; !ok {
		m["type"] = "object"
	} else if t != "object" {
		return json.RawMessage(plain), fmt.Sprintf("its type is %v, not object", t)
	}
	for range 2 {
		b, err = json.Marshal(m)
		if err != nil {
			return json.RawMessage(plain), "it does not encode: " + err.Error()
		}
		if _, err = tools.CompileSchema(b); err == nil {
			return b, ""
		}
		// A draft the validator does not know may still compile without
		// its $schema declaration.
		if _, has := m["$schema"]; !has {
			break
		}
		delete(m, "$schema")
	}
	return json.RawMessage(plain), err.Error()
}

// registerReader registers s's read_resource tool, after its own tools, so
// that a tool of the server with that name keeps it.
func (m *Manager) registerReader(s *server, reg *tools.Registry) error {
	name, ok := toolName(s.cfg.Name, readResourceTool, func(n string) bool {
		_, found := reg.Lookup(n)
		return found
	})
	if !ok {
		return errors.New("no free registry name")
	}
	if err := reg.Register(m.readDefinition(s, name)); err != nil {
		return err
	}
	s.mu.Lock()
	s.readTool = name
	s.mu.Unlock()
	return nil
}

// timeoutOf bounds one call of s's tools: its timeout_seconds, else the
// worker's CallTimeout.
func (m *Manager) timeoutOf(s *server) time.Duration {
	if s.cfg.TimeoutSeconds > 0 {
		return time.Duration(s.cfg.TimeoutSeconds * float64(time.Second))
	}
	return m.cfg.CallTimeout
}
