package names

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/toolround/toolround/internal/text"
)

// The first segments of workflow ids, and the prefixes of the run ids that
// the worker and the gateway give their own runs.
const (
	// WorkflowIDPrefix is the first segment of every round's workflow id.
	WorkflowIDPrefix = "toolround"
	// AgentWorkflowIDPrefix is the first segment of every agent run's
	// workflow id.
	AgentWorkflowIDPrefix = "agentrun"
	// GatewayWorkflowIDPrefix starts a gateway workflow's id.
	GatewayWorkflowIDPrefix = "mcpgateway"
	// WorkspaceWorkflowIDPrefix is the first segment of the id of the
	// workflow that holds a session's workspace binding (W4):
	// workspace/<session>.
	WorkspaceWorkflowIDPrefix = "workspace"

	// SubagentPrefix starts every subagent's run id.
	SubagentPrefix = "sub-"
	// ChatbotPrefix starts every chatbot's run id (G3).
	ChatbotPrefix = "chat-"
	// GatewayPrefix starts the run id of every run of the MCP gateway
	// (Z2): mcp-<R>, R the run its client names.
	GatewayPrefix = "mcp-"

	// MaxIdentifierLen is the longest session_id or run_id.
	MaxIdentifierLen = 128
)

// WorkflowID is the id of a round's workflow execution,
// toolround/<session>/<run>/<round>: the same round submitted twice
// attaches to the same execution.
func WorkflowID(sessionID, runID string, round int) string {
	return fmt.Sprintf("%s/%s/%s/%d", WorkflowIDPrefix, sessionID, runID, round)
}

// AgentWorkflowID is the id of the agent run's workflow,
// agentrun/<session>/<run>.
func AgentWorkflowID(sessionID, runID string) string {
	return fmt.Sprintf("%s/%s/%s", AgentWorkflowIDPrefix, sessionID, runID)
}

// GatewayWorkflowID is the workflow that owns the gateway run run of
// session (Z2); run is the client's name for it, without GatewayPrefix.
func GatewayWorkflowID(session, run string) string {
	return GatewayWorkflowIDPrefix + "/" + session + "/" + run
}

// WorkspaceWorkflowID is the id of the workflow holding session's binding.
func WorkspaceWorkflowID(sessionID string) string {
	return WorkspaceWorkflowIDPrefix + "/" + sessionID
}

// SessionRoundsPrefix starts the workflow id of every round of a session.
func SessionRoundsPrefix(sessionID string) string {
	return WorkflowIDPrefix + "/" + sessionID + "/"
}

// SessionAgentsPrefix starts the workflow id of every agent run of a
// session.
func SessionAgentsPrefix(sessionID string) string {
	return AgentWorkflowIDPrefix + "/" + sessionID + "/"
}

// SessionOfWorkflowID is the session of a round's or an agent run's
// workflow id (WorkflowID, AgentWorkflowID); ok is false for any other id.
func SessionOfWorkflowID(id string) (session string, ok bool) {
	parts := strings.Split(id, "/")
	switch {
	case len(parts) == 4 && parts[0] == WorkflowIDPrefix:
	case len(parts) == 3 && parts[0] == AgentWorkflowIDPrefix:
	default:
		return "", false
	}
	if !ValidIdentifier(parts[1]) || !ValidIdentifier(parts[2]) {
		return "", false
	}
	return parts[1], true
}

// RunOfWorkflowID is the session and run of a round's or an agent run's
// workflow id; ok is false for any other id.
func RunOfWorkflowID(id string) (session, run string, ok bool) {
	session, ok = SessionOfWorkflowID(id)
	if !ok {
		return "", "", false
	}
	return session, strings.Split(id, "/")[2], true
}

// SessionOfGatewayID is the session and run of a gateway workflow id.
func SessionOfGatewayID(id string) (session, run string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != GatewayWorkflowIDPrefix || !ValidIdentifier(parts[1]) || !ValidIdentifier(parts[2]) {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// SubagentRunID is the run id of the subagent that the call of operation
// id opID starts: "sub-" and the first 24 hex digits of its SHA-256.
func SubagentRunID(opID string) string {
	sum := sha256.Sum256([]byte(opID))
	return SubagentPrefix + hex.EncodeToString(sum[:])[:24]
}

// ChatbotRunID is the run id of the chatbot name: "chat-<name>".
func ChatbotRunID(name string) string { return ChatbotPrefix + name }

// GatewayRunID is the run id the gateway's rounds carry: mcp-<run>.
func GatewayRunID(run string) string { return GatewayPrefix + run }

// GatewayCallID is the id of call i of gateway round n.
func GatewayCallID(n, i int) string { return fmt.Sprintf("mcp_%d_%d", n, i) }

// ReservedRunID reports whether a run id is of the shapes the worker gives
// its own children (subagents and chatbots) or the MCP gateway its runs,
// in any letter case, which no client input may take (T6, G1, Z2).
func ReservedRunID(runID string) bool {
	for _, p := range []string{SubagentPrefix, ChatbotPrefix, GatewayPrefix} {
		if len(runID) >= len(p) && strings.EqualFold(runID[:len(p)], p) {
			return true
		}
	}
	return false
}

// ValidIdentifier reports whether v may be a session_id or run_id:
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}, a plain name (text.PlainName) of at
// most MaxIdentifierLen bytes. Nothing else is allowed, so a '/' cannot
// make two workflow ids equal ("x/y"+"z" and "x"+"y/z") and a ':' cannot
// reach a Redis key; "." and ".." are already excluded by the first
// character.
func ValidIdentifier(v string) bool {
	return len(v) <= MaxIdentifierLen && text.PlainName(v)
}
