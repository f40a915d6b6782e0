package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
)

// shareModel is the scripted model of subagents: a child runs one command
// that appends to log.txt, then answers with its result.
func shareModel(r scripted.Request) (scripted.Turn, error) {
	last := ""
	for _, msg := range r.Messages {
		if msg.Role == "tool" && !strings.Contains(msg.Content, "was not loaded yet") {
			last = msg.Content
		}
	}
	if last == "" {
		return scripted.Turn{Calls: []scripted.Call{modelCall("call_1", "run_command", map[string]any{"command": "echo child >> log.txt"})}}, nil
	}
	return scripted.Turn{Text: "child said: " + last}, nil
}

// TestSubagentsTakeNoMoreCommandsThanTheRunHas (G1, T15): through the real
// worker, a round of a run with max_commands 1 starts two subagents and a
// background one, auto-approved: floor(1/3) is 0, so each child's command
// waits for a person instead of running, and with nobody deciding each
// ends limit_reached; no child command ran.
func TestSubagentsTakeNoMoreCommandsThanTheRunHas(t *testing.T) {
	e := newAgentEnv(t, newModelServer(t, shareModel, scripted.Options{}))
	in := e.input(1, "claude-code", &round.RunState{Fetched: append([]string{"subagents", "background_subagents"}, allToolsFetched...)},
		call("s1", "subagents", map[string]any{"task": "child one"}),
		call("s2", "subagents", map[string]any{"task": "child two"}),
		call("b1", "background_subagents", map[string]any{"task": "child three"}))
	in.AutoApprove = true
	in.ConfirmTimeoutSeconds = 2
	in.Limits = &round.Limits{MaxCommands: 1}
	res := e.round(in)
	require.Equal(t, []round.Status{round.StatusError, round.StatusError, round.StatusOK}, []round.Status{res.Results[0].Status, res.Results[1].Status, res.Results[2].Status},
		"%s | %s | %s", res.Results[0].Content, res.Results[1].Content, res.Results[2].Content)
	for _, r := range res.Results[:2] {
		require.Contains(t, r.Content, string(round.AgentLimitReached))
		require.Contains(t, r.Content, "max_commands")
	}
	id := subagentID.FindString(res.Results[2].Content)
	require.NotEmpty(t, id, res.Results[2].Content)
	var bg round.AgentStatus
	require.Eventually(t, func() bool {
		bg = e.agentStatus(id)
		return bg.Status != round.AgentRunning
	}, time.Minute, 200*time.Millisecond, "the background subagent ends")
	require.Equal(t, round.AgentLimitReached, bg.Status, bg.Reason)
	_, err := os.Stat(filepath.Join(e.workdir, "log.txt"))
	require.True(t, os.IsNotExist(err), "no child's command ran")
}
