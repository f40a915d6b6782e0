package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// SourceUser tools are a program's own functions, served by a tool worker
// on a task queue of its own (Y1) and announced to the queue's catalog
// (Y2).
const SourceUser Source = "user"

// Remote is where and how a user tool runs: as the activity
// toolround.tool.<name> on Queue (Y1a).
type Remote struct {
	Queue string `json:"queue"`
	// SchemaHash is the hash of the schema the tool worker announced; a
	// call carries the one its round saw, and the tool worker refuses a
	// call whose hash is not its own (Y3).
	SchemaHash string `json:"schema_hash"`
	// Trusted: TOOL_QUEUES marks the queue trusted, so its read-only tools
	// skip approval (Y2, as T5 for MCP hints).
	Trusted bool `json:"trusted,omitempty"`
	// CacheSeconds keeps a read-only tool's results for the session (K1).
	CacheSeconds int `json:"cache_seconds,omitempty"`
	// ScheduleToStart is how long a call waits for a tool worker to take
	// it before it ends tool_unavailable (Y4).
	ScheduleToStart time.Duration `json:"schedule_to_start"`
	// Heartbeat is the heartbeat timeout: a tool worker that dies is
	// noticed within it.
	Heartbeat time.Duration `json:"heartbeat"`
	// Reconcile: the tool worker serves toolround.reconcile.<name>.
	Reconcile bool `json:"reconcile,omitempty"`
}

// QueueState is what a worker knows of one tool queue of TOOL_QUEUES.
type QueueState struct {
	Queue   string `json:"queue"`
	Trusted bool   `json:"trusted,omitempty"`
	// Available: a tool worker polled the queue within TOOL_WORKER_TTL.
	Available bool `json:"available"`
	// LastPoll is when a tool worker last polled it, if ever.
	LastPoll *time.Time `json:"last_poll,omitempty"`
	Tools    []string   `json:"tools"`
	// Refused are announced tools the worker does not run, and why.
	Refused map[string]string `json:"refused,omitempty"`
	// Error is why the queue's catalog could not be read.
	Error string `json:"error,omitempty"`
}

// remoteHandler stands in for a user tool's handler: the round runs a user
// tool on its own queue, never through the worker's handlers.
func remoteHandler(queue string) Handler {
	return func(context.Context, Request) (Result, error) {
		return Result{}, fmt.Errorf("tools: this tool runs on the tool workers of queue %s, not on this worker", queue)
	}
}

// SetQueue makes defs the user tools of queue, replacing those it had. A
// name that another tool has (a built-in, or another queue's tool) is not
// added; refused says why for each.
func (r *Registry) SetQueue(queue string, defs []Definition) (refused map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, d := range r.defs {
		if d.Source == SourceUser && d.Remote != nil && d.Remote.Queue == queue {
			delete(r.defs, name)
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	for _, def := range defs {
		if why := r.takenLocked(queue, def.Name); why != "" {
			if refused == nil {
				refused = map[string]string{}
			}
			refused[def.Name] = why
			continue
		}
		d := def
		d.Source = SourceUser
		if d.Handler == nil {
			d.Handler = remoteHandler(queue)
		}
		if len(d.Parameters) == 0 {
			d.Parameters = json.RawMessage(`{"type":"object"}`)
		}
		r.defs[d.Name] = &d
	}
	return refused
}

// Taken says why a tool of queue may not be named name, or "".
func (r *Registry) Taken(queue, name string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.takenLocked(queue, name)
}

func (r *Registry) takenLocked(queue, name string) string {
	if name == RunTool {
		return "the name is reserved for deferred calls"
	}
	if msg, ok := Retired(name); ok {
		return msg
	}
	d, ok := r.defs[name]
	switch {
	case !ok:
		return ""
	case d.Source == SourceUser && d.Remote != nil && d.Remote.Queue == queue:
		return ""
	case d.Source == SourceUser && d.Remote != nil:
		return "the name is taken by a tool of queue " + d.Remote.Queue
	case d.Source == SourceMCP:
		return "the name is taken by an MCP server's tool"
	default:
		return "the name is taken by a tool of the worker (" + string(d.Source) + ")"
	}
}

// UserToolCacheKey is the per-session key of a cached user tool's result
// (K1 widened to user tools, Y3): the tool, the schema hash its round saw
// and the call's canonical arguments.
func UserToolCacheKey(sessionID, tool, schemaHash, args string) string {
	if c, ok := Canonical([]byte(args)); ok {
		args = c
	}
	return "toolround:cache:user:" + sessionID + ":" + tool + ":" + hashKey(schemaHash+"\x00"+args)
}

// CacheTTL is how long the tool's cached results live: a user tool's own
// cache_seconds, else ResultCacheTTL.
func (d *Definition) CacheTTL() time.Duration {
	if d.Remote != nil && d.Remote.CacheSeconds > 0 {
		return time.Duration(d.Remote.CacheSeconds) * time.Second
	}
	return ResultCacheTTL
}
