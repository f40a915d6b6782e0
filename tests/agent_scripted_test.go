package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// `starter agent --model scripted:FILE` runs an agent run offline, on a
// worker with no model: each documented script (examples/scripted), one
// per format, loads calculate, calls it in a round of its own format and
// answers.
func TestStarterAgentPlaysAScriptInEachFormat(t *testing.T) {
	e := newEnv(t, "LLM_BASE_URL=", "LLM_MODEL=")
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, f := range round.Formats {
		name := map[round.Format]string{round.FormatOpenAI: "chat.json", round.FormatAnthropic: "anthropic.json", round.FormatResponses: "responses.json"}[f]
		path, err := filepath.Abs(filepath.Join("../examples/scripted", name))
		require.NoError(t, err)
		run := "scripted-" + string(f)
		r := e.starter(ctx, "", "agent", "--session", e.session, "--run", run, "--model", "scripted:"+path, "What is 6*7?")
		require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
		require.Equal(t, "6*7 is 42.\n", r.stdout, name)
		st := e.agentStatus(names.AgentWorkflowID(e.session, run))
		require.Equal(t, round.AgentCompleted, st.Status, name)
		require.Equal(t, 2, st.Round, "%s: find_tools, then calculate", name)
		var results []string
		for _, m := range st.Conversation {
			if m.Role == "tool" {
				results = append(results, m.Content)
			}
		}
		require.Len(t, results, 2, "%s: %v", name, st.Conversation)
		require.Contains(t, results[1], "42", "%s: calculate ran", name)
		res := e.starter(ctx, "", "result", names.WorkflowID(e.session, run, 2))
		require.Equal(t, 0, res.code, res.stderr)
		var out round.Result
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
		require.Equal(t, f, out.Format.Name(), "%s: the round's turn is in the script's format", name)
		require.Equal(t, round.StatusOK, out.Results[0].Status, name)
	}
}

// A script that ends with calls leaves the run no answer: the run ends
// with one line that says so, and a bad file is refused before anything
// starts.
func TestStarterAgentScriptThatEndsWithCalls(t *testing.T) {
	e := newEnv(t, "LLM_BASE_URL=", "LLM_MODEL=")
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	require.NoError(t, os.WriteFile(short, []byte(`{"turns": [{"role": "assistant", "content": "",
		"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "find_tools", "arguments": "{\"query\": \"select:calculate\"}"}}]}]}`), 0o644))
	r := e.starter(ctx, "", "agent", "--session", e.session, "--run", "short", "--model", "scripted:"+short, "go")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "the script has 1 turns and the model is asked for turn 2", r.stderr)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format": "anthropic", "turns": [{"role": "assistant", "content": "x"}]}`), 0o644))
	r = e.starter(ctx, "", "agent", "--session", e.session, "--run", "bad", "--model", "scripted:"+bad, "go")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "turn 1 of the script")
}
