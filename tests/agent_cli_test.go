package tests

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// `starter agent` shows only waits that are live: a run's rounds each wait
// once for approval and the first command shows both as they happen; the
// same command again, after the run, attaches to it and shows none of the
// requests it reads back from the session's stream.
func TestStarterAgentShowsOnlyLiveWaits(t *testing.T) {
	m := newScriptedModel(t)
	e := newAgentEnv(t, m.modelServer)
	done := e.startAgent("--session", e.session, "--run", "run-1", "append two lines to log.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for n := 2; n <= 3; n++ {
		wid := names.WorkflowID(e.session, "run-1", n)
		cid := "call_cmd" + string(rune('0'+n))
		require.Eventually(t, func() bool {
			return strings.Contains(e.starter(ctx, "", "pending", wid).stdout, cid)
		}, time.Minute, 50*time.Millisecond, "round %d waits", n)
		r := e.starter(ctx, "", "approve", wid, cid)
		require.Equal(t, 0, r.code, r.stderr)
	}
	r := <-done
	requireAgentDone(t, e, m, r)
	require.Equal(t, 2, strings.Count(r.stderr, "waits for approval"), "each round's wait, as it happened: %s", r.stderr)

	again := e.starter(ctx, "", "agent", "--session", e.session, "--run", "run-1", "append two lines to log.txt")
	require.Equal(t, 0, again.code, again.stderr)
	require.Equal(t, agentFinal+"\n", again.stdout)
	require.NotContains(t, again.stderr, "waits for approval", "no wait of a finished round is shown")
}

// A run that failed says how to start afresh, the first time and when the
// same command attaches to it again.
func TestStarterAgentFailedRunSaysHowToStartAfresh(t *testing.T) {
	e := newAgentEnv(t, newRefusingModel(t))
	for range 2 {
		r := e.runAgent("--run", "run-1", "go")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "invalid api key")
		require.Contains(t, r.stderr, "pass another --run (e.g. --run run-1-2) to start afresh", r.stderr)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)
	}
}

// Ctrl-C stops the command, not the run: it says so, and how to attach
// again, and exits 130; the run still runs.
func TestStarterAgentInterruptedSaysTheRunGoesOn(t *testing.T) {
	m := newScriptedModel(t)
	m.holdStep(1) // the first model call waits until released
	e := newAgentEnv(t, m.modelServer)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBin, "agent", "--session", e.session, "--run", "run-1", "--auto-approve", "go")
	cmd.Env = e.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return m.count(1) > 0 }, time.Minute, 20*time.Millisecond, "the run asks the model")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, errb.String())
	require.Equal(t, 130, ee.ExitCode(), errb.String())
	wid := names.AgentWorkflowID(e.session, "run-1")
	require.Contains(t, errb.String(), "interrupted: agent run "+wid+" goes on in the workers")
	require.Contains(t, errb.String(), "starter agent-status "+wid)
	require.NotContains(t, errb.String(), "failed")
	require.Equal(t, round.AgentRunning, e.agentStatus(wid).Status, "the run goes on")
	m.releaseHold()
	r := e.starter(ctx, "", "agent", "--session", e.session, "--run", "run-1", "--auto-approve", "go")
	requireAgentDone(t, e, m, r)
}
