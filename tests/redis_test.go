package tests

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// ownRedis is a redis-server of one test, which it may stop without
// disturbing anyone else.
type ownRedis struct {
	url    string
	addr   string
	client *redis.Client
	cmd    *exec.Cmd
	logs   *syncBuffer
	done   chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// startOwnRedis starts redis-server on a free port, without persistence.
func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Unavailable(t, "redis-server binary: %v", err)
	}
	port := strconv.Itoa(freePort(t))
	r := &ownRedis{url: "redis://127.0.0.1:" + port + "/0", addr: "127.0.0.1:" + port, logs: &syncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	require.NoError(t, r.cmd.Start())
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	r.client = redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	t.Cleanup(func() {
		_ = r.client.Close()
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return r.client.Ping(ctx).Err() == nil
	}, 10*time.Second, 20*time.Millisecond, "redis-server did not start:\n%s", r.logs.String())
	return r
}

// kill stops the server with SIGKILL, as a crash would.
func (r *ownRedis) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGKILL))
	<-r.done
}

// TestRoundCompletesWhileRedisIsStopped (K5): Redis dies while a command of
// the round runs. The round completes with every result; the worker logs
// that it skipped Redis; the next round, with Redis still down, runs its
// cached tools without the cache.
func TestRoundCompletesWhileRedisIsStopped(t *testing.T) {
	r := startOwnRedis(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Page</title></head><body><p>still here</p></body></html>")
	}))
	defer srv.Close()
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e := newEnv(t, "REDIS_URL="+r.url, "METRICS_ADDR="+metrics)
	w := e.startWorker()
	require.Contains(t, w.logs.String(), r.url, "the worker uses the test's own Redis")

	fetched := &round.RunState{Fetched: append([]string{"http_request", "fetch_page"}, allTools...)}
	in := e.input(1, "claude-code", fetched,
		call("c1", "calculate", map[string]any{"expression": "2*21"}),
		call("h1", "http_request", map[string]any{"url": srv.URL + "/api"}),
		call("s1", "run_command", map[string]any{"command": "touch started; while [ ! -f go ]; do sleep 0.02; done; echo slept"}),
	)
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(e.workdir, "started"))
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
	r.kill(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))

	res := decodeResult(t, <-done)
	requireEveryCallOnce(t, in, res)
	got := byID(res)
	require.Equal(t, round.StatusOK, got["c1"].Status, got["c1"].Content)
	require.Contains(t, got["c1"].Content, "42")
	require.Equal(t, round.StatusOK, got["h1"].Status, got["h1"].Content)
	require.Equal(t, round.StatusOK, got["s1"].Status, got["s1"].Content)
	require.Contains(t, got["s1"].Content, "slept")
	require.Equal(t, round.EventRoundFinished, res.Events[len(res.Events)-1].Type, "the events are in the result even when the stream is gone")

	require.Eventually(t, func() bool {
		return strings.Contains(w.logs.String(), "redis unavailable or slow; skipped")
	}, 10*time.Second, 20*time.Millisecond, "the worker says it skipped Redis:\n%s", w.logs.String())
	require.Contains(t, w.logs.String(), "publishing events failed; the round goes on")
	require.Regexp(t, `(?m)^toolround_redis_skipped_total [1-9]`, scrape(t, metrics), "K5: the skips are visible in the worker's metrics")

	// Redis is still down: the cached tools run without the cache.
	in2 := e.input(1, "claude-code", fetched,
		call("h2", "http_request", map[string]any{"url": srv.URL + "/api"}),
		call("f2", "fetch_page", map[string]any{"url": srv.URL + "/page"}),
	)
	in2.RunID = "run-2"
	res2 := e.round(in2)
	requireEveryCallOnce(t, in2, res2)
	for _, cr := range res2.Results {
		require.Equal(t, round.StatusOK, cr.Status, "%s: %s", cr.CallID, cr.Content)
		require.NotContains(t, cr.Content, "[from cache", cr.CallID)
	}
	require.Contains(t, res2.Results[1].Content, "still here")
	require.EqualValues(t, 3, hits.Load(), "every call went to the server")
}

// scrape reads a worker's /metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
