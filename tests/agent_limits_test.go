package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// limitsModel is a model that loads calculate, then calculates once a
// round until it has seen rounds calculate results, then answers; every
// answer reports tokens tokens of usage.
func newLimitsModel(t *testing.T, rounds, tokens int) *modelServer {
	return newModelServer(t, func(r scripted.Request) (scripted.Turn, error) {
		usage := &scripted.Usage{Input: tokens - 10, Output: 10}
		switch n := len(r.Results()); {
		case n == 0:
			return scripted.Turn{Calls: []scripted.Call{modelFindTools("call_find", "calculate")}, Usage: usage}, nil
		case n <= rounds:
			return scripted.Turn{Calls: []scripted.Call{modelRunTool(fmt.Sprintf("call_calc%d", n), "calculate",
				map[string]any{"expression": fmt.Sprintf("%d*2", n)})}, Usage: usage}, nil
		}
		return scripted.Turn{Text: "counted", Usage: usage}, nil
	}, scripted.Options{})
}

// TestAgentRunLimitWaitIsVisible (B1): an agent run with --limits
// max_calls 2 makes its third call wait as kind limit; starter pending,
// starter inbox and agent-status show the limit with its count while it
// waits; denied, the call is skipped, the model hears so and the run
// goes on to its answer.
func TestAgentRunLimitWaitIsVisible(t *testing.T) {
	m := newLimitsModel(t, 2, 50)
	e := newAgentEnv(t, m)
	done := e.startAgent("--session", e.session, "--run", "run-1", "--limits", `{"max_calls": 2}`, "count twice")

	third := names.WorkflowID(e.session, "run-1", 3)
	pending := e.waitPending(third, "call_calc2")
	require.Equal(t, round.KindLimit, pending[0].Kind)
	require.NotEmpty(t, pending[0].WaitID)
	require.Contains(t, strings.Join(pending[0].Reasons, "|"), "max_calls")
	require.Equal(t, []round.LimitCount{{Limit: round.LimitCalls, Count: 2, Max: 2}}, pending[0].Limits)

	require.Eventually(t, func() bool {
		rd, ok := e.inbox(t, []string{third}, "--session", e.session)[third]
		return ok && len(rd.Pending) == 1 && rd.Pending[0].Kind == round.KindLimit &&
			len(rd.Pending[0].Limits) == 1 && rd.Pending[0].Limits[0] == round.LimitCount{Limit: round.LimitCalls, Count: 2, Max: 2}
	}, 30*time.Second, 200*time.Millisecond, "the inbox lists the limit wait with its count")
	table := e.mustStarter("inbox", "--session", e.session)
	require.Contains(t, table.stdout, "limit (max_calls 2/2)")

	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentRunning, st.Status)
	require.Contains(t, st.Limits, round.LimitCount{Limit: round.LimitCalls, Count: 2, Max: 2}, "agent-status shows the limits and counts")

	e.mustStarter("deny", third, "call_calc2", "--reason", "two is enough")
	r := <-done
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "counted\n", r.stdout)
	reqs := m.requests()
	results := reqs[len(reqs)-1].Results()
	require.Contains(t, results[len(results)-1].Content, "two is enough", "the model hears why the call was skipped")
	st = e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Contains(t, st.Limits, round.LimitCount{Limit: round.LimitCalls, Count: 2, Max: 2}, "the skipped call is not counted")
}

// TestAgentRunEndsAtMaxModelTokens (B1): at 50 reported tokens a call and
// --limits max_model_tokens 120, the third reply passes the limit: its
// call does not run, starter agent exits 1 naming limit_reached, and
// agent-status keeps the conversation and shows the count.
func TestAgentRunEndsAtMaxModelTokens(t *testing.T) {
	m := newLimitsModel(t, 5, 50)
	e := newAgentEnv(t, m)
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "--limits", `{"max_model_tokens": 120}`, "count")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "limit_reached")
	require.Contains(t, r.stderr, "max_model_tokens")
	require.Empty(t, r.stdout)

	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentLimitReached, st.Status)
	require.Equal(t, 3, st.ModelCalls)
	require.Equal(t, 2, st.Round, "the third reply's call did not run")
	require.Contains(t, st.Limits, round.LimitCount{Limit: round.LimitModelTokens, Count: 150, Max: 120})
	require.Equal(t, "assistant", st.Conversation[len(st.Conversation)-1].Role, "the conversation is kept to the last reply")
}
