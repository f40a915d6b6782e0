package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
)

// SideEffect classifies what running a tool does to the world. It decides
// retries (P2.4) and the confirmation policy (C4).
type SideEffect string

const (
	// ReadOnly tools change nothing: they are retried on transient failures and
	// never ask for confirmation.
	ReadOnly SideEffect = "read_only"
	// Idempotent tools change something, but running them twice with the same
	// arguments leaves the same state, so a lost attempt may be retried.
	Idempotent SideEffect = "idempotent"
	// AtMostOnce tools (the default for anything with side effects) never run
	// twice by accident: an attempt lost to a crash or a timeout becomes an
	// unknown_outcome result instead of a second run.
	AtMostOnce SideEffect = "at_most_once"
)

// RetryPolicy bounds the retries of transient failures. Zero fields take the
// defaults of DefaultRetry.
type RetryPolicy struct {
	MaxAttempts        int           `json:"max_attempts,omitempty"`
	InitialInterval    time.Duration `json:"initial_interval,omitempty"`
	BackoffCoefficient float64       `json:"backoff_coefficient,omitempty"`
	MaxInterval        time.Duration `json:"max_interval,omitempty"`
}

// DefaultRetry is used for retryable tools that do not set their own policy.
var DefaultRetry = RetryPolicy{MaxAttempts: 3, InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaxInterval: 5 * time.Second}

// DefaultTimeout is a tool's start-to-close timeout when its definition sets none.
const DefaultTimeout = 2 * time.Minute

// Source says where a tool comes from.
type Source string

const (
	SourceBuiltin Source = "builtin"
	SourceApp     Source = "app"    // registered by the host application through the Go API
	SourceMCP     Source = "mcp"    // a tool of an MCP server; always serial (C2)
	SourceScript  Source = "script" // script_* tools from configuration
	SourceExt     Source = "ext"    // ext_* tools from configuration
	SourceClient  Source = "client" // the client's own tools, sent with the round
)

// Definition is everything the engine knows about one tool.
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments; it must describe an object.
	// Empty means "any object".
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Concurrent tools run in the bounded fan-out of pass 2; the others run one
	// after another in call order (P2.1, P2.3).
	Concurrent bool       `json:"concurrent,omitempty"`
	SideEffect SideEffect `json:"side_effect"`
	// Interactive tools (ask_user) wait for a human answer that reaches the
	// round as a signal; they always run serially.
	Interactive bool `json:"interactive,omitempty"`
	// Timeout bounds one attempt (start-to-close). Zero means DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	Retry   RetryPolicy   `json:"retry,omitempty"`
	// NoDedupe keeps the tool's results out of the run's dedupe map (P1.3),
	// for tools whose answer changes while the arguments stay the same, such as
	// reading a background command's output.
	NoDedupe bool `json:"no_dedupe,omitempty"`
	// Volatile tools observe the whole workdir (listings, shell commands): their
	// dedupe entries are dropped by any change to it (P3.3).
	Volatile bool   `json:"volatile,omitempty"`
	Source   Source `json:"source,omitempty"`
	// Kind is how a round runs the tool's calls, when not the way its other
	// facts say (EffectiveKind): KindChildRun runs a child agent run
	// (subagents, G1) and KindChatbot sends a message to a chatbot's
	// persistent run (send_to_chatbot, G3), not through Handler, which then
	// answers only a call outside a round. A kind is a line of the round's
	// table (docs/adding-a-tool.md).
	Kind Kind `json:"kind,omitempty"`
	// Subject names what a call is about, in a confirmation, the inbox and
	// the console (the command of run_command, the path of edit_file). Nil
	// uses the canonical arguments (SubjectOf).
	Subject func(args json.RawMessage) string `json:"-"`
	// Rules is what the tool's remembered rules match in its calls (T4):
	// the shell command, the path, the URL with or without its method, the
	// URL and path of a download. Empty: a rule is the exact call, or `*`
	// for every call (approval.ValidatePattern).
	Rules approval.Kind `json:"-"`
	// Reason says, in a few words, why a call that is not read-only asks
	// ("it runs a shell command"); "{path}" in it stands for the call's
	// quoted "path" argument. Empty: "it may change things".
	Reason string `json:"-"`
	// ReadsPaths: a call reads the files its "path" or "paths" arguments
	// name, so one that may hold keys or credentials always asks (C4).
	ReadsPaths bool `json:"-"`
	// TouchesPath: a call changes the file its "path" argument names; when
	// its handler reports no Result.Touched, pass 3 drops the dedupe
	// entries over that path (P3.3).
	TouchesPath bool `json:"-"`
	// CacheKey, when set, keeps the results of the tool's read-only calls
	// (Effect) in the session's result cache under this key for
	// ResultCacheTTL: pass 3 asks for the write, the PublishRound activity
	// makes it, and the handler reads it (an http_request GET). args are the
	// call's arguments.
	CacheKey func(sessionID, args string) string `json:"-"`
	// Sensitive reports calls that always ask for confirmation, whatever the
	// tool's class, rules or auto-approve (a read of a credentials file).
	Sensitive func(args json.RawMessage) bool `json:"-"`
	// Effect, when set, classifies one call by its arguments (an http_request
	// GET is read-only, a POST is not); it overrides SideEffect for that call.
	Effect func(args json.RawMessage) SideEffect `json:"-"`
	// Confirm overrides the class-based confirmation policy of C4.
	Confirm ConfirmPolicy `json:"confirm,omitempty"`
	// TrustReadOnlyHints is set on MCP tools whose server the operator marked
	// "trust_read_only_hints" in MCP_CONFIG. Without it an MCP tool asks for
	// confirmation even when its server declares it read-only (T5,
	// approval.Call).
	TrustReadOnlyHints bool `json:"trust_read_only_hints,omitempty"`
	// ConcurrencyKey, when set, names what a call contends for (a host, a
	// path); a round runs at most KeyLimit concurrent calls with the same
	// key at once, on top of MAX_CONCURRENT_TOOLS (SPEC R). An empty key
	// is not limited. Tools that share a resource return the same key
	// ("host:example.com", "path:src/a.go").
	ConcurrencyKey func(args json.RawMessage) string `json:"-"`
	// KeyLimit is the number of calls per key; zero means DefaultKeyLimit.
	KeyLimit int `json:"key_limit,omitempty"`
	// KeyLimitFor, when set, is the limit of one key, overriding KeyLimit
	// where it returns more than zero (the operator's per-host limits of
	// the HTTP tools).
	KeyLimitFor func(key string) int `json:"-"`
	// Reconcile, when set, decides after a lost attempt of an at-most-once
	// call whether it took effect (SPEC R); see Reconciler.
	Reconcile Reconciler `json:"-"`
	Handler   Handler    `json:"-"`
	// Remote is set for a user tool (SourceUser): the round runs it as an
	// activity on the tool worker's queue (Y1a), never through Handler.
	Remote *Remote `json:"remote,omitempty"`
	// Changed, for tools whose results record the files they read
	// (Result.Files), looks at those files again and returns the paths whose
	// state differs from the recorded one, or that it could not look at.
	// A round calls it before it serves such a result again (U3).
	Changed func(ctx context.Context, files map[string]FileState) []string `json:"-"`
	// Workspace: the tool acts in the session's workspace though none of
	// the facts InWorkspace reads says so (an application's tool that
	// writes files there).
	Workspace bool `json:"-"`
}

// InWorkspace reports whether the tool's calls act in the session's
// workspace, so that under WORKSPACE_PLACEMENT=host they run on the host
// the workspace is bound to (W4). It reads the definition's facts: a
// tool that reads or changes the paths its arguments name, observes the
// whole workdir (Volatile: listings, commands, scripts), checks the files
// a result read (Changed), matches paths, commands or downloads in its
// rules, is a script, or says so (Workspace).
func (d *Definition) InWorkspace() bool {
	switch {
	case d.Workspace, d.ReadsPaths, d.TouchesPath, d.Volatile, d.Changed != nil, d.Source == SourceScript:
		return true
	}
	switch d.Rules {
	case approval.KindPath, approval.KindCommand, approval.KindDownload:
		return true
	}
	return false
}

// DefaultKeyLimit is a concurrency key's limit when the tool sets none.
const DefaultKeyLimit = 1

// KeyOf is the call's concurrency key and its limit; an empty key has no
// limit.
func KeyOf(d *Definition, args json.RawMessage) (key string, limit int) {
	if d == nil || d.ConcurrencyKey == nil {
		return "", 0
	}
	key = d.ConcurrencyKey(args)
	if key == "" {
		return "", 0
	}
	limit = d.KeyLimit
	if d.KeyLimitFor != nil {
		if l := d.KeyLimitFor(key); l > 0 {
			limit = l
		}
	}
	if limit <= 0 {
		limit = DefaultKeyLimit
	}
	return key, limit
}

// FileState is what a result records of a file it read (U3): size,
// modification time and content digest; for a folder, the number of its
// entries, its modification time and a digest of its listing. Missing
// records that the path did not exist.
type FileState struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// ConfirmPolicy says when a tool's calls wait for a human decision (P1.6, C4).
type ConfirmPolicy string

const (
	// ConfirmByClass asks for every call that is not read-only, unless an allow
	// rule matches or the round runs with auto-approve (C4).
	ConfirmByClass ConfirmPolicy = ""
	// ConfirmNever is for tools whose only effect is the agent's own bookkeeping
	// (write_todo, write_error, ask_user).
	ConfirmNever ConfirmPolicy = "never"
)

// ReadOnly reports whether the tool changes nothing.
func (d *Definition) ReadOnly() bool { return d.SideEffect == ReadOnly }

// Retryable reports whether a lost or failed attempt may run again.
func (d *Definition) Retryable() bool { return d.SideEffect == ReadOnly || d.SideEffect == Idempotent }

// EffectiveTimeout is the timeout of one attempt.
func (d *Definition) EffectiveTimeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return DefaultTimeout
}

// EffectiveRetry is the tool's retry policy with defaults filled in. It
// applies only to calls whose class allows a retry; the others get one attempt.
func (d *Definition) EffectiveRetry() RetryPolicy {
	p := d.Retry
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetry.MaxAttempts
	}
	if p.InitialInterval <= 0 {
		p.InitialInterval = DefaultRetry.InitialInterval
	}
	if p.BackoffCoefficient < 1 {
		p.BackoffCoefficient = DefaultRetry.BackoffCoefficient
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = DefaultRetry.MaxInterval
	}
	return p
}

// Request is one call as a handler sees it.
type Request struct {
	// Tool is the name the call was made with.
	Tool       string
	CallID     string
	SessionID  string
	RunID      string
	Round      int
	WorkflowID string
	// OperationID is the call's idempotency key (SPEC R): the same for every
	// attempt of the call, never used by another call or round. Tools pass it
	// on to whatever they change (an Idempotency-Key header, an environment
	// variable) so that a repeated attempt can be recognised.
	OperationID string
	// Generation is 0 for a call's first run and 1 for the run a reconciler
	// allowed after a lost attempt; a tool that fences its operation refuses
	// an attempt older than the fence.
	Generation int
	// Args is the validated JSON object of arguments.
	Args json.RawMessage
	// RuleApproved: a remembered rule approved the call, no person did
	// (T4). run_command and background_command then run git locked down.
	RuleApproved bool
	// RuleScope is, for a call a pattern rule approved, the rule's scope
	// (T12, approval.ScopeReadOnly or approval.ScopeWrite): a command then
	// runs in the sandbox with the workspace read-only (read-only) and the
	// protected set read-only (either). Empty for every other call.
	RuleScope string
	// ResultRefs are the blob references this agent run's context budget
	// replaced, the only ones read_result serves (B3); empty outside an
	// agent run.
	ResultRefs []string
	// Test: a test_tool call runs this script_* tool (G4); the script then
	// reports its exit code, stdout and stderr, also when it fails.
	Test bool
	// InputResponses, RequestState and InputTrips run an MCP call again
	// with the answers to what its server asked (round.InputRequired).
	InputResponses map[string]json.RawMessage
	RequestState   string
	InputTrips     int
	// Task is an MCP task the call's server runs (round.MCPTask): the
	// handler polls it, after it sends InputResponses to it, instead of
	// calling the tool.
	Task *round.MCPTask
}

// Decode unmarshals the arguments into v.
func (r Request) Decode(v any) error {
	args := r.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// Typed is the Handler of fn, which takes the call's arguments decoded
// into an A, once, as Request.Decode does: arguments that do not decode
// fail the call with its "invalid arguments: ..." error and never reach fn.
// A is the handler's own struct of `json` fields, such as
//
//	type removeArgs struct {
//		Path string `json:"path"`
//	}
//
//	Handler: tools.Typed(func(ctx context.Context, req tools.Request, a removeArgs) (tools.Result, error) { ... })
//
// The decoder's messages name the struct; an alias of a struct literal
// (type removeArgs = struct{...}) names none.
func Typed[A any](fn func(ctx context.Context, req Request, args A) (Result, error)) Handler {
	return func(ctx context.Context, req Request) (Result, error) {
		var a A
		if err := req.Decode(&a); err != nil {
			return Result{}, err
		}
		return fn(ctx, req, a)
	}
}

// Result is what a successful handler returns.
type Result struct {
	Content string `json:"content"`
	// Fetched names tools whose schemas this call returned, so the run marks them
	// as fetched (S4, find_tools).
	Fetched []string `json:"fetched,omitempty"`
	// Touched lists workdir-relative paths that the call changed; pass 3 drops
	// the read_files dedupe entries that cover them (P3.3).
	Touched []string `json:"touched,omitempty"`
	// Read lists the workdir-relative paths the call read, so that a later
	// change to one of them drops this result from the dedupe map.
	Read []string `json:"read,omitempty"`
	// FromCache marks a result answered from the result cache, so pass 3
	// does not write it back and extend its life (K1).
	FromCache bool `json:"from_cache,omitempty"`
	// Files is the state of each file the call read, by workdir path, taken
	// before it read them; it stays out of the content the model sees. A
	// tool that sets it also sets Definition.Changed (U3).
	Files map[string]FileState `json:"files,omitempty"`
	// Images are images the call returned beside Content (an MCP server's
	// image content), with their bytes; Content keeps a line for each (F2).
	Images []round.Image `json:"images,omitempty"`
	// Input: the call's MCP server asks for input before it answers; the
	// engine has the call wait for a person and runs it again with the
	// answers (E1). Only where InputRounds holds.
	Input *round.InputRequired `json:"input,omitempty"`
	// Task: the call's MCP server runs it as this task (E2); the engine
	// polls it in a call of its own (Request.Task). Only where InputRounds
	// holds.
	Task *round.MCPTask `json:"task,omitempty"`
}

type inputRoundsKey struct{}

// WithInputRounds marks a context whose call may hand a server's input
// requests to its round (Result.Input) instead of asking in place.
func WithInputRounds(ctx context.Context) context.Context {
	return context.WithValue(ctx, inputRoundsKey{}, true)
}

// InputRounds reports whether the call may return Result.Input.
func InputRounds(ctx context.Context) bool {
	on, _ := ctx.Value(inputRoundsKey{}).(bool)
	return on
}

// Text is a Result with only content.
func Text(s string) Result { return Result{Content: s} }

// Handler runs one call. A returned error is the tool's own failure (file not
// found, HTTP 404): it becomes a result for the model and is not retried.
// Wrap an error with Transient to ask for a retry when the tool allows one.
type Handler func(ctx context.Context, req Request) (Result, error)

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err as a passing failure (a network timeout, a 503) that is
// worth retrying for retryable tools.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

// IsTransient reports whether err was marked with Transient.
func IsTransient(err error) bool {
	var t *transientError
	return errors.As(err, &t)
}

// ErrOutcomeLost marks a failure after which nobody can know what the call
// did: the work it started is gone (an MCP server's task that died with the
// worker that started it, E2). Its call ends unknown_outcome.
var ErrOutcomeLost = errors.New("the outcome is lost")
