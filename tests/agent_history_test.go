package tests

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// agentWorkflowCompletes starts the agent run of in on e's task queue
// through the Temporal client tc, as a client of Temporal would, and
// returns its workflow id and its status, which must be completed within
// timeout.
func (e *env) agentWorkflowCompletes(tc tclient.Client, in round.AgentInput, timeout time.Duration) (wid string, st round.AgentStatus) {
	e.t.Helper()
	wid = names.AgentWorkflowID(in.SessionID, in.RunID)
	run, err := tc.ExecuteWorkflow(context.Background(), tclient.StartWorkflowOptions{ID: wid, TaskQueue: e.taskQueue}, names.AgentWorkflowName, in)
	require.NoError(e.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	require.NoError(e.t, run.Get(ctx, &st))
	require.Equal(e.t, round.AgentCompleted, st.Status)
	return wid, st
}

// TestAgentRunHistoryBounded200Rounds runs an agent run of 200 rounds (one
// calculate call each) against a scripted model and reports, per
// continue-as-new execution, the history length and size, and the run's
// overhead per round over the round itself (BENCHMARKS.md). It takes a few
// minutes: set TOOLROUND_AGENT_ROUNDS (e.g. 200) to run it.
func TestAgentRunHistoryBounded200Rounds(t *testing.T) {
	rounds := 0
	if s := os.Getenv("TOOLROUND_AGENT_ROUNDS"); s != "" {
		_, _ = fmt.Sscanf(s, "%d", &rounds)
	}
	if rounds <= 0 {
		t.Skip("set TOOLROUND_AGENT_ROUNDS=200 to run the long agent run")
	}
	m := countingModel(t, rounds)
	e := newAgentEnv(t, m)
	start := time.Now()
	r := e.starter(context.Background(), "", "agent", "--session", e.session, "--run", "run-1", "--auto-approve",
		"--max-rounds", fmt.Sprint(rounds), "count")
	took := time.Since(start)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "done\n", r.stdout)
	require.Len(t, m.requests(), rounds+1, "every model call made once")

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx := context.Background()
	wid := names.AgentWorkflowID(e.session, "run-1")
	var execs []struct {
		start        time.Time
		length, size int64
	}
	var roundTime time.Duration
	require.Eventually(t, func() bool {
		execs = execs[:0]
		roundTime = 0
		var token []byte
		n := 0
		for {
			resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Query: fmt.Sprintf("WorkflowId = '%s' OR WorkflowId STARTS_WITH 'toolround/%s/run-1/'", wid, e.session), NextPageToken: token})
			if err != nil {
				return false
			}
			for _, x := range resp.GetExecutions() {
				if x.GetType().GetName() == names.AgentWorkflowName {
					execs = append(execs, struct {
						start        time.Time
						length, size int64
					}{x.GetStartTime().AsTime(), x.GetHistoryLength(), x.GetHistorySizeBytes()})
					continue
				}
				n++
				roundTime += x.GetCloseTime().AsTime().Sub(x.GetStartTime().AsTime())
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		return n == rounds
	}, 30*time.Second, time.Second, "visibility lists every round")
	sort.Slice(execs, func(i, j int) bool { return execs[i].start.Before(execs[j].start) })
	var maxLen, maxSize int64
	for i, x := range execs {
		t.Logf("execution %d: %d events, %d bytes of history", i+1, x.length, x.size)
		maxLen, maxSize = max(maxLen, x.length), max(maxSize, x.size)
	}
	perRound := took / time.Duration(rounds)
	t.Logf("%d rounds in %v (%v per round); the rounds themselves: %v per round; the run's overhead per round: %v (model call, child start and result)",
		rounds, took.Round(time.Millisecond), perRound.Round(time.Millisecond), (roundTime / time.Duration(rounds)).Round(time.Millisecond),
		((took - roundTime) / time.Duration(rounds)).Round(time.Millisecond))
	t.Logf("%d executions; largest history %d events, %d bytes (bounds %d events, %d bytes)", len(execs), maxLen, maxSize, agentrun.HistoryEvents, agentrun.HistoryBytes)
	require.LessOrEqual(t, maxLen, int64(agentrun.HistoryEvents+100), "continue-as-new keeps every execution's history near the bound")
}

// TestAgentRunNeverPassesItsHistoryBytes (L2): every execution of an agent
// run stays within the input's history_bytes. Its task is large, so that
// each pass carries about the same conversation to the model and adds
// about as much history as the one before; a run that continued as new
// only once past the bound took one pass too many first.
func TestAgentRunNeverPassesItsHistoryBytes(t *testing.T) {
	const rounds, bound = 30, 128 << 10
	e := newAgentEnv(t, countingModel(t, rounds))
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx := context.Background()
	task := "count, following these notes: " + strings.Repeat("a note that makes the conversation long. ", 200)
	wid, st := e.agentWorkflowCompletes(tc, round.AgentInput{SessionID: e.session, RunID: "run-1", Task: task, Provider: "openai",
		AutoApprove: true, MaxRounds: rounds + 1, HistoryBytes: bound}, 3*time.Minute)

	type execution struct {
		start time.Time
		bytes int64
	}
	var execs []execution
	require.Eventually(t, func() bool {
		execs = execs[:0]
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", wid)})
		if err != nil {
			return false
		}
		for _, x := range resp.GetExecutions() {
			if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				execs = append(execs, execution{x.GetStartTime().AsTime(), x.GetHistorySizeBytes()})
			}
		}
		return len(execs) == st.Executions
	}, 30*time.Second, 500*time.Millisecond, "visibility lists every execution")
	sort.Slice(execs, func(i, j int) bool { return execs[i].start.Before(execs[j].start) })
	t.Logf("%d executions, history bytes %v (bound %d)", len(execs), execs, bound)
	require.Greater(t, st.Executions, 2, "the run continued as new")
	for _, x := range execs[:len(execs)-1] { // the last one ends the run, with the final answer
		require.LessOrEqual(t, x.bytes, int64(bound), "an execution passed the history bound before it continued as new: %v", execs)
	}
}

// countingModel is a scripted model whose first turn loads calculate,
// each turn up to rounds calls it once, and the next answers "done".
func countingModel(t *testing.T, rounds int) *modelServer {
	return newModelServer(t, func(r scripted.Request) (scripted.Turn, error) {
		switch {
		case r.Step == 1:
			return scripted.Turn{Calls: []scripted.Call{modelFindTools("call_0", "calculate")}}, nil
		case r.Step <= rounds:
			return scripted.Turn{Calls: []scripted.Call{modelRunTool(fmt.Sprintf("call_%d", r.Step), "calculate",
				map[string]any{"expression": fmt.Sprintf("%d*2", r.Step)})}}, nil
		}
		return scripted.Turn{Text: "done"}, nil
	}, scripted.Options{})
}
