package wire

const (
	MemoParent = "ToolroundParent"
)

// ActivitySubagentStatus reads a background subagent's status (G2).
const ActivitySubagentStatus = "SubagentStatus"

// SubagentStatusInput asks for the status of the subagent WorkflowID on
// behalf of a round of SessionID and RunID.
type SubagentStatusInput struct {
	WorkflowID string `json:"workflow_id"`
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
}
