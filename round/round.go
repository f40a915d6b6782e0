// Package round is the contract of one round of tool calls, as a client or
// a tool author sees it: the input (Input, AgentInput) and the result
// (Result, CallResult, AgentStatus), the statuses, the run state carried
// between rounds (RunState), the waiting call (Pending) and the payloads of
// the decisions, answers and tool results that end its wait (Confirm,
// Answer, ToolResult, Extend, ElicitAnswer), the error type with its codes
// (Error, ErrorCode) that every side matches refusals by, the events and
// their ids, and the one place where tool messages and the history are
// built.
//
// The names these payloads travel under (workflow types, signals, updates,
// queries, search attributes) and the workflow ids are in package
// round/names. The worker's own payloads, between its workflows and its
// activities, are not part of the contract and live in internal/wire. The
// JSON of every type here is the wire format of SPEC's interface contract.
package round

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolround/toolround/round/names"
)

// Status is what happened to one call.
type Status string

const (
	StatusOK             Status = "ok"
	StatusError          Status = "error"
	StatusDeduped        Status = "deduped"         // P1.3
	StatusRefused        Status = "refused"         // P1.2
	StatusSchema         Status = "schema"          // P1.4
	StatusUnknown        Status = "unknown"         // P1.5
	StatusSkipped        Status = "skipped"         // P1.6
	StatusInvalid        Status = "invalid"         // P1.7
	StatusUnknownOutcome Status = "unknown_outcome" // P2.4
	StatusCancelled      Status = "cancelled"       // P2.5
	StatusExpired        Status = "expired"         // T3
)

// Arguments is a call's arguments as the model wrote them: normally a JSON
// string holding an object. Clients that send an object instead are accepted;
// its JSON text is kept as it is.
type Arguments string

// UnmarshalJSON accepts a JSON string or any other JSON value.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Arguments(s)
		return nil
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	*a = Arguments(b)
	return nil
}

// FunctionCall is the function part of a tool call.
type FunctionCall struct {
	Name      string    `json:"name"`
	Arguments Arguments `json:"arguments"`
}

// ToolCall is one entry of an assistant message's tool_calls.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// Message is a chat message in the OpenAI shape, or a message or item of
// another wire format (F2) kept as its JSON in Raw.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Raw, when set, is the message as it goes on the wire: an Anthropic
	// message or a Responses item (Format.Messages, Format.History). It is
	// encoded as it is, instead of the fields above; Role names the role
	// of an Anthropic message.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON writes Raw when it is set, else the OpenAI shape.
func (m Message) MarshalJSON() ([]byte, error) {
	if len(m.Raw) > 0 {
		return m.Raw, nil
	}
	type plain Message
	return json.Marshal(plain(m))
}

// Input is one round: the assistant message whose tool calls are to run, and
// the run state that the previous round returned.
type Input struct {
	SessionID   string `json:"session_id"`
	RunID       string `json:"run_id"`
	Round       int    `json:"round"`
	Provider    string `json:"provider"`
	AutoApprove bool   `json:"auto_approve"`
	// Format is the wire format of the turn and of the messages the round
	// gives back (F1, F2); empty is FormatOpenAI.
	Format Format `json:"format,omitempty"`
	// Assistant is the chat-completions assistant message whose tool_calls
	// run (format openai).
	Assistant Message `json:"assistant"`
	// Turn is, in format anthropic, the Messages API assistant message as
	// the caller gave it: it is the JSON field assistant then, and Assistant
	// stays empty (format.go).
	Turn json.RawMessage `json:"-"`
	// Output is, in format responses, the output items of a Responses API
	// response; its function_call items are the calls.
	Output      json.RawMessage `json:"output,omitempty"`
	ClientTools []ToolSpec      `json:"client_tools"`
	State       *RunState       `json:"state"`
	// ConfirmTimeoutSeconds overrides the worker's confirm timeout for this round.
	ConfirmTimeoutSeconds int `json:"confirm_timeout_seconds,omitempty"`
	// MaxConcurrent overrides the worker's MAX_CONCURRENT_TOOLS for this round.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
	// Dedupe set to false runs every call, identical ones too, and serves
	// nothing from the run's dedupe map (U3); the map is still updated.
	// Nil means true.
	Dedupe *bool `json:"dedupe,omitempty"`
	// Limits bound the run from this round on (B1); the fields it sets
	// replace those of the run state's limits.
	Limits *Limits `json:"limits,omitempty"`
	// Exclude are tools the round does not have, and Depth its run's depth
	// (G1): a subagent's rounds, as its run gives them.
	Exclude []string `json:"exclude,omitempty"`
	Depth   int      `json:"depth,omitempty"`
	// Chain names the chatbots its run is part of (G3), the nearest
	// last: a message to one of them is a cycle.
	Chain []string `json:"chain,omitempty"`
}

// DedupeOn reports whether the round dedupes its calls (P1.3, U3).
func (in *Input) DedupeOn() bool { return in.Dedupe == nil || *in.Dedupe }

// Limits on what a round accepts.
const (
	MaxCallsPerRound = 2000
	maxIDLen         = 256
)

// Validate reports input that cannot be run at all, as a client gives it:
// the run ids of subagents and chatbots are the worker's (T6). Problems of
// single calls (bad arguments, unknown tools) are not errors: they become
// results.
func (in *Input) Validate() error {
	if err := in.ValidateStarted(); err != nil {
		return err
	}
	// Only at the edge: a workflow reads a started input as it is.
	if err := CheckProvider(in.Provider); err != nil {
		return err
	}
	return checkNotReserved(in.RunID)
}

// ValidateStarted is Validate as the round workflow reads its input: a
// subagent's rounds carry its reserved run id.
func (in *Input) ValidateStarted() error {
	if err := checkID("session_id", in.SessionID); err != nil {
		return err
	}
	if err := checkID("run_id", in.RunID); err != nil {
		return err
	}
	if err := in.validateIdentifiers(); err != nil {
		return err
	}
	if in.Round < 0 {
		return fmt.Errorf("round is %d; it must be 0 or more", in.Round)
	}
	calls, err := in.TurnCalls()
	if err != nil {
		return err
	}
	if n := len(calls); n > MaxCallsPerRound {
		return fmt.Errorf("the round has %d tool calls; at most %d are accepted", n, MaxCallsPerRound)
	}
	if err := in.Limits.Validate(); err != nil {
		return err
	}
	if in.ConfirmTimeoutSeconds < 0 || in.MaxConcurrent < 0 {
		return fmt.Errorf("confirm_timeout_seconds and max_concurrent must not be negative")
	}
	seen := make(map[string]int, len(calls))
	for i, c := range calls {
		if strings.TrimSpace(c.ID) == "" {
			return Errorf(CodeInvalidInput, "%s has no id", c.Where)
		}
		if len(c.ID) > maxIDLen {
			return fmt.Errorf("%s.id is longer than %d bytes", c.Where, maxIDLen)
		}
		if j, dup := seen[c.ID]; dup {
			return fmt.Errorf("%s and %s share the id %q; every call needs its own id", calls[j].Where, c.Where, c.ID)
		}
		seen[c.ID] = i
	}
	for i, t := range in.ClientTools {
		if t.Function.Name == "" {
			return fmt.Errorf("client_tools[%d] has no name", i)
		}
	}
	if err := checkChain(in.Chain); err != nil {
		return err
	}
	return checkSubagent(in.Depth, in.Exclude)
}

func checkID(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%s is missing", field)
	}
	if len(v) > maxIDLen {
		return fmt.Errorf("%s is longer than %d bytes", field, maxIDLen)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s contains a control character", field)
		}
	}
	return nil
}

// WorkflowID of this input.
func (in *Input) WorkflowID() string { return names.WorkflowID(in.SessionID, in.RunID, in.Round) }

// CallResult is what happened to one call.
type CallResult struct {
	CallID     string `json:"call_id"`
	Tool       string `json:"tool"`
	ViaRunTool bool   `json:"via_run_tool"`
	Status     Status `json:"status"`
	Content    string `json:"content"`
	// ContentRef names content kept outside workflow history because of its
	// size; clients resolve it into Content.
	ContentRef string `json:"content_ref,omitempty"`
	// Attempts is how many times the tool started (0 when it did not run).
	Attempts int `json:"attempts,omitempty"`
	// DurationMS is how long the call ran, from its first start to its result.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Approval records how the call was allowed or refused (T2).
	Approval *Approval `json:"approval,omitempty"`
	// OperationID is the call's idempotency key, for calls that ran as
	// activities (SPEC R).
	OperationID string `json:"operation_id,omitempty"`
	// Reconciled: an attempt was lost and a reconciler found its effect.
	Reconciled bool `json:"reconciled,omitempty"`
	// Repeat names the earlier result a deduped call repeats (U3).
	Repeat *Repeat `json:"repeat,omitempty"`
	// Images are the images the tool returned beside Content (F2), in its
	// order; Format.Messages gives them in each format's own objects.
	Images []Image `json:"images,omitempty"`
	// ErrorCode names what failed when a tool's failure says so:
	// "workspace_full" (W3), "workspace_unavailable" (W5).
	ErrorCode string `json:"error_code,omitempty"`
}

// ErrorCodeWorkspaceUnavailable is the error_code of a call of a placed
// workspace (WORKSPACE_PLACEMENT=host) that never started because no
// worker of the workspace's host polled its queue within
// WORKSPACE_HOST_TIMEOUT (W5).
const ErrorCodeWorkspaceUnavailable = "workspace_unavailable"

// ErrorCodeToolUnavailable is the error_code of a user tool's call that no
// tool worker of its queue took within the tool's schedule-to-start
// timeout (Y4).
const ErrorCodeToolUnavailable = "tool_unavailable"

// ErrorCodeSchemaChanged is the error_code of a user tool's call that its
// tool worker refused because the tool changed since pass 1 (Y3).
const ErrorCodeSchemaChanged = "schema_changed"

// Image is an image a tool returned (an MCP server's image content, F2):
// its MIME type and its bytes. A worker with a blob store keeps the bytes
// there (their base64 under Ref) instead of in workflow history, and a
// client's Resolve loads them back into Data when Size is at most
// MaxImageBytes; a larger image goes by reference only.
type Image struct {
	MIMEType string `json:"mime_type"`
	// Size is the number of bytes of the image.
	Size int `json:"size"`
	// Data is the image itself (base64 in JSON); empty when only Ref holds it.
	Data []byte `json:"data,omitempty"`
	// Ref names the blob that holds the image's bytes in base64.
	Ref string `json:"ref,omitempty"`
}

// MaxImageBytes is the largest image that messages carry (F2); a larger
// one is named by its reference in the text, never sent.
const MaxImageBytes = 4 << 20

// Repeat names the earlier result of the run that a deduped result repeats
// (U3); its tool message says so (Messages).
type Repeat struct {
	// Round and CallID are the round and the call of the earlier result.
	Round  int    `json:"round"`
	CallID string `json:"call_id"`
	// SameRound: the earlier call is an identical call of the same round.
	SameRound bool `json:"same_round,omitempty"`
	// Checked: the files the earlier call read were checked before the
	// result was served again, and none had changed.
	Checked bool `json:"checked,omitempty"`
}

// Note is the line a repeated result's tool message starts with.
func (r *Repeat) Note() string {
	if r == nil {
		return ""
	}
	if r.SameRound {
		return fmt.Sprintf("(repeats the result of call %s, an identical call of this round, round %d)", r.CallID, r.Round)
	}
	s := fmt.Sprintf("(repeats the result of round %d of this run", r.Round)
	if r.Checked {
		s += "; the files it read have not changed since"
	}
	return s + ")"
}

// Decisions of an Approval record (T2).
const (
	DecisionNotNeeded = "not_needed"
	DecisionApproved  = "approved"
	DecisionDenied    = "denied"
	DecisionExpired   = "expired"
	DecisionRule      = "rule"
	DecisionAuto      = "auto"
)

// Approval is the record of how a call was allowed or refused (T2), in its
// result and its result event.
type Approval struct {
	Decision string    `json:"decision"`
	By       string    `json:"by,omitempty"`
	Via      string    `json:"via,omitempty"`
	Verified bool      `json:"verified"`
	At       time.Time `json:"at,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// Rule is the remembered rule that matched (decision "rule").
	Rule string `json:"rule,omitempty"`
	// Edited is true when the approver changed the arguments; OriginalArgs
	// then holds the model's.
	Edited       bool   `json:"edited,omitempty"`
	OriginalArgs string `json:"original_args,omitempty"`
	// Limits name the run limits the call was past when it waited (B1).
	Limits []string `json:"limits,omitempty"`
	// Uses and UpTo are, for a call a counted rule approved (B2), how many
	// calls of the run the rule has approved with this one, and its bound.
	Uses int64 `json:"uses,omitempty"`
	UpTo int64 `json:"up_to,omitempty"`
	// Scope is, for a call a pattern rule approved, the scope it runs
	// with (T12): "read-only" or "write".
	Scope string `json:"scope,omitempty"`
}

// Result is a finished round.
type Result struct {
	WorkflowID string `json:"workflow_id"`
	// Format is the round input's; Messages and History are in it (F2).
	Format   Format       `json:"format,omitempty"`
	Results  []CallResult `json:"results"`
	Messages []Message    `json:"messages"`
	History  []Message    `json:"history"`
	Events   []Event      `json:"events"`
	State    *RunState    `json:"state"`
}
