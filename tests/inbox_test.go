package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// inbox runs `starter inbox --json [args]` and returns the rounds it lists
// among ids (the shared server may hold other tests' rounds), by workflow id.
func (e *env) inbox(t *testing.T, ids []string, args ...string) map[string]client.InboxRound {
	t.Helper()
	r := e.starter(context.Background(), "", append([]string{"inbox", "--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	if r.stderr != "" {
		t.Logf("starter inbox: %s", r.stderr)
	}
	var rounds []client.InboxRound
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rounds), r.stdout)
	var raw []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
	for _, rd := range raw {
		require.Len(t, rd, 3, "workflow_id, session_id, pending: %s", r.stdout)
		require.Contains(t, rd, "pending")
	}
	out := map[string]client.InboxRound{}
	for _, rd := range rounds {
		for _, id := range ids {
			if rd.WorkflowID == id {
				out[id] = rd
			}
		}
	}
	return out
}

func callIDs(r client.InboxRound) []string {
	var ids []string
	for _, p := range r.Pending {
		ids = append(ids, p.CallID+":"+p.Kind)
	}
	return ids
}

// TestInboxListsWaitingRoundsAcrossSessions (T7): rounds of two sessions
// that wait for a person are listed by `starter inbox` with their waiting
// calls, --session keeps one session's, and a round leaves the inbox once
// nothing of it waits for a person any more.
func TestInboxListsWaitingRoundsAcrossSessions(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	state := &round.RunState{Fetched: append([]string{"ask_user"}, allTools...)}
	a := e.input(1, "claude-code", state,
		call("e1", "edit_file", map[string]any{"path": "a.txt", "new_text": "a"}),
		call("x1", "run_command", map[string]any{"command": "make install"}))
	b := e.input(1, "claude-code", state,
		call("e1", "edit_file", map[string]any{"path": "b.txt", "new_text": "b"}),
		call("q1", "ask_user", map[string]any{"questions": []string{"Ship it?"}}))
	b.SessionID = "other-" + e.session
	a.ConfirmTimeoutSeconds, b.ConfirmTimeoutSeconds = 120, 120
	wfA, wfB := a.WorkflowID(), b.WorkflowID()
	ids := []string{wfA, wfB}
	for _, id := range ids {
		t.Cleanup(func() { // before the worker stops, so that no round is left waiting
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e.starter(ctx, "", "cancel", id)
			e.starter(ctx, "", "result", id)
		})
	}
	doneA, doneB := e.startRound(a), e.startRound(b)

	var got map[string]client.InboxRound
	require.Eventually(t, func() bool {
		got = e.inbox(t, ids)
		return len(got) == 2 && len(got[wfA].Pending) == 2
	}, 30*time.Second, 100*time.Millisecond, "both rounds in the inbox")
	require.Equal(t, e.session, got[wfA].SessionID)
	require.Equal(t, b.SessionID, got[wfB].SessionID)
	require.Equal(t, []string{"e1:confirm", "x1:confirm"}, callIDs(got[wfA]))
	require.Equal(t, []string{"e1:confirm"}, callIDs(got[wfB]))
	require.Equal(t, "make install", got[wfA].Pending[1].Subject)
	require.NotEmpty(t, got[wfA].Pending[0].ApprovalID+got[wfA].Pending[0].Tool)
	require.False(t, got[wfA].Pending[0].Deadline.IsZero())

	only := e.inbox(t, ids, "--session", b.SessionID)
	require.Len(t, only, 1, "--session keeps that session's rounds")
	require.Contains(t, only, wfB)
	require.Empty(t, e.inbox(t, ids, "--session", "no-such-"+e.session))

	table := e.starter(context.Background(), "", "inbox", "--session", e.session)
	require.Equal(t, 0, table.code, table.stderr)
	require.Contains(t, table.stdout, "WAITED FOR")
	require.Regexp(t, `(?m)^`+wfA+` +x1 +run_command +\S+ +in \S+ +make install$`, table.stdout)

	// Round A: one decision leaves one call waiting, the second empties it.
	require.Equal(t, 0, e.starter(context.Background(), "", "approve", wfA, "e1").code)
	require.Eventually(t, func() bool {
		got = e.inbox(t, ids, "--session", e.session)
		return len(got) == 1 && len(got[wfA].Pending) == 1
	}, 30*time.Second, 100*time.Millisecond, "one call of round A waits")
	require.Equal(t, 0, e.starter(context.Background(), "", "deny", wfA, "x1").code)
	require.Eventually(t, func() bool { return len(e.inbox(t, ids, "--session", e.session)) == 0 },
		30*time.Second, 100*time.Millisecond, "an answered round leaves the inbox")
	resA := decodeResult(t, <-doneA)
	require.Equal(t, []round.Status{round.StatusOK, round.StatusSkipped}, []round.Status{resA.Results[0].Status, resA.Results[1].Status})

	// Round B: after its approval it waits for an answer, still a person's.
	require.Equal(t, 0, e.starter(context.Background(), "", "approve", wfB, "e1").code)
	require.Eventually(t, func() bool {
		got = e.inbox(t, ids, "--session", b.SessionID)
		return len(got) == 1 && strings.Join(callIDs(got[wfB]), ",") == "q1:answer"
	}, 30*time.Second, 100*time.Millisecond, "the ask_user call waits for a person")
	require.Equal(t, []string{"Ship it?"}, got[wfB].Pending[0].Questions)
	require.Equal(t, 0, e.starter(context.Background(), "", "answer", wfB, "q1", "yes").code)
	require.Eventually(t, func() bool { return len(e.inbox(t, ids)) == 0 },
		30*time.Second, 100*time.Millisecond, "no round of the test waits any more")
	resB := decodeResult(t, <-doneB)
	require.Equal(t, round.StatusOK, resB.Results[1].Status)
}

// TestWorkerRefusesANamespaceWithoutTheSearchAttributes (T7): bin/worker on
// a namespace without the inbox's attributes exits non-zero with one line
// that says how to add them.
func TestWorkerRefusesANamespaceWithoutTheSearchAttributes(t *testing.T) {
	e := newEnv(t)
	ns := testenv.BareNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workerBin)
	cmd.Env = append(e.environ(), "TEMPORAL_NAMESPACE="+ns)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the worker must exit, not poll: %s", stderr.String())
	require.NotEqual(t, 0, exit.ExitCode())
	var last string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if strings.HasPrefix(l, "worker: ") {
			last = l
		}
	}
	require.NotEmpty(t, last, stderr.String())
	require.Contains(t, last, "namespace "+ns+" lacks ToolroundSession (Keyword), ToolroundWaiting (Bool), ToolroundWaitingCalls (Int), ToolroundParent (Keyword)")
	require.Contains(t, last, "temporal operator search-attribute create --address "+temporalAddress()+" --namespace "+ns+" --name ToolroundSession --name ToolroundParent --type Keyword")
	require.NotContains(t, stderr.String(), "worker started")
}

// TestRoundCarriesItsSessionBeforeAWorkerRunsIt: the client sets the
// session's search attribute when it starts a round, so visibility finds a
// session's rounds before their first workflow task (here: no worker at all).
func TestRoundCarriesItsSessionBeforeAWorkerRunsIt(t *testing.T) {
	e := newEnv(t)
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress(), Logger: testenv.QuietLogger()})
	require.NoError(t, err)
	t.Cleanup(tc.Close) // after the round's termination below
	c := client.New(tc, client.Options{TaskQueue: e.taskQueue})
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools}, call("c1", "calculate", map[string]any{"expression": "1"}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.Start(ctx, &in)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tc.TerminateWorkflow(context.Background(), run.GetID(), "", "test over")) })
	query := "ToolroundSession = '" + e.session + "'"
	require.Eventually(t, func() bool {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.GetExecutions()) == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == in.WorkflowID()
	}, 30*time.Second, 100*time.Millisecond, "visibility finds the round by its session: %s", query)
	rounds, err := c.Inbox(ctx, e.session)
	require.NoError(t, err)
	require.Empty(t, rounds, "a round that waits for a worker waits for no person")
}
