package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

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
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		step := 1
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				step++
			}
		}
		msg := map[string]any{"role": "assistant", "content": ""}
		switch {
		case step == 1:
			msg["tool_calls"] = []any{toolCall("call_0", "find_tools", map[string]any{"query": "select:calculate"})}
		case step <= rounds:
			msg["tool_calls"] = []any{toolCall(fmt.Sprintf("call_%d", step), "run_tool",
				map[string]any{"name": "calculate", "args": map[string]any{"expression": fmt.Sprintf("%d*2", step)}})}
		default:
			msg["content"] = "done"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	e := newEnv(t, "LLM_BASE_URL="+srv.URL, "LLM_MODEL=scripted")
	e.startWorker()
	start := time.Now()
	r := e.starter(context.Background(), "", "agent", "--session", e.session, "--run", "run-1", "--auto-approve",
		"--max-rounds", fmt.Sprint(rounds), "count")
	took := time.Since(start)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "done\n", r.stdout)
	require.EqualValues(t, rounds+1, requests.Load(), "every model call made once")

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx := context.Background()
	wid := round.AgentWorkflowID(e.session, "run-1")
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
				if x.GetType().GetName() == round.AgentWorkflowName {
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
	t.Logf("%d executions; largest history %d events, %d bytes (bounds %d events, %d bytes)", len(execs), maxLen, maxSize, workflows.AgentHistoryEvents, workflows.AgentHistoryBytes)
	require.LessOrEqual(t, maxLen, int64(workflows.AgentHistoryEvents+100), "continue-as-new keeps every execution's history near the bound")
}
