package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// haSet is a Redis Cluster or Sentinel set of one test, started by
// scripts/redis-ha.sh on ports of its own, so that killing its master
// disturbs no other test.
type haSet struct {
	kind string
	url  string
	env  []string
}

// startHASet starts the test's own cluster (three masters, three
// replicas) or Sentinel set (a master, its replica, three sentinels).
func startHASet(t *testing.T, cluster bool) *haSet {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Unavailable(t, "redis-server binary: %v", err)
	}
	h := &haSet{kind: "sentinel"}
	if cluster {
		h.kind = "cluster"
	}
	h.env = append(os.Environ(), "REDIS_HA_DIR="+t.TempDir(), "REDIS_CLUSTER_PORT=7301", "REDIS_SENTINEL_PORT=7401")
	t.Cleanup(func() { _ = h.script("stop") })
	if out, err := h.run(h.kind); err != nil {
		testenv.Unavailable(t, "scripts/redis-ha.sh %s: %v\n%s", h.kind, err, out)
	}
	out, err := h.run("urls")
	require.NoError(t, err, out)
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && (k == "REDIS_CLUSTER_URL") == cluster && strings.HasPrefix(k, "REDIS_") {
			h.url = v
		}
	}
	require.NotEmpty(t, h.url, out)
	return h
}

func (h *haSet) run(arg string) (string, error) {
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "redis-ha.sh"), arg)
	cmd.Env = h.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (h *haSet) script(arg string) error { _, err := h.run(arg); return err }

// killMasterOf kills, with SIGKILL, the master that holds key now.
func killMasterOf(t *testing.T, c *cache.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	var node *redis.Client
	switch rdb := c.Redis().(type) {
	case *redis.ClusterClient:
		var err error
		node, err = rdb.MasterForKey(ctx, key)
		require.NoError(t, err)
	case *redis.Client:
		node = rdb
	}
	info, err := node.Info(ctx, "server").Result()
	require.NoError(t, err)
	var pid int
	var port string
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			pid, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(line, "tcp_port:"); ok {
			port = v
		}
	}
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	return port
}

// TestMasterKilledMidRoundLosesNoResultO1: a worker on a Redis Cluster and
// on a Sentinel set runs a round whose large result is kept as a blob
// (confirmed by WAIT 1 on a replica); the master that holds it is killed
// with SIGKILL while another call of the round still runs. A replica takes
// over, the round completes, and `starter round` prints every result whole:
// the blob written before the kill is read from the new master, and the
// large result made after it is a blob there or, when its write was not
// confirmed, in history. A round after the failover stores and reads its
// blob on the new master.
func TestMasterKilledMidRoundLosesNoResultO1(t *testing.T) {
	for _, cluster := range []bool{true, false} {
		name := map[bool]string{true: "cluster", false: "sentinel"}[cluster]
		t.Run(name, func(t *testing.T) {
			h := startHASet(t, cluster)
			e := newEnv(t, "REDIS_URL="+h.url, "LARGE_RESULT_BYTES=65536", "HEARTBEAT_TIMEOUT=20s")
			e.startWorkerBin(testWorkerBin)
			c, err := cache.Open(context.Background(), cache.Options{URL: h.url, OpTimeout: time.Second})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })

			const size = 100 << 10
			before := emit(size, "before-"+name+"-")
			sum := sha256.Sum256([]byte(before))
			ref := cache.BlobPrefix + hex.EncodeToString(sum[:])
			in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"emit_bytes", "run_command"}},
				call("big", "emit_bytes", map[string]any{"bytes": size, "fill": "before-" + name + "-"}),
				call("wait", "run_command", map[string]any{"command": "echo started > started; while [ ! -f go ]; do sleep 0.05; done; echo done"}),
			)
			in.AutoApprove = true
			done := e.startRound(in)
			// The large result is stored before the master dies.
			require.Eventually(t, func() bool {
				n, err := c.Redis().Exists(context.Background(), ref).Result()
				return err == nil && n == 1 && fileExists(filepath.Join(e.workdir, "started"))
			}, 60*time.Second, 20*time.Millisecond)

			port := killMasterOf(t, c, ref)
			killed := time.Now()
			t.Logf("killed the %s master on port %s", name, port)
			// A replica takes over: the blob answers again, from the new master.
			var lastErr error
			if !assert.Eventually(t, func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				v, err := c.Blobs().Get(ctx, ref)
				lastErr = err
				return err == nil && v == before
			}, 60*time.Second, 100*time.Millisecond, "the blob confirmed before the kill is on the new master") {
				out, _ := h.run("status")
				t.Fatalf("last error: %v\n%s", lastErr, out)
			}
			t.Logf("failover: the blob answered again %v after the kill", time.Since(killed).Round(time.Millisecond))
			require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))

			res := decodeResult(t, <-done)
			requireEveryCallOnce(t, in, res)
			r := byID(res)
			require.Equal(t, round.StatusOK, r["big"].Status, "%.200s", r["big"].Content)
			require.Equal(t, before, r["big"].Content, "the large result, whole")
			require.Equal(t, round.StatusOK, r["wait"].Status, r["wait"].Content)

			// A round after the failover: its large result is kept and read.
			after := emit(size, "after-"+name+"-")
			in2 := e.input(2, "claude-code", &round.RunState{Fetched: []string{"emit_bytes"}},
				call("big2", "emit_bytes", map[string]any{"bytes": size, "fill": "after-" + name + "-"}))
			res2 := e.round(in2)
			requireEveryCallOnce(t, in2, res2)
			require.Equal(t, after, byID(res2)["big2"].Content)

			// The killed node comes back as a replica, for the next subtest's
			// own set and for cleanup.
			out, err := h.run(h.kind)
			require.NoError(t, err, out)
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
