package tests

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestToolDiagnosticsNameWhatFailed: a command that exits 129 is reported
// with its exit code, not as a signal, and http_request says which host it
// could not resolve and which address refused it.
func TestToolDiagnosticsNameWhatFailed(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("x", "run_command", map[string]any{"command": "exit 129"}),
		call("d", "http_request", map[string]any{"url": "http://nosuch.invalid/", "method": "GET"}),
		call("c", "http_request", map[string]any{"url": "http://127.0.0.1:9/", "method": "GET"}))
	in.AutoApprove = true
	res := e.round(in)
	r := byID(res)
	t.Logf("x: %s\nd: %s\nc: %s", r["x"].Content, r["d"].Content, r["c"].Content)
	require.Equal(t, round.StatusError, r["x"].Status)
	require.Contains(t, r["x"].Content, "exit code 129")
	require.NotContains(t, r["x"].Content, "signal")
	require.Contains(t, r["d"].Content, `cannot resolve host "nosuch.invalid"`)
	require.Contains(t, r["c"].Content, "cannot connect to 127.0.0.1:9: connection refused")
}

// closedPort is a loopback address on which nothing listens.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestStarterDiagnosticsOneLine: every command on a round that does not
// exist says so in the same line; a Redis or a Temporal that does not
// answer is named with its address, in one line, without the driver's own
// log lines.
func TestStarterDiagnosticsOneLine(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wfID := names.WorkflowID(e.session, "run-1", 7)
	missing := "starter: round " + wfID + " does not exist yet (or its history is past retention)\n"
	for _, args := range [][]string{
		{"pending", wfID}, {"progress", wfID}, {"cancel", wfID}, {"extend", wfID, "c1", "5m"},
		{"answer", wfID, "c1", "yes"}, {"approve", wfID, "c1"}, {"deny", wfID, "c1"}, {"result", wfID},
	} {
		r := e.starter(ctx, "", args...)
		require.Equal(t, 1, r.code, "%v: %s", args, r.stderr)
		require.Equal(t, missing, r.stderr, args)
	}

	redis := closedPort(t)
	down := &env{t: t, taskQueue: e.taskQueue, workdir: e.workdir, session: e.session, extra: []string{"REDIS_URL=redis://" + redis}}
	r := down.starter(ctx, "", "pending", wfID)
	require.Equal(t, missing, r.stderr, "pending needs no Redis and says nothing of it")
	r = down.starter(ctx, "", "watch", e.session)
	require.Equal(t, 1, r.code)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	require.Contains(t, r.stderr, "Redis at "+redis+" does not answer: connect: connection refused")
	in := mustJSON(t, e.input(7, "openai", nil))
	r = down.starter(ctx, in, "round", "--events", "-")
	require.Equal(t, 1, r.code)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	require.Contains(t, r.stderr, "Redis at "+redis+" does not answer")
	require.NotContains(t, r.stderr, "pool.go")

	temporal := closedPort(t)
	off := &env{t: t, taskQueue: e.taskQueue, workdir: e.workdir, session: e.session, extra: []string{"TEMPORAL_ADDRESS=" + temporal}}
	r = off.starter(ctx, "", "cancel", wfID)
	require.Equal(t, 1, r.code)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "starter: cannot connect to Temporal at "+temporal+" (namespace "), r.stderr)
}
