package tests

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/health"
	"github.com/toolround/toolround/round"
)

// readyz reads a /readyz answer; code 0 when nothing answers.
func readyz(addr string) (int, health.Report) {
	var rep health.Report
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, rep
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&rep)
	return resp.StatusCode, rep
}

// exitCode waits for the worker to exit and returns its exit code.
func (w *worker) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(within):
		t.Fatalf("the worker did not exit within %v", within)
	}
	return w.cmd.ProcessState.ExitCode()
}

// TestWorkerDrainsOnSIGTERMO2: the worker serves /healthz and /readyz on
// HEALTH_ADDR (ready: Temporal answers; Redis in the body). SIGTERM during
// a read-only call makes /readyz answer 503 draining while the call
// finishes on this worker (its server is reached once), then the worker
// exits 0 and the round's next worker completes it.
func TestWorkerDrainsOnSIGTERMO2(t *testing.T) {
	fx := newEffects(t, "/page/slow")
	addr := freeAddr(t)
	e := newEnv(t, "HEALTH_ADDR="+addr, "WORKER_STOP_TIMEOUT=1m")
	w := e.startWorker()
	code, rep := readyz(addr)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, health.Report{Ready: true, Temporal: "ok", Redis: "ok"}, rep)
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("g1", "http_request", map[string]any{"url": fx.url("/page/slow")}))
	done := e.startRound(in)
	require.Eventually(t, func() bool { return fx.count("/page/slow") == 1 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		code, rep := readyz(addr)
		return code == http.StatusServiceUnavailable && rep.Draining
	}, 10*time.Second, 20*time.Millisecond, "a draining worker is not ready")
	require.True(t, w.alive(), "the worker waits for its running call")
	fx.releaseAll()
	require.Equal(t, 0, w.exitCode(t, time.Minute), w.logs.String())

	e.startWorkerBin(workerBin, "HEALTH_ADDR=off")
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	require.Equal(t, round.StatusOK, byID(res)["g1"].Status, byID(res)["g1"].Content)
	require.Contains(t, byID(res)["g1"].Content, "served /page/slow")
	require.Equal(t, 1, fx.count("/page/slow"), "the call finished on the draining worker, not again")
}

// TestSIGTERMCutsALongAtMostOnceCallO2: a side-effecting call that outlasts
// WORKER_STOP_TIMEOUT is cut when the worker exits (0); the round reports
// it as after any crash (unknown_outcome), and it never runs twice.
func TestSIGTERMCutsALongAtMostOnceCallO2(t *testing.T) {
	fx := newEffects(t, "/post/p1")
	e := newEnv(t, "HEALTH_ADDR=off", "WORKER_STOP_TIMEOUT=2s")
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("p1", "http_request", map[string]any{"url": fx.url("/post/p1"), "method": "POST", "body": "x"}))
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return fx.count("/post/p1") == 1 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, w.exitCode(t, 30*time.Second), w.logs.String())
	fx.releaseAll()

	e.startWorker()
	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	require.Equal(t, round.StatusUnknownOutcome, byID(res)["p1"].Status, byID(res)["p1"].Content)
	require.Equal(t, 1, fx.count("/post/p1"), "never run twice")
}
