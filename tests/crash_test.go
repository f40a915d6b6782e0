package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// effects is an HTTP server that counts every request by path, so a test
// counts exactly how often a tool reached the outside world. Paths in hold
// wait until release is called or the caller goes away (a killed worker's
// connection closes).
type effects struct {
	srv     *httptest.Server
	mu      sync.Mutex
	counts  map[string]int
	hold    map[string]bool
	release chan struct{}
	once    sync.Once
	// prefix keeps paths unique across runs: fetch_page's cache is shared
	// by every session for 30 minutes (K4).
	prefix string
}

func newEffects(t *testing.T, hold ...string) *effects {
	t.Helper()
	f := &effects{counts: map[string]int{}, hold: map[string]bool{}, release: make(chan struct{}), prefix: fmt.Sprintf("/%d", time.Now().UnixNano())}
	for _, p := range hold {
		f.hold[f.prefix+p] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.counts[r.URL.Path]++
		held := f.hold[r.URL.Path]
		f.mu.Unlock()
		if held {
			select {
			case <-f.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body><p>served %s</p></body></html>", strings.TrimPrefix(r.URL.Path, f.prefix))
	}))
	t.Cleanup(func() { f.releaseAll(); f.srv.Close() })
	return f
}

func (f *effects) url(path string) string { return f.srv.URL + f.prefix + path }

func (f *effects) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[f.prefix+path]
}

func (f *effects) releaseAll() { f.once.Do(func() { close(f.release) }) }

// TestWorkerKilledDuringConcurrentFanOut kills the worker while a bounded
// fan-out has a side-effecting call (an http_request POST, a regular
// at-most-once activity) and a read-only local activity (fetch_page, local
// because LOCAL_ACTIVITY_MAX is raised above its timeout) in flight, with
// more calls queued behind the bound. The POSTs are counted by the server:
// each reaches it exactly once, and the interrupted one reports
// unknown_outcome. The interrupted local activity runs again on the new
// worker (accepted for read-only tools); every call still gets exactly one
// result.
func TestWorkerKilledDuringConcurrentFanOut(t *testing.T) {
	fx := newEffects(t, "/post/p2", "/page/f1")
	e := newEnv(t, "LOCAL_ACTIVITY_MAX=5m")
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "a.txt"), []byte("alpha\n"), 0o644))
	w := e.startWorker()
	post := func(id string) round.ToolCall {
		return call(id, "http_request", map[string]any{"url": fx.url("/post/" + id), "method": "POST", "body": id})
	}
	page := func(id string) round.ToolCall {
		return call(id, "fetch_page", map[string]any{"url": fx.url("/page/" + id)})
	}
	// With a bound of 2, p1 and p2 start first (regular activities); when p1
	// ends, r1, c1 and then f1 run as local activities beside the held p2.
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"calculate", "fetch_page", "http_request", "read_files"}},
		post("p1"), post("p2"),
		call("r1", "read_files", map[string]any{"paths": []string{"a.txt"}}),
		call("c1", "calculate", map[string]any{"expression": "6*7"}),
		page("f1"), post("p3"),
		call("c2", "calculate", map[string]any{"expression": "2+3"}),
		page("f2"),
	)
	in.AutoApprove, in.MaxConcurrent = true, 2
	done := e.startRound(in)

	require.Eventually(t, func() bool { return fx.count("/post/p2") == 1 && fx.count("/page/f1") == 1 }, 30*time.Second, 10*time.Millisecond,
		"p2 and f1 never ran together")
	require.Zero(t, fx.count("/post/p3"), "p3 waits behind the bound")
	w.kill(t)
	killed := time.Now()
	fx.releaseAll()
	e.startWorker()
	res := decodeResult(t, <-done)
	t.Logf("recovery: the round finished %v after the worker was killed mid fan-out", time.Since(killed).Round(time.Millisecond))

	requireEveryCallOnce(t, in, res)
	r := byID(res)
	for _, id := range []string{"p1", "p3", "r1", "c1", "c2", "f1", "f2"} {
		require.Equal(t, round.StatusOK, r[id].Status, "%s: %s", id, r[id].Content)
	}
	require.Equal(t, round.StatusUnknownOutcome, r["p2"].Status, r["p2"].Content)
	require.Contains(t, r["p2"].Content, "the outcome is unknown")
	for _, id := range []string{"p1", "p2", "p3"} {
		require.Equal(t, 1, fx.count("/post/"+id), "the POST of %s reached the server once", id)
	}
	require.Contains(t, r["c1"].Content, "42")
	require.Contains(t, r["c2"].Content, "5")
	require.Contains(t, r["r1"].Content, "alpha")
	require.Contains(t, r["f1"].Content, "served /page/f1")
	require.Contains(t, r["f2"].Content, "served /page/f2")
	require.GreaterOrEqual(t, fx.count("/page/f1"), 2, "the local activity in flight at the kill ran again on the new worker")
	t.Logf("fetch_page requests: f1 %d (in flight at the kill), f2 %d", fx.count("/page/f1"), fx.count("/page/f2"))
}

// TestWorkerKilledWhileConfirmationPending kills the worker while two calls
// wait for approval. One approval arrives while no worker runs (the signal
// waits in history); a new worker answers the pending query from replayed
// state and takes the second approval; both run once.
func TestWorkerKilledWhileConfirmationPending(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	log := filepath.Join(e.workdir, "log.txt")
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("e1", "edit_file", map[string]any{"path": "notes.txt", "new_text": "approved\n"}),
		call("s1", "run_command", map[string]any{"command": "echo ran >> log.txt"}),
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
	)
	done := e.startRound(in)
	wfID := in.WorkflowID()
	pending := func() []string {
		r := e.starter(context.Background(), "", "pending", wfID)
		var p []round.Pending
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil {
			return nil
		}
		ids := make([]string, len(p))
		for i := range p {
			ids[i] = p[i].CallID
		}
		return ids
	}
	require.Eventually(t, func() bool { return strings.Join(pending(), ",") == "e1,s1" }, 30*time.Second, 50*time.Millisecond)

	w.kill(t)
	killed := time.Now()
	// A decision made while no worker runs waits for one: the round, not
	// the server, answers it (T1).
	approval := make(chan result, 1)
	go func() { approval <- e.starter(context.Background(), "", "approve", wfID, "e1") }()
	e.startWorker()
	ap := <-approval
	require.Equal(t, 0, ap.code, "a decision made while no worker runs is taken when one does: %s", ap.stderr)
	require.Eventually(t, func() bool { return strings.Join(pending(), ",") == "s1" }, 30*time.Second, 50*time.Millisecond,
		"the new worker did not take up the round")
	t.Logf("recovery: the new worker answered the pending query %v after the kill", time.Since(killed).Round(time.Millisecond))
	approved := time.Now()
	ap = e.starter(context.Background(), "", "approve", wfID, "s1")
	require.Equal(t, 0, ap.code, ap.stderr)
	res := decodeResult(t, <-done)
	t.Logf("recovery: the round finished %v after the last approval, %v after the kill", time.Since(approved).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))

	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["e1"].Status, r["e1"].Content)
	require.Equal(t, round.StatusOK, r["s1"].Status, r["s1"].Content)
	require.Equal(t, round.StatusOK, r["c1"].Status, r["c1"].Content)
	got, err := os.ReadFile(filepath.Join(e.workdir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "approved\n", string(got))
	require.Equal(t, 1, countLines(t, log, "ran"))
}

// TestWorkerKilledInCommitPhase kills a worker inside pass 3: the test
// worker stops in the publication that carries the round's history (the
// last step before the workflow completes, after Commit computed the
// result), once before the publication's writes and once after them. A
// normal worker then finishes the round. The command ran before pass 3 and
// does not run again; the session's history holds the round once and its
// event stream every result.
func TestWorkerKilledInCommitPhase(t *testing.T) {
	for _, when := range []string{"before", "after"} {
		t.Run("kill "+when+" publishing", func(t *testing.T) {
			e := newEnv(t)
			marker := t.TempDir()
			w := e.startWorkerBin(testWorkerBin, "TESTWORKER_HOLD_COMMIT="+marker, "TESTWORKER_HOLD_WHEN="+when)
			log := filepath.Join(e.workdir, "log.txt")
			in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
				call("s1", "run_command", map[string]any{"command": "echo ran >> log.txt"}),
				call("c1", "calculate", map[string]any{"expression": "3*3"}),
			)
			in.AutoApprove = true
			done := e.startRound(in)
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(marker, "commit"))
				return err == nil
			}, 30*time.Second, 10*time.Millisecond, "the round never reached pass 3's publication")
			w.kill(t)
			killed := time.Now()
			e.startWorker()
			res := decodeResult(t, <-done)
			t.Logf("recovery: the round finished %v after the worker was killed in pass 3 (%s publishing)", time.Since(killed).Round(time.Millisecond), when)

			requireEveryCallOnce(t, in, res)
			r := byID(res)
			require.Equal(t, round.StatusOK, r["s1"].Status, r["s1"].Content)
			require.Equal(t, round.StatusOK, r["c1"].Status, r["c1"].Content)
			require.Equal(t, 1, countLines(t, log, "ran"), "the command finished before pass 3 and did not run again")

			rdb := testenv.Redis(t)
			ctx := context.Background()
			t.Cleanup(func() {
				keys, _ := rdb.Keys(ctx, "toolround:{"+e.session+"}:history-appended:*").Result()
				rdb.Del(ctx, append(keys, tools.HistoryKey(e.session), cache.EventsKey(e.session))...)
			})
			records, err := rdb.LRange(ctx, tools.HistoryKey(e.session), 0, -1).Result()
			require.NoError(t, err)
			assistants := 0
			for _, raw := range records {
				var rec tools.HistoryRecord
				require.NoError(t, json.Unmarshal([]byte(raw), &rec))
				if rec.Role == "assistant" && rec.Round == in.Round {
					assistants++
				}
			}
			require.Equal(t, 1, assistants, "the session history holds the round once: %d records", len(records))
			require.Len(t, records, len(in.Assistant.ToolCalls)+1)

			msgs, err := rdb.XRange(ctx, cache.EventsKey(e.session), "-", "+").Result()
			require.NoError(t, err)
			results := map[string]bool{}
			for _, m := range msgs {
				var ev round.Event
				raw, _ := m.Values["event"].(string)
				require.NoError(t, json.Unmarshal([]byte(raw), &ev))
				if ev.Type == round.EventToolResult {
					results[ev.CallID] = true
				}
			}
			require.Equal(t, map[string]bool{"s1": true, "c1": true}, results, "every result reached the event stream")
		})
	}
}

// TestServerRestartedMidRound runs its own Temporal dev server with a
// database file, kills it with SIGKILL while a run_command sleeps, and
// starts it again on the same port and file. The worker and the waiting
// starter reconnect, the round completes, and every command ran once. The
// interrupted command's end is reported if the restarted server still
// accepts it, else it is unknown_outcome; it never runs twice.
func TestServerRestartedMidRound(t *testing.T) {
	requireServices(t)
	cli := temporalCLI(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	addr := freeAddr(t)
	srv := startDevServer(t, cli, addr, db)

	e := newEnv(t, "TEMPORAL_ADDRESS="+addr, "HEARTBEAT_TIMEOUT=20s")
	e.startWorker()
	log := filepath.Join(e.workdir, "log.txt")
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("s1", "run_command", map[string]any{"command": "echo a >> log.txt"}),
		call("s2", "run_command", map[string]any{"command": "echo b >> log.txt; while [ ! -f go ]; do sleep 0.1; done; echo b-done >> log.txt"}),
		call("s3", "run_command", map[string]any{"command": "echo c >> log.txt"}),
		call("c1", "calculate", map[string]any{"expression": "2*21"}),
	)
	in.AutoApprove = true
	done := e.startRound(in)
	require.Eventually(t, func() bool { return countLines(t, log, "b") == 1 }, 30*time.Second, 10*time.Millisecond)

	srv.kill(t)
	killed := time.Now()
	startDevServer(t, cli, addr, db) // stopped by its own cleanup
	t.Logf("the server was back %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "go"), nil, 0o644))
	res := decodeResult(t, <-done)
	t.Logf("recovery: the round finished %v after the server was killed", time.Since(killed).Round(time.Millisecond))

	requireEveryCallOnce(t, in, res)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["s1"].Status, r["s1"].Content)
	require.Equal(t, round.StatusOK, r["s3"].Status, r["s3"].Content)
	require.Equal(t, round.StatusOK, r["c1"].Status, r["c1"].Content)
	require.Contains(t, []round.Status{round.StatusOK, round.StatusUnknownOutcome}, r["s2"].Status, r["s2"].Content)
	t.Logf("the command that ran across the restart: %s", r["s2"].Status)
	for _, line := range []string{"a", "b", "b-done", "c"} {
		require.Equal(t, 1, countLines(t, log, line), "line %q", line)
	}
}

// temporalCLI is the Temporal CLI that starts dev servers: TEMPORAL_CLI,
// else `temporal` on PATH or in GOPATH/bin.
func temporalCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testenv.Unavailable(t, "the Temporal CLI (set TEMPORAL_CLI or run `make test`, which installs it)")
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// devServer is a Temporal dev server process of the test's own.
type devServer struct {
	cmd  *exec.Cmd
	done chan struct{}
	logs *syncBuffer
}

func (s *devServer) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGKILL))
	<-s.done
}

// startDevServer starts `temporal server start-dev` on addr with the dev
// settings of scripts/lib.sh and waits until its frontend answers.
// A port it needs that another process took meanwhile (its HTTP port is
// a fresh one each try) makes it try again, up to three times.
func startDevServer(t *testing.T, cli, addr, db string) *devServer {
	t.Helper()
	for try := 0; ; try++ {
		s, err := launchDevServer(t, cli, addr, db)
		if errors.Is(err, errPortTaken) && try < 3 {
			continue
		}
		require.NoError(t, err)
		return s
	}
}

// errPortTaken: a port of the dev server was taken between freeAddr and
// its start (freeAddr only finds a port that was free).
var errPortTaken = errors.New("the port was taken")

// startOwnDevServer starts a dev server on a free address of its own,
// another when the one found was taken meanwhile, and returns it.
func startOwnDevServer(t *testing.T, cli, db string) (*devServer, string) {
	t.Helper()
	for try := 0; ; try++ {
		addr := freeAddr(t)
		s, err := launchDevServer(t, cli, addr, db)
		if errors.Is(err, errPortTaken) && try < 3 {
			continue
		}
		require.NoError(t, err)
		return s, addr
	}
}

// launchDevServer is startDevServer, with its failure returned.
func launchDevServer(t *testing.T, cli, addr, db string) (*devServer, error) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	_, httpPort, err := net.SplitHostPort(freeAddr(t))
	require.NoError(t, err)
	s := &devServer{done: make(chan struct{}), logs: &syncBuffer{}}
	s.cmd = exec.Command(cli, append([]string{"server", "start-dev", "--headless", "--ip", host, "--port", port, "--http-port", httpPort, "--db-filename", db,
		"--dynamic-config-value", "system.enableActivityEagerExecution=true",
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
		"--log-level", "error"}, testenv.SearchAttributeFlags()...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	require.NoError(t, s.cmd.Start())
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	stop := func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("dev server log:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.done:
			if logs := s.logs.String(); strings.Contains(logs, "address already in use") {
				return nil, fmt.Errorf("the dev server on %s: %w:\n%s", addr, errPortTaken, logs)
			}
			return nil, fmt.Errorf("the dev server exited:\n%s", s.logs.String())
		default:
		}
		if logs := s.logs.String(); strings.Contains(logs, "address already in use") {
			stop()
			return nil, fmt.Errorf("the dev server on %s: %w:\n%s", addr, errPortTaken, logs)
		}
		out, err := exec.Command(cli, "operator", "namespace", "describe", "--address", addr, "-n", "default").CombinedOutput()
		if err == nil && len(out) > 0 {
			return s, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the dev server on %s did not come up:\n%s", addr, s.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerKilledWhileAWebhookRetries kills the worker while the waiting
// webhook of a call is being retried (the receiver fails): a new worker
// takes the notification workflow up and delivers it, once per
// Idempotency-Key (N1), and the round goes on.
func TestWorkerKilledWhileAWebhookRetries(t *testing.T) {
	h := newHookReceiver(t, "hook-secret-crash")
	h.failFor = 1 << 30
	e := newEnv(t, "NOTIFY_URL="+h.srv.URL, "NOTIFY_SECRET=hook-secret-crash")
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allTools},
		call("s1", "run_command", map[string]any{"command": "echo notified"}))
	done := e.startRound(in)
	p := e.waitPending(in.WorkflowID(), "s1")
	posts := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.posts
	}
	require.Eventually(t, func() bool { return posts() >= 2 }, 30*time.Second, 50*time.Millisecond,
		"the webhook was not retried")
	// Kill between attempts, as the name says: once the server has recorded
	// the second failure and scheduled the third attempt. A kill while a
	// failure is still on its way to the server leaves that attempt running
	// until its start-to-close timeout, which is another scenario.
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	key := "notify/" + p[0].WaitID + "/waiting"
	require.Eventually(t, func() bool {
		d, err := tc.DescribeWorkflow(context.Background(), key, "")
		if err != nil {
			return false
		}
		for _, pa := range d.RawResponse.GetPendingActivities() {
			if pa.GetAttempt() >= 3 && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the server did not schedule the webhook's third attempt")

	w.kill(t)
	h.mu.Lock()
	h.failFor = h.posts // the receiver is back
	h.mu.Unlock()
	restarted := time.Now()
	e.startWorker()
	require.Eventually(t, func() bool { _, ok := h.payload(key); return ok }, 60*time.Second, 50*time.Millisecond,
		"the waiting webhook was not delivered after the restart: keys %v", h.keys())
	h.mu.Lock()
	at := h.okAt[key]
	h.mu.Unlock()
	require.True(t, at.After(restarted), "delivered at %v, before the restart at %v", at, restarted)
	t.Logf("recovery: the webhook landed %v after the restart, after %d failed POSTs", at.Sub(restarted).Round(time.Millisecond), h.failFor)

	e.mustStarter("approve", in.WorkflowID(), "s1")
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, byID(res)["s1"].Status)
	decided := "notify/" + p[0].WaitID + "/decided"
	require.Eventually(t, func() bool { _, ok := h.payload(decided); return ok }, 30*time.Second, 50*time.Millisecond)
	// Let a duplicate, if any, arrive before counting.
	require.Never(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.count[key] > 1 || h.count[decided] > 1
	}, 3*time.Second, 100*time.Millisecond, "a webhook was delivered twice")
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, n := range h.count {
		require.Equal(t, 1, n, "deliveries of %s", k)
	}
}
