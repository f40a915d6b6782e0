package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/internal/testenv"
)

// TestConsoleLeavesOtherWorkflowsAlone runs against the real Temporal
// server: workflows of other types on a queue nobody polls, one with an
// id of no toolround shape and two whose ids look like a round's and an
// agent run's, are refused by every verb of an approver token, and their
// histories show that nothing was sent to them.
func TestConsoleLeavesOtherWorkflowsAlone(t *testing.T) {
	tc, err := tclient.Dial(tclient.Options{HostPort: testenv.TemporalAddress(),
		Logger: testenv.QuietLogger()})
	if err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", testenv.TemporalAddress(), err)
	}
	t.Cleanup(tc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := tc.CheckHealth(ctx, &tclient.CheckHealthRequest{}); err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", testenv.TemporalAddress(), err)
	}

	u := fmt.Sprint(time.Now().UnixNano())
	queue := "nobody-polls-" + u
	others := map[string]string{ // id: type
		"unrelated-" + u:                "PayrollRun",
		"toolround/s1/" + u + "/1":      "NotARound",
		"agentrun/s1/" + u:              "NotAnAgentRun",
		"toolround/s1/" + u + "-rt/1/x": "ToolRound", // the right type, another id shape
	}
	for id, typ := range others {
		_, err := tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 10 * time.Minute}, typ, "x")
		require.NoError(t, err, id)
		t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), id, "", "test over") })
	}

	srv, err := New(Options{Backend: NewTemporalBackend(tc, TemporalOptions{TaskQueue: queue}),
		Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}}})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	hc := &http.Client{Timeout: 30 * time.Second}
	send := func(method, path, body string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+approverToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err, "%s %s", method, path)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	for id := range others {
		for path, body := range actions(id) {
			code, out := send("POST", path, body)
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, code, "%s %s: %s", path, id, out)
		}
		for _, path := range []string{"/api/v1/rounds/" + id, "/api/v1/agents/" + id} {
			code, out := send("GET", path, "")
			require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, code, "%s: %s", path, out)
		}
		code, out := send("POST", "/api/v1/agents/"+id+"/messages", `{"text":"hi"}`)
		require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, code, "%s: %s", id, out)
	}
	code, out := send("GET", "/api/v1/inbox", "")
	require.Equal(t, http.StatusOK, code, out)
	for id := range others {
		require.NotContains(t, out, id)
	}

	// Temporal recorded no cancel request, signal or update.
	for id := range others {
		d, err := tc.DescribeWorkflow(ctx, id, "")
		require.NoError(t, err, id)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.RawResponse.GetWorkflowExecutionInfo().GetStatus(), id)
		var kinds []string
		it := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			kinds = append(kinds, e.GetEventType().String())
		}
		require.Equal(t, []string{"WorkflowExecutionStarted", "WorkflowTaskScheduled"}, kinds, id)
	}
}
