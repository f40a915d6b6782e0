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

// BackgroundSubagents is G2's tool.
const BackgroundSubagents = "background_subagents"

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
