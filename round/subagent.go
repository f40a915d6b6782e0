package round

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Subagents (G1): a subagents call runs its task as a child agent run, in
// the caller's session and workspace, whose run id derives from the call's
// operation id, so that a retried or replayed call finds the same child.
const (
	// SubagentPrefix starts every subagent's run id.
	SubagentPrefix = "sub-"
	// ChatbotPrefix starts every chatbot's run id (G3).
	ChatbotPrefix = "chat-"
	// GatewayPrefix starts the run id of every run of the MCP gateway
	// (Z2): mcp-<R>, R the run its client names.
	GatewayPrefix = "mcp-"
	// DefaultSubagentDepth is SUBAGENT_DEPTH's default: a run's subagents
	// start no subagents of their own.
	DefaultSubagentDepth = 1
	// MaxExcludedTools bounds an input's exclude list.
	MaxExcludedTools = 1024
	// SearchParent is the search attribute that names a subagent's parent
	// workflow; wire.MemoParent the memo field that does.
	SearchParent = "ToolroundParent" // Keyword
)

// BackgroundSubagents is G2's tool.
const BackgroundSubagents = "background_subagents"

// NotThisRun starts the answer for a subagent id that is not one of the
// run's (G2), whether or not it exists.
const NotThisRun = "not_this_run"

// RunOfWorkflowID is the session and run of a round's or an agent run's
// workflow id; ok is false for any other id.
func RunOfWorkflowID(id string) (session, run string, ok bool) {
	session, ok = SessionOfWorkflowID(id)
	if !ok {
		return "", "", false
	}
	return session, strings.Split(id, "/")[2], true
}

// RecursiveTools start runs of their own: a run at the deepest depth
// SUBAGENT_DEPTH allows has none of them.
var RecursiveTools = []string{"subagents", "background_subagents", "send_to_chatbot"}

// SubagentArgs are the arguments of a subagents or background_subagents
// call (G1, G2): a task to start, or the id of one of the run's
// background subagents to look at.
type SubagentArgs struct {
	ID           string   `json:"id,omitempty"`
	Task         string   `json:"task"`
	Name         string   `json:"name,omitempty"`
	SystemPrompt string   `json:"system_prompt,omitempty"`
	ExcludeTools []string `json:"exclude_tools,omitempty"`
}

// SubagentRunID is the run id of the subagent that the call of operation
// id opID starts: "sub-" and the first 24 hex digits of its SHA-256.
func SubagentRunID(opID string) string {
	sum := sha256.Sum256([]byte(opID))
	return SubagentPrefix + hex.EncodeToString(sum[:])[:24]
}

// reservedPrefixes start the run ids the worker and the gateway give their
// own runs.
var reservedPrefixes = []string{SubagentPrefix, ChatbotPrefix, GatewayPrefix}

// ReservedRunID reports whether a run id is of the shapes the worker gives
// its own children (subagents and chatbots) or the MCP gateway its runs,
// in any letter case, which no client input may take (T6, G1, Z2).
func ReservedRunID(runID string) bool {
	for _, p := range reservedPrefixes {
		if len(runID) >= len(p) && strings.EqualFold(runID[:len(p)], p) {
			return true
		}
	}
	return false
}

// checkNotReserved refuses a reserved run id on a client's input.
func checkNotReserved(runID string) error {
	if ReservedRunID(runID) {
		return fmt.Errorf("run_id %q is reserved: ids starting with %q, %q or %q (in any letter case) name the worker's subagents and chatbots and the MCP gateway's runs",
			truncateID(runID), SubagentPrefix, ChatbotPrefix, GatewayPrefix)
	}
	return nil
}

// checkSubagent refuses a depth below 0 and an exclude list the worker
// could not honour.
func checkSubagent(depth int, names []string) error {
	if depth < 0 || depth > 64 {
		return fmt.Errorf("depth is %d; it must be between 0 and 64", depth)
	}
	return checkExclude(names)
}

// checkExclude refuses an exclude list the worker could not honour.
func checkExclude(names []string) error {
	if len(names) > MaxExcludedTools {
		return fmt.Errorf("exclude names %d tools; at most %d are accepted", len(names), MaxExcludedTools)
	}
	for i, n := range names {
		if n == "" || len(n) > 200 {
			return fmt.Errorf("exclude[%d] is not a tool name", i)
		}
	}
	return nil
}

// Excluded reports whether name is in an exclude list.
func Excluded(exclude []string, name string) bool {
	for _, n := range exclude {
		if n == name {
			return true
		}
	}
	return false
}
