package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestRollingUpgradeWhileRunsAreInFlight (V1): build A (bin/worker) runs
// rounds that wait for a person, a round in the middle of a fan-out of slow
// commands and an agent run between rounds; build B (bin/worker built with
// the tag upgradeprobe, whose rounds ask a change id of their own) starts
// and is made the deployment's current version; A is stopped with SIGTERM
// and drains. Every run completes on B, nothing runs twice and no log holds
// a nondeterminism error. Then B is rolled back to A for a round that B
// never ran a task of: it completes on A.
func TestRollingUpgradeWhileRunsAreInFlight(t *testing.T) {
	m := newScriptedModel(t)
	deployment := "upgrade-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e := newEnv(t, append(m.env(), "WORKER_DEPLOYMENT="+deployment, "WORKER_STOP_TIMEOUT=1m", "MAX_CONCURRENT_TOOLS=3")...)
	binB := filepath.Join(binDir, "worker-upgradeprobe")
	build := exec.Command("go", "build", "-tags", "upgradeprobe", "-o", binB, "../cmd/worker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	require.NoError(t, build.Run(), "build B")

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	makeCurrent := func(build string) {
		t.Helper()
		h := tc.WorkerDeploymentClient().GetHandle(deployment)
		require.Eventually(t, func() bool {
			_, err := h.SetCurrentVersion(ctx, tclient.WorkerDeploymentSetCurrentVersionOptions{BuildID: build})
			return err == nil
		}, 30*time.Second, 200*time.Millisecond, "set %s current", build)
	}
	stop := func(w *worker) {
		t.Helper()
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
		select {
		case <-w.done:
		case <-time.After(90 * time.Second):
			t.Fatalf("the worker did not drain:\n%s", w.logs.String())
		}
	}

	a := e.startWorkerBin(workerBin, "WORKER_BUILD_ID=build-a")
	require.Eventually(t, func() bool { return strings.Contains(a.logs.String(), "this build is now current") }, 30*time.Second, 50*time.Millisecond,
		"the deployment's first worker makes itself current:\n%s", a.logs.String())

	// On A: two rounds that wait for a person, a fan-out of four 2 s
	// commands at a bound of 3, and an agent run whose second round waits.
	st := &round.RunState{Fetched: allToolsFetched}
	wait1 := e.input(1, "claude-code", st, call("e1", "edit_file", map[string]any{"path": "one.txt", "new_text": "one"}))
	wait1.RunID = "wait-1"
	wait2 := e.input(1, "claude-code", st, call("e2", "edit_file", map[string]any{"path": "two.txt", "new_text": "two"}))
	wait2.RunID = "wait-2"
	var slow []round.ToolCall
	for i := 1; i <= 4; i++ {
		slow = append(slow, call(fmt.Sprintf("s%d", i), "run_command", map[string]any{"command": fmt.Sprintf("sleep 2; echo s%d >> fan.log", i)}))
	}
	fan := e.input(1, "claude-code", st, slow...)
	fan.RunID, fan.AutoApprove = "fan", true

	done1, done2 := e.startRound(wait1), e.startRound(wait2)
	e.waitPending(wait1.WorkflowID(), "e1")
	e.waitPending(wait2.WorkflowID(), "e2")
	agent := e.startAgent("--session", e.session, "--run", "agent", "append two lines to log.txt")
	agentRound := func(n int) string { return names.WorkflowID(e.session, "agent", n) }
	e.waitPending(agentRound(2), "call_cmd2")
	doneFan := e.startRound(fan)
	require.Eventually(t, func() bool {
		p, _ := e.progress(fan.WorkflowID())
		running := 0
		for _, c := range p.Calls {
			if c.State == "running" {
				running++
			}
		}
		return running > 0
	}, 30*time.Second, 50*time.Millisecond, "the fan-out runs on A")
	require.Equal(t, "build-a", e.memoBuild(ctx, tc, wait1.WorkflowID()), "the memo names the build that started the round")

	// B starts and becomes current; A drains and stops.
	b := e.startWorkerBin(binB, "WORKER_BUILD_ID=build-b")
	makeCurrent("build-b")
	stop(a)

	p, ok := e.progress(wait2.WorkflowID())
	require.True(t, ok)
	require.Equal(t, "build-b", p.BuildID, "B answers for a round A started")
	require.Equal(t, "build-a", p.StartedBuildID)

	// Every run completes on B.
	e.mustStarter("approve", wait1.WorkflowID(), "e1")
	res1 := decodeResult(t, <-done1)
	require.Equal(t, round.StatusOK, byID(res1)["e1"].Status, byID(res1)["e1"].Content)
	e.mustStarter("approve", agentRound(2), "call_cmd2")
	e.waitPending(agentRound(3), "call_cmd3")
	e.mustStarter("approve", agentRound(3), "call_cmd3")
	ar := <-agent
	require.Equal(t, 0, ar.code, ar.stderr)
	require.Equal(t, agentFinal+"\n", ar.stdout)
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "two"), "the agent's round 2 command ran once")
	require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "log.txt"), "three"), "the agent's round 3 command ran once")
	for step := 1; step <= 4; step++ {
		require.Equal(t, 1, m.count(step), "model call %d was made once", step)
	}
	resFan := decodeResult(t, <-doneFan)
	requireEveryCallOnce(t, fan, resFan)
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("s%d", i)
		require.Equal(t, round.StatusOK, byID(resFan)[id].Status, byID(resFan)[id].Content)
		require.Equal(t, 1, countLines(t, filepath.Join(e.workdir, "fan.log"), id), "%s ran once", id)
	}
	for _, id := range []string{wait1.WorkflowID(), fan.WorkflowID(), agentRound(3)} {
		require.True(t, e.hasMarker(ctx, tc, id, "upgrade-probe"), "B's code finished %s", id)
	}

	// Rolled back: A again, for the round B never ran a task of.
	a2 := e.startWorkerBin(workerBin, "WORKER_BUILD_ID=build-a")
	makeCurrent("build-a")
	stop(b)
	e.mustStarter("approve", wait2.WorkflowID(), "e2")
	res2 := decodeResult(t, <-done2)
	require.Equal(t, round.StatusOK, byID(res2)["e2"].Status, byID(res2)["e2"].Content)
	require.False(t, e.hasMarker(ctx, tc, wait2.WorkflowID(), "upgrade-probe"), "A finished it")
	got, err := os.ReadFile(filepath.Join(e.workdir, "two.txt"))
	require.NoError(t, err)
	require.Equal(t, "two", string(got))

	for name, w := range map[string]*worker{"A": a, "B": b, "A again": a2} {
		require.NotContains(t, strings.ToLower(w.logs.String()), "nondetermin", "worker %s", name)
	}
}

// memoBuild is the build a round's memo names (names.MemoBuildID).
func (e *env) memoBuild(ctx context.Context, tc tclient.Client, wfID string) string {
	e.t.Helper()
	d, err := tc.DescribeWorkflow(ctx, wfID, "")
	require.NoError(e.t, err)
	var b string
	if p, ok := d.RawResponse.GetWorkflowExecutionInfo().GetMemo().GetFields()[names.MemoBuildID]; ok {
		require.NoError(e.t, converter.GetDefaultDataConverter().FromPayload(p, &b))
	}
	return b
}

// hasMarker reports whether a workflow's history has the version marker of
// change.
func (e *env) hasMarker(ctx context.Context, tc tclient.Client, wfID, change string) bool {
	e.t.Helper()
	it := tc.GetWorkflowHistory(ctx, wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(e.t, err)
		a := ev.GetMarkerRecordedEventAttributes()
		if a == nil || a.GetMarkerName() != "Version" {
			continue
		}
		var id string
		if p := a.GetDetails()["change-id"]; p != nil && converter.GetDefaultDataConverter().FromPayloads(p, &id) == nil && id == change {
			return true
		}
	}
	return false
}
