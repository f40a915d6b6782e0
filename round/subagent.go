package round

import (
	"fmt"

	"github.com/toolround/toolround/round/names"
)

// Subagents (G1): a subagents call runs its task as a child agent run, in
// the caller's session and workspace, whose run id derives from the call's
// operation id, so that a retried or replayed call finds the same child.
const (
	// DefaultSubagentDepth is SUBAGENT_DEPTH's default: a run's subagents
	// start no subagents of their own.
	DefaultSubagentDepth = 1
	// maxExcludedTools bounds an input's exclude list.
	maxExcludedTools = 1024
)

// NotThisRun starts the answer for a subagent id that is not one of the
// run's (G2), whether or not it exists.
const NotThisRun = "not_this_run"

// RecursiveTools start runs of their own: a run at the deepest depth
// SUBAGENT_DEPTH allows has none of them.
var RecursiveTools = []string{"subagents", "background_subagents", "send_to_chatbot"}

// checkNotReserved refuses a reserved run id on a client's input.
func checkNotReserved(runID string) error {
	if names.ReservedRunID(runID) {
		return fmt.Errorf("run_id %q is reserved: ids starting with %q, %q or %q (in any letter case) name the worker's subagents and chatbots and the MCP gateway's runs",
			truncateID(runID), names.SubagentPrefix, names.ChatbotPrefix, names.GatewayPrefix)
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
	if len(names) > maxExcludedTools {
		return fmt.Errorf("exclude names %d tools; at most %d are accepted", len(names), maxExcludedTools)
	}
	for i, n := range names {
		if n == "" || len(n) > 200 {
			return fmt.Errorf("exclude[%d] is not a tool name", i)
		}
	}
	return nil
}
