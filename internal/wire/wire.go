package wire

import (
	"encoding/json"

	"github.com/toolround/toolround/round"
)

const (
	ActivityExecuteTool  = "ExecuteTool"
	ActivityPublishRound = "PublishRound"
	// ActivityCachedResult looks a cached user tool's call up (Y3).
	ActivityCachedResult = "CachedResult"
	// ActivityToolSecrets seals, for a user tool's queue, the stored
	// values a call of it sends with {{secret:NAME}}, and
	// ActivityOpenToolResult opens that tool's sealed answer and redacts
	// them from it (Y3, T9): neither plaintext enters history.
	ActivityToolSecrets    = "ToolSecrets"
	ActivityOpenToolResult = "OpenToolResult"
	// ActivityStoreContents moves results that do not fit a round's result
	// to the blob store (see workflows.ResultBudget).
	ActivityStoreContents = "StoreContents"
	// ActivityOffloadResult keeps a user tool's large result and its
	// images in the blob store, as ExecuteTool keeps a built-in's (Y3).
	ActivityOffloadResult = "OffloadResult"
	// ActivityRefreshContents gives the blob references an agent run
	// carries into its next execution the store's whole TTL again (B3).
	ActivityRefreshContents = "RefreshContents"
	// ActivityCheckFiles checks, before a round serves a repeat, whether
	// the files the earlier result read have changed since (U3).
	ActivityCheckFiles = "CheckFiles"
	ActivityListTools  = "ListTools"
)

// ExecuteInput is the input of the ExecuteTool activity.
type ExecuteInput struct {
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	Args       string `json:"args"`
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	Round      int    `json:"round"`
	WorkflowID string `json:"workflow_id"`
	// Generation is 1 for the run a reconciler allowed after a lost
	// attempt (tools.Request.Generation).
	Generation int `json:"generation,omitempty"`
	// RuleApproved: a remembered rule approved the call (decision rule),
	// no person (tools.Request.RuleApproved).
	RuleApproved bool `json:"rule_approved,omitempty"`
	// RuleScope is the scope of the pattern rule that approved the call
	// (T12, tools.Request.RuleScope); empty for other calls.
	RuleScope string `json:"rule_scope,omitempty"`
	// ResultRefs are the references read_result may read
	// (tools.Request.ResultRefs): the run state's, in a round an agent run
	// started; set only for read_result calls (B3).
	ResultRefs []string `json:"result_refs,omitempty"`
	// Test: the call is a test_tool call of this script_* tool
	// (tools.Request.Test, G4).
	Test bool `json:"test,omitempty"`
	// InputResponses and RequestState run an MCP call again after its
	// server asked for input (InputRequired, E1); InputTrips counts the
	// round trips so far.
	InputResponses map[string]json.RawMessage `json:"input_responses,omitempty"`
	RequestState   string                     `json:"request_state,omitempty"`
	InputTrips     int                        `json:"input_trips,omitempty"`
	// Task: the call's MCP server runs it as this task (E2); the activity
	// polls it (and first answers its input requests, InputResponses)
	// instead of calling the tool.
	Task *round.MCPTask `json:"task,omitempty"`
}

// PublishInput is the input of the PublishRound local activity: pass 3's
// side effects outside history (events to the session stream, the result
// cache for http_request GETs).
type PublishInput struct {
	SessionID  string        `json:"session_id"`
	RunID      string        `json:"run_id"`
	Round      int           `json:"round"`
	WorkflowID string        `json:"workflow_id"`
	Events     []round.Event `json:"events"`
	// Finished are the call_finished events of calls whose end only the
	// workflow knows (U7); they are published before Events and are not
	// part of the round's result.
	Finished    []round.Event `json:"finished,omitempty"`
	CacheWrites []CacheWrite  `json:"cache_writes,omitempty"`
	// History is the round's assistant message and tool messages, appended to
	// the session's history when the round ends.
	History []round.Message `json:"history,omitempty"`
}

// CacheWrite is one successful read-only result of a tool that keeps its
// results in the session's result cache (tools.Definition.CacheKey: an
// http_request GET).
type CacheWrite struct {
	Tool    string `json:"tool"`
	Args    string `json:"args"`
	Content string `json:"content"`
	// ContentRef is set when Content is only the preview of a large result:
	// the whole result is cached, read back from the blob store.
	ContentRef string `json:"content_ref,omitempty"`
}

// StoreContentsInput is the input of the StoreContents local activity.
type StoreContentsInput struct {
	Contents []string `json:"contents"`
	// Preview is how many bytes of each content stay in the round's result.
	Preview int `json:"preview"`
}

// StoreContentsOutput holds one StoredContent per input content, in order.
type StoreContentsOutput struct {
	Stored []StoredContent `json:"stored"`
}

// RefreshContentsInput names the blob references to keep (B3).
type RefreshContentsInput struct {
	Refs []string `json:"refs"`
}

// RefreshContentsOutput: Refreshed references got the store's TTL again;
// Missing ones had expired or never existed.
type RefreshContentsOutput struct {
	Refreshed int      `json:"refreshed"`
	Missing   []string `json:"missing,omitempty"`
}

// StoredContent replaces one content in the round's result: Ref names the
// full text in the blob store (empty when it could not be stored), Content
// is its preview.
type StoredContent struct {
	Ref     string `json:"ref,omitempty"`
	Content string `json:"content"`
}

// CheckFilesInput is the input of the CheckFiles local activity: the
// dedupe entries a round is about to serve again, with the file states
// they recorded (U3).
type CheckFilesInput struct {
	Checks []FileCheck `json:"checks"`
}

// FileCheck is one dedupe entry to check: its key, the tool that made it
// (whose code knows how to look at the files again) and what it recorded.
type FileCheck struct {
	Key   string                     `json:"key"`
	Tool  string                     `json:"tool"`
	Files map[string]round.FileState `json:"files"`
}

// CheckFilesOutput lists the keys of the entries whose files changed or
// could not be checked; they run again instead of being served.
type CheckFilesOutput struct {
	Changed []string `json:"changed,omitempty"`
}

// ActivityReconcile asks a tool's reconciler whether a lost attempt of an
// at-most-once call took effect (SPEC R).
const ActivityReconcile = "Reconcile"

// Verdicts of ReconcileOutput.
const (
	VerdictApplied = "applied" // the effect is in place: the call is ok
	VerdictAbsent  = "absent"  // no effect and the attempt is dead: run once more
	VerdictUnknown = "unknown" // nothing proven: unknown_outcome
)

// ReconcileInput is the input of the Reconcile activity: the call as
// ExecuteTool received it.
type ReconcileInput struct {
	Call ExecuteInput `json:"call"`
}

// ReconcileOutput is the reconciler's verdict; Content is the call's result
// when the effect was found, otherwise why it was not.
type ReconcileOutput struct {
	Verdict string   `json:"verdict"`
	Content string   `json:"content,omitempty"`
	Touched []string `json:"touched,omitempty"`
}

// CachedResultInput asks the session's result cache for a user tool's
// call: its tool, the schema hash the round saw and its arguments.
type CachedResultInput struct {
	SessionID  string `json:"session_id"`
	Tool       string `json:"tool"`
	SchemaHash string `json:"schema_hash"`
	Args       string `json:"args"`
}

// CachedResultOutput is the cached result, when Found.
type CachedResultOutput struct {
	Found   bool   `json:"found"`
	Content string `json:"content,omitempty"`
}

// ToolSecretsInput names the secrets a user tool's call sends.
type ToolSecretsInput struct {
	SessionID string   `json:"session_id"`
	Queue     string   `json:"queue"`
	Names     []string `json:"names"`
}

// ToolSecretsOutput is each named value sealed for the queue, or the name
// of one the session has not stored (Missing), when the call cannot run.
type ToolSecretsOutput struct {
	Sealed  map[string]string `json:"sealed,omitempty"`
	Missing string            `json:"missing,omitempty"`
}

// OpenToolResultInput is a user tool's sealed answer (a result, or a
// failure's message) and the secrets its call sent, to redact from it.
type OpenToolResultInput struct {
	SessionID string   `json:"session_id"`
	Queue     string   `json:"queue"`
	Names     []string `json:"names"`
	Sealed    string   `json:"sealed"`
	// Failure: Sealed is a failure's message, not a result.
	Failure bool `json:"failure,omitempty"`
}

// ExecuteOutput is the result of the ExecuteTool activity. A tool's own
// failure is IsError with the message in Content, not an activity error.
type ExecuteOutput struct {
	// Input: the call's MCP server asks for input first (E1); the other
	// fields are empty.
	Input *round.InputRequired `json:"input,omitempty"`
	// Task: the call's MCP server runs it as a task (E2), which the next
	// activity polls; the other fields are empty.
	Task       *round.MCPTask `json:"task,omitempty"`
	Content    string         `json:"content"`
	ContentRef string         `json:"content_ref,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
	// ErrorCode is the code of a tool's failure that has one (W3).
	ErrorCode string   `json:"error_code,omitempty"`
	Fetched   []string `json:"fetched,omitempty"`
	Touched   []string `json:"touched,omitempty"`
	Read      []string `json:"read,omitempty"`
	FromCache bool     `json:"from_cache,omitempty"`
	// Files is the state of each file the call read (U3), by workdir path.
	Files map[string]round.FileState `json:"files,omitempty"`
	// Attempt is the attempt that produced the output, from 1.
	Attempt int `json:"attempt,omitempty"`
	// Reconciled is set when a reconciler found the effect of a lost
	// attempt (SPEC R).
	Reconciled bool `json:"reconciled,omitempty"`
	// Images are the images the tool returned (F2): with a blob store on
	// the worker only their references, never their bytes.
	Images []round.Image `json:"images,omitempty"`
	// Usage is what a subagents call's child run did (G1), which joins
	// the round's counts.
	Usage *round.Usage `json:"usage,omitempty"`
	// Child is the workflow id of a background subagent the call started
	// (G2), which joins the run state's children.
	Child string `json:"child,omitempty"`
}
