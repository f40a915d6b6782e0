package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// snapshot is step 1 of a round: the catalog's answers about the tools the
// round calls and the worker's settings, taken once in a side effect so that
// replays read them from history, then the round's own overrides of the
// bound and the confirm timeout.
func (w *RoundWorkflow) snapshot(ctx workflow.Context, in *round.Input, calls []Unwrapped, snap *Snapshot) error {
	req := SnapshotRequest{Provider: in.Provider, ClientTools: in.ClientTools, Calls: calls}
	if err := workflow.SideEffect(ctx, func(workflow.Context) any {
		return w.Catalog.Snapshot(req)
	}).Get(snap); err != nil {
		return fmt.Errorf("round: read catalog snapshot: %w", err)
	}
	if in.MaxConcurrent > 0 {
		snap.MaxConcurrent = in.MaxConcurrent
	}
	if in.ConfirmTimeoutSeconds > 0 {
		snap.ConfirmTimeout = time.Duration(in.ConfirmTimeoutSeconds) * time.Second
	}
	excludeTools(in.Exclude, snap)
	return nil
}

// excludeTools takes the tools a subagent's rounds do not have out of the
// snapshot (G1): a call of one, directly or through run_tool, is answered
// as a tool this worker lacks (P1.5).
func excludeTools(exclude []string, snap *Snapshot) {
	for _, name := range exclude {
		delete(snap.Tools, name)
		snap.missing(name, fmt.Sprintf("tool %s is not available to this subagent: the run that started it left it out", name))
	}
}

// missing records that the round lacks tool name, and why (P1.5).
func (s *Snapshot) missing(name, why string) {
	if s.Missing == nil {
		s.Missing = map[string]string{}
	}
	s.Missing[name] = why
}

// ToolInfo is what a round needs to know of one tool. It is recorded in the
// round's history, so a worker whose registry changed replays old rounds the
// same way.
type ToolInfo struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	Parameters   json.RawMessage   `json:"parameters,omitempty"`
	Concurrent   bool              `json:"concurrent,omitempty"`
	SideEffect   tools.SideEffect  `json:"side_effect"`
	Interactive  bool              `json:"interactive,omitempty"`
	Client       bool              `json:"client,omitempty"`
	NoDedupe     bool              `json:"no_dedupe,omitempty"`
	Volatile     bool              `json:"volatile,omitempty"`
	ConfirmNever bool              `json:"confirm_never,omitempty"`
	Timeout      time.Duration     `json:"timeout"`
	Retry        tools.RetryPolicy `json:"retry"`
	// Local runs the tool as a local activity: short read-only tools only.
	Local bool `json:"local,omitempty"`
	// KeyLimit bounds the concurrent calls that share a concurrency key
	// (CallFacts.Key) in a round.
	KeyLimit int `json:"key_limit,omitempty"`
	// Reconcile: the tool can tell whether a lost attempt took effect
	// (SPEC R), through the Reconcile activity.
	Reconcile bool `json:"reconcile,omitempty"`
	// MCP: a tool of an MCP server, whose failures get no next: hint
	// (Features.HelpfulHints).
	MCP bool `json:"mcp,omitempty"`
	// ReadsPaths and TouchesPath are the definition's (tools.Definition):
	// the "paths" a call reads and the "path" it changes, for the dedupe
	// map when the handler reports none (P3.3).
	ReadsPaths  bool `json:"reads_paths,omitempty"`
	TouchesPath bool `json:"touches_path,omitempty"`
	// Cached: the definition keeps its read-only calls' results in the
	// session's result cache (tools.Definition.CacheKey), which pass 3
	// asks PublishRound to write.
	Cached bool `json:"cached,omitempty"`
	// Workspace: the tool acts in the session's workspace
	// (tools.Definition.InWorkspace); set only under placement, where
	// such calls run on the workspace's host (W4).
	Workspace bool `json:"workspace,omitempty"`
	// Remote: a user tool, which the round runs as an activity on its
	// tool worker's queue (Y1a; remote.go).
	Remote *tools.Remote `json:"remote,omitempty"`
	// Kind is how the round runs the tool's calls, a line of toolKinds
	// (tools.Definition.EffectiveKind; kinds.go). A snapshot recorded
	// before it has none, and named the kind by the facts of
	// pastKindFacts, which new snapshots still carry for older builds
	// (legacy.go).
	Kind tools.Kind `json:"kind,omitempty"`
	pastKindFacts
}

// Spec is the tool as a schema result shows it.
func (t ToolInfo) Spec() tools.FunctionSpec {
	return tools.FunctionSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// CallFacts are the per-call facts that need a tool's code (its subject for
// confirmations and rules, its side-effect class for these arguments).
type CallFacts struct {
	Subject   string           `json:"subject,omitempty"`
	Effect    tools.SideEffect `json:"effect,omitempty"`
	Sensitive bool             `json:"sensitive,omitempty"`
	// Approval is what approval.Needs needs to know of the call
	// (tools.ApprovalCall), without its arguments, which the round fills
	// in: the model's, or the ones an approver edited.
	Approval *approval.Call `json:"approval,omitempty"`
	// Key is the call's concurrency key, empty when the tool has none.
	Key string `json:"key,omitempty"`
	// KeyLimit is the limit of Key for this call when it differs by key
	// (per-host limits); zero: the tool's ToolInfo.KeyLimit. Rounds
	// recorded before it have none and keep the tool's limit.
	KeyLimit int `json:"key_limit,omitempty"`
}

// Snapshot is the part of the catalog and worker configuration one round
// uses, taken once per round and recorded in history (P2.2).
type Snapshot struct {
	MaxConcurrent    int                 `json:"max_concurrent"`
	ConfirmTimeout   time.Duration       `json:"confirm_timeout"`
	HeartbeatTimeout time.Duration       `json:"heartbeat_timeout"`
	Loaded           []string            `json:"loaded"`
	Preloaded        []string            `json:"preloaded"`
	Tools            map[string]ToolInfo `json:"tools"`
	Missing          map[string]string   `json:"missing,omitempty"`
	Calls            []CallFacts         `json:"calls"`
	// Features are set by the workflow from its version markers, not
	// recorded with the snapshot (repeat.go).
	Features Features `json:"-"`
	// DenyAutoApprove is the worker's AUTO_APPROVE=deny (T5).
	DenyAutoApprove bool `json:"deny_auto_approve,omitempty"`
	// NoSandbox: the worker runs commands without a sandbox (SANDBOX=none,
	// or auto without bubblewrap), so no rule approves a command call
	// (T12, commandRulesOff). A snapshot recorded before has it false, as
	// those rounds decided.
	NoSandbox bool `json:"no_sandbox,omitempty"`
	// Tables is the version of the matcher that reads the round's command
	// patterns (approval.TablesCurrent when the worker took the snapshot,
	// T11). A snapshot recorded before has none: zero, the legacy matcher
	// those rounds decided with, so they replay the same.
	Tables int `json:"tables,omitempty"`
	// Untested are the tabled programs the worker found outside their
	// table's tested range when it started (CatalogOptions.Untested, T11):
	// their rules match exact commands only (approval.Policy.Untested). A
	// snapshot recorded before has none, as those rounds decided.
	Untested []string `json:"untested,omitempty"`
	// WorkerLimits are the worker's WORKER_LIMITS (B1).
	WorkerLimits *round.Limits `json:"worker_limits,omitempty"`
	// ToolFacts: the snapshot carries the facts of the tools' definitions
	// (ToolInfo.ReadsPaths and TouchesPath; the rule kind, reason and
	// ReadsPaths of CallFacts.Approval). A snapshot recorded before has
	// none, and the round reads them from pastFacts (legacy.go).
	ToolFacts bool `json:"tool_facts,omitempty"`
	// Notify is set when the worker has a webhook (NOTIFY_URL or
	// NOTIFY_ROUTES, N1): the round then starts notification workflows.
	Notify *NotifySettings `json:"notify,omitempty"`
	// BuildID is the build of the worker that took the snapshot
	// (CatalogOptions.BuildID, V1); the round keeps it in its memo.
	BuildID string `json:"build_id,omitempty"`
	// Placement is set when the worker runs with WORKSPACE_PLACEMENT=host
	// (W4): the round binds its session's workspace to a host and runs
	// its workspace calls there (placement.go).
	Placement *PlacementSettings `json:"placement,omitempty"`
	// SubagentDepth is SUBAGENT_DEPTH (G1): how many hops of subagents
	// from a run the worker allows. Zero: round.DefaultSubagentDepth.
	SubagentDepth int `json:"subagent_depth,omitempty"`
	// Chatbots are the AGENTS_CONFIG entries this round's send_to_chatbot
	// calls name (G3), with the tools each does not have.
	Chatbots map[string]ChatbotInfo `json:"chatbots,omitempty"`
	// LargeResult is LARGE_RESULT_BYTES when the round calls a user tool:
	// its result above it goes to the blob store (Y3, remote.go). A
	// snapshot recorded before has none, and those rounds kept such
	// results in their own result, as they decided.
	LargeResult int `json:"large_result,omitempty"`
}

// ChatbotInfo is what a round records of one chatbot: its entry, and the
// worker's tools that are not among its tools.
type ChatbotInfo struct {
	round.Chatbot
	Exclude []string `json:"exclude,omitempty"`
}

// PlacementSettings are what a round records of WORKSPACE_PLACEMENT=host.
type PlacementSettings struct {
	// TaskQueue is the worker's TASK_QUEUE, whose host queues are
	// <TaskQueue>@<host>.
	TaskQueue string `json:"task_queue"`
	// HostID is the worker's HOST_ID, the host a round offers when it
	// binds an unbound session.
	HostID string `json:"host_id"`
	// HostTimeout is WORKSPACE_HOST_TIMEOUT (W5).
	HostTimeout time.Duration `json:"host_timeout"`
}

func (s *Snapshot) loaded(name string) bool    { return contains(s.Loaded, name) }
func (s *Snapshot) preloaded(name string) bool { return contains(s.Preloaded, name) }

func contains(sorted []string, name string) bool {
	i := sort.SearchStrings(sorted, name)
	return i < len(sorted) && sorted[i] == name
}

// DefaultConfirmTimeout is how long a confirmation waits before it counts as
// a denial (P1.6).
const DefaultConfirmTimeout = 30 * time.Minute

// SnapshotRequest is what the catalog is asked about.
type SnapshotRequest struct {
	Provider    string
	ClientTools []tools.ToolSpec
	Calls       []Unwrapped
}

// Catalog answers a round's questions about tools. Snapshot runs inside a
// side effect of the workflow: it must not block or fail.
type Catalog interface {
	Snapshot(SnapshotRequest) Snapshot
}

// CatalogOptions are the worker settings a round records.
type CatalogOptions struct {
	// MaxConcurrent bounds the concurrent tools of a round (P2.2). Zero means
	// DefaultMaxConcurrent().
	MaxConcurrent int
	// ConfirmTimeout is how long a confirmation waits. Zero means 30 minutes.
	ConfirmTimeout time.Duration
	// HeartbeatTimeout detects a lost worker while a regular activity runs.
	// Zero means 10 seconds.
	HeartbeatTimeout time.Duration
	// LocalMaxTimeout: read-only tools whose timeout is at most this run as
	// local activities. Zero keeps every tool a regular activity.
	LocalMaxTimeout time.Duration
	// DenyAutoApprove ignores the auto_approve of every round
	// (AUTO_APPROVE=deny, T5).
	DenyAutoApprove bool
	// NoSandbox: the worker's commands run without a sandbox; rules do
	// not approve command calls (T12).
	NoSandbox bool
	// Untested are the tabled programs whose version the worker's probe
	// found outside their table's tested range (T11); every round records
	// them (Snapshot.Untested).
	Untested []string
	// WorkerLimits bound every run whatever its input says (WORKER_LIMITS,
	// B1).
	WorkerLimits round.Limits
	// ContextTokens is LLM_CONTEXT_TOKENS, the budget of an agent run's
	// model requests (B3); the model call reads it, never a round.
	ContextTokens int
	// Notify, when set, are the webhook settings every round records (N1).
	Notify *NotifySettings
	// BuildID is the worker's build (WORKER_BUILD_ID, V1), which a round
	// records and keeps in its memo.
	BuildID string
	// Placement, when set, is WORKSPACE_PLACEMENT=host's (W4).
	Placement *PlacementSettings
	// SubagentDepth is SUBAGENT_DEPTH (G1); zero: the default.
	SubagentDepth int
	// Chatbots are AGENTS_CONFIG's named agents (G3).
	Chatbots []round.Chatbot
	// LargeResult is LARGE_RESULT_BYTES: a user tool's result above it
	// goes to the blob store (Y3). Zero: DefaultLargeResult.
	LargeResult int
}

// DefaultLargeResult is LARGE_RESULT_BYTES's default.
const DefaultLargeResult = 128 << 10

// RegistryCatalog is the Catalog of a tools.Registry.
type RegistryCatalog struct {
	Registry *tools.Registry
	Options  CatalogOptions
}

// NewCatalog returns the catalog of reg with defaults filled in.
func NewCatalog(reg *tools.Registry, opts CatalogOptions) *RegistryCatalog {
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent()
	}
	if opts.ConfirmTimeout <= 0 {
		opts.ConfirmTimeout = DefaultConfirmTimeout
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = 10 * time.Second
	}
	if opts.LargeResult <= 0 {
		opts.LargeResult = DefaultLargeResult
	}
	return &RegistryCatalog{Registry: reg, Options: opts}
}

// asked is the sorted names of set that pass 1 may ask about for these
// calls: their tools and run_tool (Snapshot.loaded and preloaded are asked
// nothing else). The snapshot is in every round's history, and the
// provider's whole tool list in each was most of it.
func asked(set map[string]bool, calls []Unwrapped) []string {
	want := map[string]bool{}
	for _, name := range append([]string{tools.RunTool}, callNames(calls)...) {
		if set[name] {
			want[name] = true
		}
	}
	return tools.SortedNames(want)
}

func callNames(calls []Unwrapped) []string {
	out := make([]string, len(calls))
	for i, u := range calls {
		out[i] = u.Name
		if u.Test {
			out = append(out, tools.TestTool) // the tool called, for P1.2 and P1.4 (G4)
		}
	}
	return out
}

// Snapshot implements Catalog.
func (c *RegistryCatalog) Snapshot(req SnapshotRequest) Snapshot {
	names := c.Registry.Names()
	s := Snapshot{
		MaxConcurrent:    c.Options.MaxConcurrent,
		ConfirmTimeout:   c.Options.ConfirmTimeout,
		HeartbeatTimeout: c.Options.HeartbeatTimeout,
		DenyAutoApprove:  c.Options.DenyAutoApprove,
		NoSandbox:        c.Options.NoSandbox,
		Tables:           approval.TablesCurrent,
		Untested:         c.Options.Untested,
		ToolFacts:        true,
		WorkerLimits:     workerLimits(c.Options.WorkerLimits),
		Loaded:           asked(tools.LoadedSet(req.Provider, names, req.ClientTools), req.Calls),
		Preloaded:        asked(tools.Preloaded(req.Provider, names, req.ClientTools), req.Calls),
		Tools:            map[string]ToolInfo{},
		Calls:            make([]CallFacts, len(req.Calls)),
		Notify:           c.Options.Notify,
		BuildID:          c.Options.BuildID,
		Placement:        c.Options.Placement,
		SubagentDepth:    c.Options.SubagentDepth,
	}
	client := map[string]tools.ToolSpec{}
	for _, t := range req.ClientTools {
		client[t.Function.Name] = t
	}
	for i, u := range req.Calls {
		if u.Err != "" {
			continue
		}
		if d, ok := c.Registry.Lookup(tools.TestTool); ok && u.Test {
			s.Tools[tools.TestTool] = c.info(d) // the tool called, whose schema P1.4 gives (G4)
		}
		if d, ok := c.Registry.Lookup(u.Name); ok {
			k := d.EffectiveKind()
			if !runs(k) {
				s.missing(u.Name, fmt.Sprintf("tool %s is of kind %q, which no line of this worker's round runs", u.Name, k))
				continue
			}
			if _, have := s.Tools[u.Name]; !have {
				s.Tools[u.Name] = c.info(d)
			}
			if k == tools.KindChatbot {
				c.addChatbot(&s, names, u.Args)
			}
			args := json.RawMessage(u.Args)
			ac := tools.ApprovalCall(d, "", args)
			s.Calls[i] = CallFacts{
				Subject:   tools.SubjectOf(d, args),
				Effect:    tools.EffectOf(d, args),
				Sensitive: d.Sensitive != nil && d.Sensitive(args),
				Approval:  &ac,
			}
			s.Calls[i].Key, s.Calls[i].KeyLimit = tools.KeyOf(d, args)
			continue
		}
		if spec, ok := client[u.Name]; ok {
			s.Tools[u.Name] = ToolInfo{
				Name: u.Name, Description: spec.Function.Description, Parameters: spec.Function.Parameters,
				SideEffect: tools.AtMostOnce, Client: true, ConfirmNever: true, Timeout: c.Options.ConfirmTimeout, Kind: tools.KindWait,
			}
			s.Calls[i] = CallFacts{Subject: tools.SubjectOf(nil, json.RawMessage(u.Args)), Effect: tools.AtMostOnce,
				Approval: &approval.Call{Tool: u.Name, ConfirmNever: true}}
			continue
		}
		if msg, missing := c.Registry.Missing(u.Name); missing {
			s.missing(u.Name, msg)
		}
	}
	for _, ti := range s.Tools {
		if ti.Remote != nil {
			s.LargeResult = c.Options.LargeResult
		}
	}
	return s
}

func (c *RegistryCatalog) info(d *tools.Definition) ToolInfo {
	ti := ToolInfo{
		Name: d.Name, Description: d.Description, Parameters: d.Parameters,
		Concurrent: d.Concurrent && !d.Interactive, SideEffect: d.SideEffect, Interactive: d.Interactive,
		NoDedupe: d.NoDedupe, Volatile: d.Volatile, ConfirmNever: d.Confirm == tools.ConfirmNever,
		Timeout: d.EffectiveTimeout(), Retry: d.EffectiveRetry(),
	}
	ti.Reconcile = d.Reconcile != nil
	ti.MCP = d.Source == tools.SourceMCP
	ti.ReadsPaths, ti.TouchesPath, ti.Cached = d.ReadsPaths, d.TouchesPath, d.CacheKey != nil
	if d.ConcurrencyKey != nil {
		ti.KeyLimit = max(d.KeyLimit, tools.DefaultKeyLimit)
	}
	ti.Workspace = c.Options.Placement != nil && d.InWorkspace()
	ti.Kind = d.EffectiveKind()
	ti.pastKindFacts = pastKindFactsOf(ti.Kind) // for a build from before Kind (legacy.go)
	if d.Remote != nil {
		r := *d.Remote
		ti.Remote = &r
	}
	ti.Local = !d.Interactive && d.SideEffect == tools.ReadOnly && c.Options.LocalMaxTimeout > 0 && ti.Timeout <= c.Options.LocalMaxTimeout
	return ti
}

func workerLimits(l round.Limits) *round.Limits {
	if l.Empty() {
		return nil
	}
	return &l
}

// addChatbot records the chatbot a send_to_chatbot call names, when the
// worker has it (G3): its entry and the registered tools it lacks.
func (c *RegistryCatalog) addChatbot(s *Snapshot, registered []string, args string) {
	var a wire.ChatbotArgs
	if json.Unmarshal([]byte(args), &a) != nil {
		return
	}
	for _, cb := range c.Options.Chatbots {
		if cb.Name != a.Name {
			continue
		}
		if _, have := s.Chatbots[cb.Name]; have {
			return
		}
		info := ChatbotInfo{Chatbot: cb}
		for _, n := range registered {
			if !slices.Contains(cb.Tools, n) {
				info.Exclude = append(info.Exclude, n)
			}
		}
		if s.Chatbots == nil {
			s.Chatbots = map[string]ChatbotInfo{}
		}
		s.Chatbots[cb.Name] = info
		return
	}
}
