// Package usertools keeps a worker's registry in step with the catalogs of
// the tool queues it runs (TOOL_QUEUES, Y2): it reads each queue's
// usertools/<queue> catalog and its pollers, and registers the announced
// tools as user tools of the registry, which rounds then snapshot.
package usertools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/toolworker"
)

// DefaultTTL is TOOL_WORKER_TTL's default: a queue none of whose tool
// workers polled within it is unavailable.
const DefaultTTL = 2 * time.Minute

// DefaultEvery is how often a worker reads the catalogs.
const DefaultEvery = 2 * time.Second

// Queue is one entry of TOOL_QUEUES.
type Queue struct {
	Name    string
	Trusted bool
}

// ParseQueues reads TOOL_QUEUES: queue names separated by commas, each
// optionally ":trusted".
func ParseQueues(s string) ([]Queue, error) {
	var out []Queue
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, mark, hasMark := strings.Cut(part, ":")
		q := Queue{Name: strings.TrimSpace(name)}
		if hasMark {
			if strings.TrimSpace(mark) != "trusted" {
				return nil, fmt.Errorf("TOOL_QUEUES: %q: the only mark after a queue is \":trusted\"", part)
			}
			q.Trusted = true
		}
		if q.Name == "" || strings.ContainsAny(q.Name, " \t/") {
			return nil, fmt.Errorf("TOOL_QUEUES: %q is not a task queue name", part)
		}
		if seen[q.Name] {
			return nil, fmt.Errorf("TOOL_QUEUES: queue %s is named twice", q.Name)
		}
		seen[q.Name] = true
		out = append(out, q)
	}
	return out, nil
}

// Sync reads the catalogs of Queues into Registry.
type Sync struct {
	Client   client.Client
	Registry *tools.Registry
	Queues   []Queue
	TTL      time.Duration
	Every    time.Duration
	Logger   *slog.Logger

	mu     sync.Mutex
	states map[string]tools.QueueState
}

// Refuse says why a tool of queue named name is not run by this worker, or
// "" (the catalog's toolcatalog.UserTools.Refuse).
func (s *Sync) Refuse(queue, name string) string {
	if !s.runs(queue) {
		if s.Logger != nil {
			s.Logger.Warn("a tool worker announced tools of a queue this worker does not run (TOOL_QUEUES)", "queue", queue, "tool", name)
		}
		return "this toolround worker does not run tools of queue " + queue + ": add it to TOOL_QUEUES"
	}
	return s.Registry.Taken(queue, name)
}

func (s *Sync) runs(queue string) bool {
	for _, q := range s.Queues {
		if q.Name == queue {
			return true
		}
	}
	return false
}

// Run reads the catalogs every Every until ctx ends.
func (s *Sync) Run(ctx context.Context) {
	every := s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once reads every queue's catalog and pollers once.
func (s *Sync) Once(ctx context.Context) {
	for _, q := range s.Queues {
		st := s.read(ctx, q)
		s.mu.Lock()
		if s.states == nil {
			s.states = map[string]tools.QueueState{}
		}
		old, had := s.states[q.Name]
		s.states[q.Name] = st
		s.mu.Unlock()
		if s.Logger != nil && (!had || old.Available != st.Available || strings.Join(old.Tools, ",") != strings.Join(st.Tools, ",")) {
			s.Logger.Info("tool queue", "queue", q.Name, "available", st.Available, "tools", strings.Join(st.Tools, ","), "trusted", q.Trusted)
		}
	}
}

// States is what the worker last read of each queue.
func (s *Sync) States() []tools.QueueState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tools.QueueState, 0, len(s.states))
	for _, st := range s.states {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

func (s *Sync) read(ctx context.Context, q Queue) tools.QueueState {
	st := tools.QueueState{Queue: q.Name, Trusted: q.Trusted, Tools: []string{}}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if resp, err := s.Client.DescribeTaskQueue(ctx, q.Name, enumspb.TASK_QUEUE_TYPE_ACTIVITY); err == nil {
		var last time.Time
		for _, p := range resp.GetPollers() {
			if t := p.GetLastAccessTime().AsTime(); t.After(last) {
				last = t
			}
		}
		if !last.IsZero() {
			st.LastPoll = &last
			st.Available = time.Since(last) <= ttl
		}
	}
	var cat toolworker.Catalog
	v, err := s.Client.QueryWorkflow(ctx, toolworker.CatalogIDPrefix+q.Name, "", toolworker.ToolsQuery)
	if err == nil {
		err = v.Get(&cat)
	}
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		// no tool worker announced yet
	case err != nil:
		st.Error = err.Error()
		return st // keep the tools the registry has: a failed read takes none away
	}
	defs := make([]tools.Definition, 0, len(cat.Tools))
	for _, d := range cat.Tools {
		defs = append(defs, Definition(d, q))
		st.Tools = append(st.Tools, d.Name)
	}
	st.Refused = s.Registry.SetQueue(q.Name, defs)
	return st
}

// Definition is the registry's definition of an announced tool.
func Definition(d toolworker.Decl, q Queue) tools.Definition {
	def := tools.Definition{
		Name: d.Name, Description: d.Description, Parameters: d.Parameters,
		Concurrent: d.Concurrent, SideEffect: tools.AtMostOnce,
		Timeout: seconds(d.TimeoutSeconds, 60*time.Second),
		Remote: &tools.Remote{
			Queue: q.Name, SchemaHash: d.SchemaHash, Trusted: q.Trusted, CacheSeconds: d.CacheSeconds,
			ScheduleToStart: seconds(d.ScheduleToStartSeconds, 5*time.Minute),
			Heartbeat:       seconds(d.HeartbeatSeconds, 20*time.Second),
			Reconcile:       d.Reconcile,
		},
	}
	if d.Description == "" {
		def.Description = "a tool of queue " + q.Name
	}
	if d.Effect == toolworker.EffectReadOnly {
		def.SideEffect = tools.ReadOnly
		if d.CacheSeconds > 0 {
			name, hash := d.Name, d.SchemaHash
			def.CacheKey = func(sessionID, args string) string { return tools.UserToolCacheKey(sessionID, name, hash, args) }
		}
	}
	if d.Subject != "" {
		arg := d.Subject
		def.Rules = approval.SubjectKind(arg) // rules are globs over it (Y3)
		def.Subject = tools.SubjectField(arg)
	}
	return def
}

func seconds(n int, def time.Duration) time.Duration {
	if n <= 0 {
		return def
	}
	return time.Duration(n) * time.Second
}
