package tests

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round"
)

// taskEnv is a worker whose MCP server "jobs" (tools/mcp/internal/
// taskserver) runs its tools as tasks, over stdio, or over streamable HTTP
// in a process of its own when http is set; created is the file where the
// server notes each research task it makes, ms how long one works.
func taskEnv(t *testing.T, http bool, ms string) (e *env, created string) {
	t.Helper()
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "taskserver", "taskserver")
	created = filepath.Join(dir, "created")
	entry := map[string]any{"command": server, "env": map[string]string{"TASK_LOG": created, "TASK_MS": ms}}
	if http {
		entry = map[string]any{"url": startHTTPTaskServer(t, server, created, ms)}
	}
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"jobs": entry})
	return newEnv(t, "MCP_CONFIG="+mcpConfig), created
}

// startHTTPTaskServer runs the task server binary server over streamable
// HTTP, in a process of its own, until the test ends; it notes each
// research task it makes in created, and each works ms milliseconds. It
// returns the server's URL.
func startHTTPTaskServer(t *testing.T, server, created, ms string) string {
	t.Helper()
	cmd := exec.Command(server, "-http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TASK_LOG="+created, "TASK_MS="+ms)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	u, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(u)
}

// researchThroughAKill runs a round with one research call (r1) on topic,
// kills the worker once the server made the task, starts another, and
// returns the round's results.
func researchThroughAKill(t *testing.T, e *env, created, topic string) map[string]round.CallResult {
	t.Helper()
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_jobs_research"}},
		call("r1", "mcp_jobs_research", map[string]any{"topic": topic}))
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return len(markLines(t, created)) == 1 }, 30*time.Second, 50*time.Millisecond)
	w.kill(t)
	e.startWorker()
	return byID(decodeResult(t, <-done))
}

// TestMCPTaskWithInputThroughTheWorker: a 2026-07-28 server runs the call
// as a task, whose id lands in history; the task asks for input, which
// waits as kind elicitation and is answered with `starter answer`; the
// answer goes back by tasks/update and the call ends with the task's
// result (SPEC E2).
func TestMCPTaskWithInputThroughTheWorker(t *testing.T) {
	e, _ := taskEnv(t, false, "200")
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_jobs_confirm", "mcp_jobs_research"}},
		call("c1", "mcp_jobs_confirm", map[string]any{"what": "the launch"}),
		call("r1", "mcp_jobs_research", map[string]any{"topic": "tides"}))
	in.AutoApprove = true
	done := e.startRound(in)
	wfID := in.WorkflowID()
	p := e.waitPending(wfID, "c1")[0]
	require.Equal(t, round.KindElicitation, p.Kind)
	require.NotEmpty(t, p.WaitID)
	require.Equal(t, "jobs", p.Elicitation.Server)
	require.Equal(t, "Confirm the launch?", p.Elicitation.Message)
	e.mustStarter("answer", wfID, "c1", "--json", `{"ok":true}`)
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusOK, r["c1"].Status, r["c1"].Content)
	require.Equal(t, "confirmed the launch", r["c1"].Content)
	require.Equal(t, round.StatusOK, r["r1"].Status, r["r1"].Content)
	require.Equal(t, "report on tides", r["r1"].Content)

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	var ids []string
	it := tc.GetWorkflowHistory(context.Background(), wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && strings.HasPrefix(a.GetActivityId(), "c1") {
			ids = append(ids, a.GetActivityId())
		}
	}
	require.Equal(t, []string{"c1", "c1/task-1", "c1/task-input-1"}, ids, "made once, then polled, then polled with the answer")
}

// TestMCPHTTPTaskSurvivesAWorkerKill: a streamable HTTP server's task goes
// on while the worker that made it dies; the next worker polls it to its
// result, and the server made it once (SPEC E2).
func TestMCPHTTPTaskSurvivesAWorkerKill(t *testing.T) {
	e, created := taskEnv(t, true, "6000")
	r := researchThroughAKill(t, e, created, "comets")
	require.Equal(t, round.StatusOK, r["r1"].Status, r["r1"].Content)
	require.Equal(t, "report on comets", r["r1"].Content)
	require.Equal(t, []string{"comets"}, markLines(t, created), "made once, though two workers ran the call")
}

// TestMCPStdioTaskLostWithTheWorker: a stdio server's task dies with the
// worker (the server is its child, T8): the next worker finds it lost, and
// the call, made once, ends unknown_outcome saying why (SPEC E2).
func TestMCPStdioTaskLostWithTheWorker(t *testing.T) {
	e, created := taskEnv(t, false, "60000")
	r := researchThroughAKill(t, e, created, "eels")
	require.Equal(t, round.StatusUnknownOutcome, r["r1"].Status, r["r1"].Content)
	require.Contains(t, r["r1"].Content, "the task ran in the process of the stdio server that made it")
	require.Equal(t, []string{"eels"}, markLines(t, created))
}

// askResearch starts a worker and a round that calls the everything
// server ("ev") simulate-research-query, q1, on the ambiguous topic tides;
// it returns the round's end, its workflow id and q1's wait, for the
// server's question which interpretation is meant.
func (e *env) askResearch() (done <-chan result, wfID string, p round.Pending) {
	e.t.Helper()
	e.startWorker()
	tool := "mcp_ev_simulate-research-query"
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{tool}},
		call("q1", tool, map[string]any{"topic": "tides", "ambiguous": true}))
	in.AutoApprove = true
	done = e.startRound(in)
	wfID = in.WorkflowID()
	p = e.waitPending(wfID, "q1")[0]
	require.Equal(e.t, round.KindElicitation, p.Kind)
	require.Contains(e.t, p.Elicitation.Message, `"tides" could have multiple interpretations`)
	return done, wfID, p
}

// TestMCPTaskFromTheEverythingServer: the MCP reference server's
// simulate-research-query is a 2025-11-25 task (taskSupport "required");
// asked an ambiguous topic, it asks during tasks/result which
// interpretation is meant, which waits in the round, and the answer reaches
// the report (SPEC E2).
func TestMCPTaskFromTheEverythingServer(t *testing.T) {
	e, _ := everythingEnv(t)
	done, wfID, p := e.askResearch()
	require.Equal(t, "ev", p.Elicitation.Server)
	require.Contains(t, string(p.Elicitation.RequestedSchema), `"historical"`)
	bad := e.starter(t.Context(), "", "answer", wfID, "q1", "--json", `{"interpretation":"astrological"}`)
	require.NotEqual(t, 0, bad.code, "not one of the schema's choices")
	e.mustStarter("answer", wfID, "q1", "--json", `{"interpretation":"historical"}`)
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusOK, r["q1"].Status, r["q1"].Content)
	require.Contains(t, r["q1"].Content, "# Research Report: tides (historical)")
}

// TestMCPHTTPTaskFromTheEverythingServer: the same task over streamable
// HTTP, where the server's question comes in the event stream of the
// worker's own tasks/result request, and the answer goes back as an HTTP
// request of its own (SPEC E2).
func TestMCPHTTPTaskFromTheEverythingServer(t *testing.T) {
	node, entry, _ := everythingServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	srv := exec.Command(node, entry, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+addr[strings.LastIndex(addr, ":")+1:])
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the everything server listens")
	mcpConfig := writeMCPConfig(t, t.TempDir(), map[string]any{"ev": map[string]any{"url": "http://" + addr + "/mcp"}})
	e := newEnv(t, "MCP_CONFIG="+mcpConfig)
	done, wfID, _ := e.askResearch()
	e.mustStarter("answer", wfID, "q1", "--json", `{"interpretation":"current"}`)
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.StatusOK, r["q1"].Status, r["q1"].Content)
	require.Contains(t, r["q1"].Content, "# Research Report: tides (current)")
}
