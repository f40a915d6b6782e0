package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// clusterAddress is the frontend of scripts/cluster.sh's Temporal server.
func clusterAddress() string {
	if a := os.Getenv("CLUSTER_ADDRESS"); a != "" {
		return a
	}
	return "127.0.0.1:7333"
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func clusterRedisURL() string {
	if u := os.Getenv("CLUSTER_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/5"
}

// clusterServer starts (or finds) the cluster's server with
// `scripts/cluster.sh server`, which builds it on first use, and returns the
// file that holds its pid.
func clusterServer(t *testing.T) string {
	t.Helper()
	pg := net.JoinHostPort(envOr("PGHOST", "127.0.0.1"), envOr("PGPORT", "5432"))
	c, err := net.DialTimeout("tcp", pg, 2*time.Second)
	if err != nil {
		testenv.Unavailable(t, "PostgreSQL at %s for scripts/cluster.sh: %v", pg, err)
	}
	_ = c.Close()
	cmd := exec.Command("bash", "../scripts/cluster.sh", "server")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "scripts/cluster.sh server:\n%s", out)
	t.Logf("scripts/cluster.sh server:\n%s", strings.TrimSpace(string(out)))
	return filepath.Join("..", ".run", "cluster", "temporal.pid")
}

// TestClusterRoundsSurviveWorkerAndServerRestarts drives 30 sessions of 3
// rounds each through 3 workers that stand for 3 hosts, against the Temporal
// server of scripts/cluster.sh on PostgreSQL. Each worker has its own
// TOOLS_WORKDIR and HOST_ID, with WORKSPACE=session and
// WORKSPACE_PLACEMENT=host (W4): each session's workspace lives on the one
// host that bound it, and from its second round on a round reads back the
// file its earlier rounds' commands wrote, which must hold every line those
// commands reported writing. While the rounds run, it kills
// the workers one at a time with SIGKILL (starting each again a moment
// later) and kills and restarts the Temporal server once. Every round
// completes (a client whose connection broke submits the same round again,
// which attaches to the running workflow), every call has one result, and no
// side effect happens twice: each POST reaches the counting server and each
// command writes its line at most once, exactly once when the call reports
// ok; an at-most-once call cut off by a kill reports unknown_outcome. Each
// round's publication to the session history in Redis happens once.
func TestClusterRoundsSurviveWorkerAndServerRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server on PostgreSQL (scripts/cluster.sh); skipped with -short")
	}
	// Each round takes at least 2 s (its command sleeps), so 6 at a time
	// keep rounds in flight for at least 30 s, past the last fault (~25 s).
	const sessions, rounds, parallel = 30, 3, 6
	pidFile := clusterServer(t)
	fx := newEffects(t)
	e := newEnv(t, "TEMPORAL_ADDRESS="+clusterAddress(), "REDIS_URL="+clusterRedisURL(), "HEARTBEAT_TIMEOUT=2s",
		"WORKSPACE=session", "SANDBOX=bwrap", "WORKSPACE_PLACEMENT=host")
	hosts := []*placedHost{{dir: t.TempDir(), id: "host-1"}, {dir: t.TempDir(), id: "host-2"}, {dir: t.TempDir(), id: "host-3"}}
	for _, h := range hosts {
		e.startHost(h)
	}
	// effectsLogs are a session's effects.log on each host: one of them at
	// most may exist, the bound host's.
	effectsLogs := func(session string) []string {
		var paths []string
		for _, h := range hosts {
			paths = append(paths, filepath.Join(h.dir, "sessions", session, "effects.log"))
		}
		return paths
	}

	var inFlight, resubmits atomic.Int64
	type outcome struct {
		in  round.Input
		res round.Result
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
	)
	// runRound submits a round until its result arrives; a starter that lost
	// its connection (the server was down) submits it again.
	runRound := func(in round.Input) (round.Result, error) {
		body, err := json.Marshal(in)
		if err != nil {
			return round.Result{}, err
		}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			cmd := exec.CommandContext(ctx, starterBin, "round", "-")
			cmd.Env = e.environ()
			cmd.Stdin = bytes.NewReader(body)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			cancel()
			if err == nil {
				var res round.Result
				if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
					return res, fmt.Errorf("round %s: %w: %s", in.WorkflowID(), err, out.String())
				}
				return res, nil
			}
			if time.Now().After(deadline) {
				return round.Result{}, fmt.Errorf("round %s did not complete in 3 minutes: %v: %s", in.WorkflowID(), err, errb.String())
			}
			resubmits.Add(1)
			t.Logf("round %s: the starter failed (%v), submitting it again: %s", in.WorkflowID(), err, lastLine(errb.String()))
			time.Sleep(time.Second)
		}
	}
	session := func(s int) error {
		state := &round.RunState{Fetched: []string{"calculate", "http_request", "run_command", "read_files"}}
		for r := 1; r <= rounds; r++ {
			tag := fmt.Sprintf("s%dr%d", s, r)
			calls := []round.ToolCall{
				call("post", "http_request", map[string]any{"url": fx.url("/" + tag), "method": "POST", "body": tag}),
				call("cmd", "run_command", map[string]any{"command": "echo " + tag + " >> effects.log; sleep 2"}),
				call("calc", "calculate", map[string]any{"expression": fmt.Sprintf("%d*%d", s, r)}),
			}
			if r > 1 {
				// What the session's earlier rounds wrote, read on whichever
				// worker runs this round: the workspace's host answers.
				calls = append(calls, call("read", "read_files", map[string]any{"paths": []string{"effects.log"}}))
			}
			in := round.Input{SessionID: fmt.Sprintf("%s-%d", e.session, s), RunID: "run-1", Round: r, Provider: "claude-code",
				AutoApprove: true, State: state, Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
			inFlight.Add(1)
			res, err := runRound(in)
			inFlight.Add(-1)
			if err != nil {
				return err
			}
			mu.Lock()
			outcomes = append(outcomes, outcome{in: in, res: res})
			mu.Unlock()
			state = res.State
		}
		return nil
	}

	started := time.Now()
	errs := make(chan error, sessions)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for s := 1; s <= sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := session(s); err != nil {
				errs <- err
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	// The faults, one at a time, while rounds are in flight: worker 1,
	// worker 2, the server, worker 3.
	pause := func(d time.Duration) {
		select {
		case <-finished:
		case <-time.After(d):
		}
	}
	killWorker := func(i int) {
		pause(3 * time.Second)
		t.Logf("%5.1fs kill worker %d (%d rounds in flight)", time.Since(started).Seconds(), i+1, inFlight.Load())
		require.Positive(t, inFlight.Load(), "the rounds ended before the faults; make them longer")
		hosts[i].w.kill(t)
		pause(2 * time.Second)
		e.startHost(hosts[i])
		t.Logf("%5.1fs worker %d started again", time.Since(started).Seconds(), i+1)
	}
	killWorker(0)
	killWorker(1)
	pause(3 * time.Second)
	pid, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	require.NoError(t, err)
	t.Logf("%5.1fs kill the Temporal server, pid %d (%d rounds in flight)", time.Since(started).Seconds(), n, inFlight.Load())
	require.Positive(t, inFlight.Load(), "the rounds ended before the faults; make them longer")
	require.NoError(t, syscall.Kill(n, syscall.SIGKILL))
	require.Eventually(t, func() bool { return syscall.Kill(n, 0) != nil }, 10*time.Second, 20*time.Millisecond)
	killed := time.Now()
	clusterServer(t)
	t.Logf("%5.1fs the server answers again, %v after the kill", time.Since(started).Seconds(), time.Since(killed).Round(time.Millisecond))
	killWorker(2)

	select {
	case <-finished:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rounds did not finish in 4 minutes; %d in flight", inFlight.Load())
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, outcomes, sessions*rounds, "every round completed")

	unknown := 0
	cmdOK := map[string]bool{} // the tags whose command reported ok
	for _, o := range outcomes {
		if r := byID(o.res); r["cmd"].Status == round.StatusOK {
			cmdOK[fmt.Sprintf("s%sr%d", strings.TrimPrefix(o.in.SessionID, e.session+"-"), o.in.Round)] = true
		}
	}
	for _, o := range outcomes {
		requireEveryCallOnce(t, o.in, o.res)
		r := byID(o.res)
		s := strings.TrimPrefix(o.in.SessionID, e.session+"-")
		tag := fmt.Sprintf("s%sr%d", s, o.in.Round)
		require.Equal(t, round.StatusOK, r["calc"].Status, "%s calc: %s", tag, r["calc"].Content)
		lines, present := 0, 0
		for _, path := range effectsLogs(o.in.SessionID) {
			if _, err := os.Stat(path); err == nil {
				present++
			}
			lines += countLines(t, path, tag)
		}
		require.LessOrEqual(t, present, 1, "%s: the session's effects.log is on %d hosts", tag, present)
		// Every write an earlier round reported is in what this round read
		// (with none reported, the file may not exist: an earlier command
		// cut off by a kill may not have run).
		for prev := 1; prev < o.in.Round; prev++ {
			if p := fmt.Sprintf("s%sr%d", s, prev); cmdOK[p] {
				require.Equal(t, round.StatusOK, r["read"].Status, "%s read: %s", tag, r["read"].Content)
				require.Contains(t, r["read"].Content, p, "%s: the read does not see the write of round %d", tag, prev)
			}
		}
		posts := fx.count("/" + tag)
		require.LessOrEqual(t, posts, 1, "%s: the POST reached the server %d times", tag, posts)
		require.LessOrEqual(t, lines, 1, "%s: the command ran %d times", tag, lines)
		for id, effects := range map[string]int{"post": posts, "cmd": lines} {
			switch r[id].Status {
			case round.StatusOK:
				require.Equal(t, 1, effects, "%s %s is ok, so its effect happened once", tag, id)
			case round.StatusUnknownOutcome:
				unknown++
			default:
				t.Fatalf("%s %s: %s %s", tag, id, r[id].Status, r[id].Content)
			}
		}
	}
	// The publication at the end of each round is a side effect too: every
	// session's history in Redis holds each round once.
	opts, err := redis.ParseURL(clusterRedisURL())
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	for s := 1; s <= sessions; s++ {
		id := fmt.Sprintf("%s-%d", e.session, s)
		records, err := rdb.LRange(ctx, tools.HistoryKey(id), 0, -1).Result()
		require.NoError(t, err)
		perRound := map[int]int{}
		for _, raw := range records {
			var rec tools.HistoryRecord
			require.NoError(t, json.Unmarshal([]byte(raw), &rec))
			perRound[rec.Round]++
		}
		for r := 1; r <= rounds; r++ {
			calls := 3
			if r > 1 {
				calls = 4 // and the read
			}
			require.Equal(t, 1+calls, perRound[r], "session %s round %d: the assistant message and %d tool messages, once", id, r, calls)
		}
		keys, _ := rdb.Keys(ctx, "toolround:{"+id+"}:history-appended:*").Result()
		rdb.Del(ctx, append(keys, tools.HistoryKey(id), cache.EventsKey(id))...)
	}
	t.Logf("%d rounds of %d or %d calls in %v through 3 workers (3 hosts) with 3 worker kills and 1 server kill: %d calls unknown_outcome, %d resubmissions",
		len(outcomes), 3, 4, time.Since(started).Round(time.Millisecond), unknown, resubmits.Load())
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
