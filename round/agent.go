package round

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The contract of an agent run (A1-A4): one workflow per run that calls the
// model as an activity and runs each round of tool calls as a child round.
const (
	// DefaultMaxRounds bounds a run's rounds when its input does not.
	DefaultMaxRounds = 50
	// MaxTaskBytes bounds a task and a user message.
	MaxTaskBytes = 256 << 10
)

// Statuses of an agent run.
const (
	AgentRunning    = "running"
	AgentCompleted  = "completed"   // the model answered without tool calls
	AgentRoundLimit = "round_limit" // the model asked for more than max_rounds rounds
	AgentCancelled  = "cancelled"
	// AgentLimitReached: the run passed max_seconds or max_model_tokens,
	// or a call's wait past a limit expired (B1).
	AgentLimitReached = "limit_reached"
	// AgentTruncated: the model's turn was cut off (max_tokens, length,
	// an incomplete response); AgentRefused: the model refused (F4).
	// Neither turn is taken for the final answer.
	AgentTruncated = "truncated"
	AgentRefused   = "refused"
	// AgentContextExceeded: the system message, the user messages and the
	// last two rounds alone pass LLM_CONTEXT_TOKENS (B3).
	AgentContextExceeded = "context_exceeded"
)

// Stops of a model turn (wire.ModelOutput.Stop), alike for every API (F4).
const (
	StopAnswer    = "answer"
	StopTools     = "tool_use"
	StopPause     = "pause"
	StopTruncated = "truncated"
	StopRefused   = "refused"
)

// Event types of an agent run, on the session's stream beside its rounds'.
const (
	// EventModelToken carries a batch of the model's content tokens as they
	// stream in (Detail). Tool-call arguments are never streamed (T9).
	EventModelToken = "model_token"
	// EventModelReply is a finished model call: its number of tool calls
	// or a preview of its answer.
	EventModelReply = "model_reply"
	// EventAgentFinished ends a run's events; Status-like Detail is the
	// run's status.
	EventAgentFinished = "agent_finished"
)

// AgentInput starts an agent run. Carry is set only by the run itself when
// it continues as new.
type AgentInput struct {
	SessionID   string     `json:"session_id"`
	RunID       string     `json:"run_id"`
	Task        string     `json:"task"`
	Provider    string     `json:"provider"`
	AutoApprove bool       `json:"auto_approve"`
	MaxRounds   int        `json:"max_rounds,omitempty"`
	ClientTools []ToolSpec `json:"client_tools,omitempty"`
	// ConfirmTimeoutSeconds is passed to every round (see Input).
	ConfirmTimeoutSeconds int `json:"confirm_timeout_seconds,omitempty"`
	// Limits bound the run (B1): every round takes them, and the run ends
	// limit_reached past max_seconds or max_model_tokens.
	Limits *Limits `json:"limits,omitempty"`
	// HistoryEvents and HistoryBytes override the bounds past which the run
	// continues as new (agentrun.HistoryEvents, HistoryBytes).
	HistoryEvents int `json:"history_events,omitempty"`
	HistoryBytes  int `json:"history_bytes,omitempty"`
	// A subagent's (G1), set by the round that starts it: its system
	// prompt, the tools it does not have, its depth (1 for a run's own
	// subagents), the workflow that started it and its label.
	SystemPrompt string   `json:"system_prompt,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	Depth        int      `json:"depth,omitempty"`
	Parent       string   `json:"parent,omitempty"`
	Name         string   `json:"name,omitempty"`
	// ZeroShare names the limits of which a subagent's share is 0 (G1,
	// T15): Limits has them at 1 and the run starts 1 below, so that its
	// first counted call waits. Set only by the round that starts it.
	ZeroShare []string `json:"zero_share,omitempty"`
	// A chatbot's (G3): Persistent runs wait for the next message (update
	// chat) after each answer; Chain names the chatbots the run is part
	// of, its own last; Model replaces LLM_MODEL for its model calls.
	Persistent bool     `json:"persistent,omitempty"`
	Chain      []string `json:"chain,omitempty"`
	Model      string   `json:"model,omitempty"`
	// Script, when set, is the run's model: its turns are played in
	// place of a call to the worker's model (docs/scripted-model.md).
	Script *ModelScript `json:"script,omitempty"`
	Carry  *AgentCarry  `json:"carry,omitempty"`
}

// AgentCarry is what a run hands to its next execution when it continues
// as new: the conversation, the run state and the counters.
type AgentCarry struct {
	Conversation []AgentMessage `json:"conversation"`
	State        *RunState      `json:"state,omitempty"`
	Round        int            `json:"round"`
	ModelCalls   int            `json:"model_calls"`
	// Executions counts the executions before this one.
	Executions int `json:"executions"`
	// LastRequest is the size of the run's last model request (B3).
	LastRequest *RequestSize `json:"last_request,omitempty"`
	// Replies are a persistent run's last replies (G3), by message id.
	Replies []ChatReply `json:"replies,omitempty"`
}

// WithDefaults returns the input with MaxRounds set.
func (in AgentInput) WithDefaults() AgentInput {
	if in.MaxRounds <= 0 {
		in.MaxRounds = DefaultMaxRounds
	}
	return in
}

// Validate reports an input that cannot start a run, as a client gives
// it: the run ids of subagents and chatbots are the worker's (T6).
func (in *AgentInput) Validate() error {
	if err := in.ValidateStarted(); err != nil {
		return err
	}
	// Only at the edge: a workflow reads a started input as it is.
	if err := CheckProvider(in.Provider); err != nil {
		return err
	}
	if err := in.Script.Validate(); err != nil {
		return err
	}
	return checkNotReserved(in.RunID)
}

// ValidateStarted reports an input that cannot run, as the workflow reads
// it: a subagent's reserved run id is accepted.
func (in *AgentInput) ValidateStarted() error {
	if err := checkIdentifier("session_id", in.SessionID); err != nil {
		return err
	}
	if err := checkIdentifier("run_id", in.RunID); err != nil {
		return err
	}
	if err := checkSubagent(in.Depth, in.Exclude); err != nil {
		return err
	}
	if err := checkChain(in.Chain); err != nil {
		return err
	}
	if len(in.SystemPrompt) > MaxTaskBytes {
		return fmt.Errorf("system_prompt is %d bytes; at most %d are accepted", len(in.SystemPrompt), MaxTaskBytes)
	}
	if strings.TrimSpace(in.Task) == "" && in.Carry == nil && !in.Persistent {
		return fmt.Errorf("task is empty")
	}
	if len(in.Task) > MaxTaskBytes {
		return fmt.Errorf("task is %d bytes; at most %d are accepted", len(in.Task), MaxTaskBytes)
	}
	if in.MaxRounds < 0 {
		return fmt.Errorf("max_rounds is %d; it must be 0 (default %d) or more", in.MaxRounds, DefaultMaxRounds)
	}
	if in.MaxRounds > 100000 {
		return fmt.Errorf("max_rounds is %d; at most 100000 are accepted", in.MaxRounds)
	}
	for i, t := range in.ClientTools {
		if t.Function.Name == "" {
			return fmt.Errorf("client_tools[%d] has no name", i)
		}
	}
	if err := in.Limits.Validate(); err != nil {
		return err
	}
	for _, name := range in.ZeroShare {
		if in.Parent == "" || in.Limits.Get(name) != 1 {
			return fmt.Errorf("zero_share names %q, which only a subagent's limit of 1 may be", name)
		}
	}
	return checkConfirmTimeout(in.ConfirmTimeoutSeconds)
}

// AgentMessage is a message of a run's conversation. A content too large
// to travel in history is kept in the blob store: Content is then its
// preview and ContentRef names the whole text, which the model activity
// reads back. Tool names a tool message's tool, so that the whole message
// is MessageContent(Tool, blob). ArgRefs[i], when set, names the whole
// arguments of ToolCalls[i], whose Arguments are then a preview.
type AgentMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ContentRef string `json:"content_ref,omitempty"`
	Tool       string `json:"tool,omitempty"`
	// Note is what a repeated result's message says before the result (U3);
	// a content loaded back through ContentRef keeps it.
	Note       string     `json:"note,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ArgRefs    []string   `json:"arg_refs,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Format and Raw are, for an assistant turn of the Messages or
	// Responses API (F4), its format and the turn as the API gave it (the
	// assistant message; the output items), which goes back unchanged:
	// thinking blocks with their signatures, reasoning items. Content and
	// ToolCalls then repeat its text and calls, store_secret values
	// sealed in both.
	Format Format          `json:"format,omitempty"`
	Raw    json.RawMessage `json:"raw,omitempty"`
	// RawRef, when set, names the whole turn in the blob store: a turn
	// too large for history (above LARGE_RESULT_BYTES) is kept there, and
	// Raw is then its ShortTurn, the calls that its round reads; the model
	// activity sends the whole turn back.
	RawRef string `json:"raw_ref,omitempty"`
	// IsError marks a tool message whose call did not succeed (F2's
	// is_error).
	IsError bool `json:"is_error,omitempty"`
	// Budgeted marks a tool result the context budget replaced (B3): the
	// model gets Content, a preview naming ContentRef, and reads the whole
	// back with read_result; the model activity never expands it.
	Budgeted bool `json:"budgeted,omitempty"`
}

// UserMessage is the payload of SignalUserMessage.
type UserMessage struct {
	Text string `json:"text"`
}

// AgentStatus is the answer to QueryAgentStatus and the run's result.
type AgentStatus struct {
	WorkflowID   string         `json:"workflow_id"`
	Status       string         `json:"status"`
	Round        int            `json:"round"`
	ModelCalls   int            `json:"model_calls"`
	Executions   int            `json:"executions"`
	Conversation []AgentMessage `json:"conversation"`
	Final        string         `json:"final,omitempty"`
	// Limits are the run's limits with what it did (B1); Reason says why
	// it ended limit_reached.
	Limits []LimitCount `json:"limits,omitempty"`
	Reason string       `json:"reason,omitempty"`
	// Usage is what the run did, for the run that started it as a
	// subagent: the calls, commands, writes and model tokens it adds to
	// its own counts (G1).
	Usage *Usage `json:"usage,omitempty"`
}

// RequestSize is a model request as the budget measures it (B3): its JSON
// bytes and the input tokens the API reported for it (0: none).
type RequestSize struct {
	Bytes       int   `json:"bytes"`
	InputTokens int64 `json:"input_tokens,omitempty"`
}

// Estimate is the size in tokens of a request of bytes JSON bytes that
// follows last (B3): the last reported input tokens plus the new bytes /
// 4 (fewer bytes, fewer tokens), or bytes / 4 when none were reported.
func (last *RequestSize) Estimate(bytes int) int {
	if last == nil || last.InputTokens <= 0 || last.Bytes <= 0 {
		return bytes / 4
	}
	return max(0, int(last.InputTokens)+(bytes-last.Bytes)/4)
}
