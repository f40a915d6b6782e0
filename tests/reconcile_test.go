package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

// writesOf counts the changes a tool made to a workdir file, from the
// version store's index (each write the file tools make is recorded there
// once, as the state it replaced).
func writesOf(t *testing.T, workdir, rel, tool string) int {
	t.Helper()
	sum := sha256.Sum256([]byte(rel))
	data, err := os.ReadFile(filepath.Join(workdir, ".toolround", "versions", hex.EncodeToString(sum[:16]), "index.json"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	var idx struct {
		Versions []struct {
			ReplacedBy string `json:"replaced_by"`
		} `json:"versions"`
	}
	require.NoError(t, json.Unmarshal(data, &idx))
	n := 0
	for _, v := range idx.Versions {
		if strings.HasPrefix(v.ReplacedBy, tool) {
			n++
		}
	}
	return n
}

// getCounter serves a fixed body and counts the GETs.
type getCounter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	gets int
}

func newGetCounter(t *testing.T) *getCounter {
	g := &getCounter{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		g.gets++
		g.mu.Unlock()
		fmt.Fprint(w, "downloaded body\n")
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *getCounter) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gets
}

// resumeOnNewWorker starts a worker in place of the one the test killed,
// takes the round in's result from done, which must hold every call once,
// and returns call id's.
func (e *env) resumeOnNewWorker(in round.Input, done <-chan result, id string) round.CallResult {
	e.t.Helper()
	e.startWorker()
	res := decodeResult(e.t, <-done)
	requireEveryCallOnce(e.t, in, res)
	return byID(res)[id]
}

// TestCrashInsideFileToolsIsReconciled kills the worker (SIGKILL, from a
// checkpoint inside the tool) before and after each side-effecting file
// tool writes. A normal worker takes the round over: the Reconcile step
// finds the effect (ok, reconciled) or proves it absent with the lost
// attempt dead (its operation lock free) and runs the call once more. The
// effect is counted outside the tool: the file's content (a second
// application would show) and the version store's record of writes.
func TestCrashInsideFileToolsIsReconciled(t *testing.T) {
	type check func(t *testing.T, workdir string, res round.CallResult)
	dl := newGetCounter(t)
	cases := []struct {
		tool  string
		seed  map[string]string
		calls func() []round.ToolCall
		check check
	}{
		{
			tool: "edit_file", seed: map[string]string{"a.txt": "n=1\n"},
			calls: func() []round.ToolCall {
				return []round.ToolCall{call("x", "edit_file", map[string]any{"path": "a.txt", "old_text": "n=1", "new_text": "n=1+"})}
			},
			check: func(t *testing.T, wd string, _ round.CallResult) {
				requireFile(t, wd, "a.txt", "n=1+\n") // twice would be n=1++
				require.Equal(t, 1, writesOf(t, wd, "a.txt", "edit_file"))
			},
		},
		{
			tool: "remove_file", seed: map[string]string{"a.txt": "gone soon\n"},
			calls: func() []round.ToolCall {
				return []round.ToolCall{call("x", "remove_file", map[string]any{"path": "a.txt"})}
			},
			check: func(t *testing.T, wd string, _ round.CallResult) {
				require.NoFileExists(t, filepath.Join(wd, "a.txt"))
				require.Equal(t, 1, writesOf(t, wd, "a.txt", "remove_file"))
			},
		},
		{
			// restore_file without a version undoes the last change: a second
			// run would undo the restore.
			tool: "restore_file", seed: map[string]string{"a.txt": "v1\n"},
			calls: func() []round.ToolCall {
				return []round.ToolCall{
					call("e", "edit_file", map[string]any{"path": "a.txt", "new_text": "v2\n"}),
					call("x", "restore_file", map[string]any{"path": "a.txt"}),
				}
			},
			check: func(t *testing.T, wd string, _ round.CallResult) {
				requireFile(t, wd, "a.txt", "v1\n")
				require.Equal(t, 1, writesOf(t, wd, "a.txt", "restore_file"))
			},
		},
		{
			tool: "download_file", seed: map[string]string{"d.txt": "old\n"},
			calls: func() []round.ToolCall {
				return []round.ToolCall{call("x", "download_file", map[string]any{"url": dl.srv.URL + "/d", "path": "d.txt"})}
			},
			check: func(t *testing.T, wd string, _ round.CallResult) {
				requireFile(t, wd, "d.txt", "downloaded body\n")
				require.Equal(t, 1, writesOf(t, wd, "d.txt", "download_file"))
			},
		},
	}
	for _, c := range cases {
		for _, point := range []string{"before_write", "after_write"} {
			t.Run(c.tool+" "+point, func(t *testing.T) {
				e := newEnv(t)
				for name, content := range c.seed {
					require.NoError(t, os.WriteFile(filepath.Join(e.workdir, name), []byte(content), 0o644))
				}
				gets := dl.count()
				w := e.startWorkerBin(testWorkerBin, "TOOLROUND_CRASH_AT="+c.tool+":"+point)
				in := e.input(1, "claude-code", &round.RunState{Fetched: reconcileTools}, c.calls()...)
				in.AutoApprove = true
				done := e.startRound(in)
				require.Eventually(t, func() bool { return !w.alive() }, time.Minute, 20*time.Millisecond, "the worker did not reach %s:%s", c.tool, point)
				require.Contains(t, w.logs.String(), "crashing at "+c.tool+":"+point)
				r := e.resumeOnNewWorker(in, done, "x")
				require.Equal(t, round.StatusOK, r.Status, r.Content)
				require.Equal(t, point == "after_write", r.Reconciled, r.Content)
				if r.Reconciled {
					require.Contains(t, r.Content, "took effect")
					require.Equal(t, 1, r.Attempts)
				} else {
					require.Equal(t, 2, r.Attempts, "run once more after the effect was proven absent")
				}
				require.True(t, strings.HasPrefix(r.OperationID, in.WorkflowID()+"/") && strings.HasSuffix(r.OperationID, "/x"), r.OperationID)
				c.check(t, e.workdir, r)
				t.Logf("%s × %s → %s, reconciled=%t, attempts=%d, downloads=%d", c.tool, point, r.Status, r.Reconciled, r.Attempts, dl.count()-gets)
			})
		}
	}
}

func requireFile(t *testing.T, workdir, name, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(workdir, name))
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

// TestPostLostMidFlightCarriesItsOperationID kills the worker after a
// loopback server received an http_request POST. The host is not listed in
// HTTP_IDEMPOTENT_HOSTS and the call has no reconciler: it reports
// unknown_outcome, and the key the server saw is the call's operation_id,
// so a server that honours it can refuse a second effect. With the host
// listed, the next worker sends it again under that key
// (TestPostLostMidFlightIsResentUnderItsKey).
func TestPostLostMidFlightCarriesItsOperationID(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	received, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(round.IdempotencyHeader))
		mu.Unlock()
		select {
		case received <- struct{}{}:
		default:
		}
		select { // the worker dies before an answer
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	e := newEnv(t)
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: reconcileTools},
		call("p", "http_request", map[string]any{"url": srv.URL + "/orders", "method": "POST", "body": "{}"}))
	in.AutoApprove = true
	done := e.startRound(in)
	select {
	case <-received:
	case <-time.After(time.Minute):
		t.Fatal("the POST never reached the server")
	}
	w.kill(t)
	e.startWorker()
	res := decodeResult(t, <-done)
	r := byID(res)["p"]
	require.Equal(t, round.StatusUnknownOutcome, r.Status, r.Content)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{r.OperationID}, keys, "one POST, keyed with the call's operation id")
	require.True(t, strings.HasPrefix(r.OperationID, in.WorkflowID()+"/"), r.OperationID)
}

// TestCrashInsideStoreSecretIsReconciled kills the worker (SIGKILL, from a
// checkpoint) before and after store_secret writes to Redis. The next
// worker's Reconcile step reads the store: the write recorded under the
// call's operation id is the effect found (ok, reconciled); no record
// fences the operation in the same atomic step, so the dead attempt can
// never write, and the call runs once more. The effect is counted outside
// the tool, in Redis: the secret's presence and the operation's record,
// which says which run wrote it.
func TestCrashInsideStoreSecretIsReconciled(t *testing.T) {
	rdb := testenv.Redis(t)
	for _, point := range []string{"before_write", "after_write"} {
		t.Run(point, func(t *testing.T) {
			e := newEnv(t)
			t.Cleanup(func() { _ = rdb.Del(context.Background(), secrets.Key(e.session), secrets.OpsKey(e.session)).Err() })
			w := e.startWorkerBin(testWorkerBin, "TOOLROUND_CRASH_AT=store_secret:"+point)
			in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"store_secret"}},
				call("x", "store_secret", map[string]any{"name": "API_TOKEN", "value": "crash-test-value-1234"}))
			in.AutoApprove = true
			done := e.startRound(in)
			require.Eventually(t, func() bool { return !w.alive() }, time.Minute, 20*time.Millisecond, "the worker did not reach store_secret:%s", point)
			require.Contains(t, w.logs.String(), "crashing at store_secret:"+point)
			r := e.resumeOnNewWorker(in, done, "x")
			require.Equal(t, round.StatusOK, r.Status, r.Content)
			require.Equal(t, point == "after_write", r.Reconciled, r.Content)
			ctx := context.Background()
			names, err := rdb.HKeys(ctx, secrets.Key(e.session)).Result()
			require.NoError(t, err)
			require.Equal(t, []string{"API_TOKEN"}, names)
			ops, err := rdb.HGetAll(ctx, secrets.OpsKey(e.session)).Result()
			require.NoError(t, err)
			if r.Reconciled {
				require.Equal(t, 1, r.Attempts)
				require.Contains(t, r.Content, "took effect")
				require.Equal(t, map[string]string{r.OperationID: "done:0"}, ops, "written once, by the lost attempt")
			} else {
				require.Equal(t, 2, r.Attempts, "run once more after the effect was proven absent")
				require.Equal(t, map[string]string{r.OperationID: "done:1"}, ops, "written once, by the run once more")
			}
			require.NotContains(t, r.Content, "crash-test-value-1234")
			t.Logf("store_secret × %s → %s, reconciled=%t, attempts=%d, ops=%v", point, r.Status, r.Reconciled, r.Attempts, ops)
		})
	}
}

// orderServer is a loopback server that honours Idempotency-Key: the first
// request with a key applies the effect (one order) and keeps its answer;
// a request with a key already seen gets that answer and changes nothing.
// It holds the first delivery without answering until the worker that sent
// it dies, and reports on received when it holds it.
type orderServer struct {
	srv      *httptest.Server
	received chan struct{}
	mu       sync.Mutex
	keys     []string // the key of every delivery
	effects  int
	answers  map[string]string
}

func newOrderServer(t *testing.T) *orderServer {
	o := &orderServer{received: make(chan struct{}, 1), answers: map[string]string{}}
	release := make(chan struct{})
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(round.IdempotencyHeader)
		o.mu.Lock()
		o.keys = append(o.keys, key)
		answer, seen := o.answers[key]
		first := len(o.keys) == 1
		if !seen || key == "" {
			o.effects++
			answer = fmt.Sprintf("created order %d for key %s", o.effects, key)
			if key != "" {
				o.answers[key] = answer
			}
		}
		o.mu.Unlock()
		if first {
			o.received <- struct{}{}
			select { // the effect is applied; the answer never reaches the dead worker
			case <-r.Context().Done():
				return
			case <-release:
			}
		}
		fmt.Fprint(w, answer)
	}))
	t.Cleanup(o.srv.Close)
	t.Cleanup(func() { close(release) })
	return o
}

func (o *orderServer) state() (keys []string, effects int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.keys...), o.effects
}

// TestPostLostMidFlightIsResentUnderItsKey: with the server's host in
// HTTP_IDEMPOTENT_HOSTS, an http_request POST lost mid-flight (the worker
// SIGKILLed while the server holds the request it has applied) is sent
// again by the next worker under the same Idempotency-Key, the call's
// operation id, and the server applies it once. The call ends ok with the
// first delivery's answer, after two attempts.
func TestPostLostMidFlightIsResentUnderItsKey(t *testing.T) {
	o := newOrderServer(t)
	e := newEnv(t, "HTTP_IDEMPOTENT_HOSTS="+strings.TrimPrefix(o.srv.URL, "http://"))
	w := e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: reconcileTools},
		call("p", "http_request", map[string]any{"url": o.srv.URL + "/orders", "method": "POST", "body": `{"item":1}`}))
	in.AutoApprove = true
	done := e.startRound(in)
	select {
	case <-o.received:
	case <-time.After(time.Minute):
		t.Fatal("the POST never reached the server")
	}
	w.kill(t)
	r := e.resumeOnNewWorker(in, done, "p")
	require.Equal(t, round.StatusOK, r.Status, r.Content)
	require.Equal(t, 2, r.Attempts, "the lost attempt and the one sent again")
	require.False(t, r.Reconciled)
	require.Contains(t, r.Content, "created order 1 for key "+r.OperationID)
	keys, effects := o.state()
	require.Equal(t, 1, effects, "the server applied the order once")
	require.Equal(t, []string{r.OperationID, r.OperationID}, keys, "every delivery carried the call's operation id")
	require.True(t, strings.HasPrefix(r.OperationID, in.WorkflowID()+"/") && strings.HasSuffix(r.OperationID, "/p"), r.OperationID)
	t.Logf("http_request POST × after the server applied it → %s, attempts=%d, deliveries=%d, effects=%d", r.Status, r.Attempts, len(keys), effects)
}

// reconcileTools are the tools these tests call, with their schemas fetched.
var reconcileTools = []string{"download_file", "edit_file", "http_request", "remove_file", "restore_file"}

// TestCrashInsideCommandToolsIsNotRunTwice kills the worker (SIGKILL, from a
// checkpoint) inside run_command after the command started (once it made
// its effect, TOOLROUND_CRASH_WAIT) and after it exited, and inside
// background_command after the process started. Neither tool has a
// reconciler: a command may change anything, so nothing can prove what the
// lost attempt did, and the call ends unknown_outcome after its one
// attempt. The effect is counted outside the tool: the command appends a
// line to a workdir file, which a second run would append again.
func TestCrashInsideCommandToolsIsNotRunTwice(t *testing.T) {
	const slow = "echo ran >> runs.log; : > started; sleep 20"
	cases := []struct {
		tool, point, command string
		wait                 bool // crash once the command has made its effect
	}{
		{tool: "run_command", point: "after_start", command: slow, wait: true},
		{tool: "run_command", point: "after_exit", command: "echo ran >> runs.log"},
		{tool: "background_command", point: "after_start", command: slow, wait: true},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.point, func(t *testing.T) {
			e := newEnv(t)
			extra := []string{"TOOLROUND_CRASH_AT=" + c.tool + ":" + c.point}
			if c.wait {
				extra = append(extra, "TOOLROUND_CRASH_WAIT="+filepath.Join(e.workdir, "started"))
			}
			w := e.startWorkerBin(testWorkerBin, extra...)
			in := e.input(1, "claude-code", &round.RunState{Fetched: []string{c.tool}},
				call("x", c.tool, map[string]any{"command": c.command}))
			in.AutoApprove = true
			done := e.startRound(in)
			require.Eventually(t, func() bool { return !w.alive() }, time.Minute, 20*time.Millisecond, "the worker did not reach %s:%s", c.tool, c.point)
			require.Contains(t, w.logs.String(), "crashing at "+c.tool+":"+c.point)
			require.NotContains(t, w.logs.String(), "did not appear")
			r := e.resumeOnNewWorker(in, done, "x")
			require.Equal(t, round.StatusUnknownOutcome, r.Status, r.Content)
			require.Equal(t, 1, r.Attempts, "never run a second time")
			require.False(t, r.Reconciled)
			require.True(t, strings.HasPrefix(r.OperationID, in.WorkflowID()+"/") && strings.HasSuffix(r.OperationID, "/x"), r.OperationID)
			runs := countLines(t, filepath.Join(e.workdir, "runs.log"), "ran")
			require.Equal(t, 1, runs, "the command ran once")
			t.Logf("%s × %s → %s, attempts=%d, runs=%d", c.tool, c.point, r.Status, r.Attempts, runs)
		})
	}
}

// TestCrashInsideRedisWritersIsRetried kills the worker (SIGKILL, from a
// checkpoint) before and after write_todo, write_error and write_result
// write to Redis. The three are idempotent, with no reconciler: the next
// worker simply runs the call again, and the entry, read from Redis outside
// the tool, is there once and as the call wrote it (the list replaced by
// the same list, the error record appended once by its id, the run's
// result set to the same value).
func TestCrashInsideRedisWritersIsRetried(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	cases := []struct {
		tool  string
		args  map[string]any
		key   func(session string) string
		check func(t *testing.T, key string, r round.CallResult, point string) int
	}{
		{
			tool: "write_todo",
			args: map[string]any{"items": []any{map[string]any{"text": "survive the crash", "done": false}}},
			key:  func(s string) string { return "toolround:todo:" + s },
			check: func(t *testing.T, key string, _ round.CallResult, _ string) int {
				v, err := rdb.Get(ctx, key).Result()
				require.NoError(t, err)
				var items []map[string]any
				require.NoError(t, json.Unmarshal([]byte(v), &items))
				require.Equal(t, []map[string]any{{"text": "survive the crash", "done": false}}, items)
				return len(items)
			},
		},
		{
			tool: "write_error",
			args: map[string]any{"tool": "fetch_page", "error": "timeout", "outcome": "unresolved"},
			key:  func(s string) string { return "toolround:errors:" + s },
			check: func(t *testing.T, key string, r round.CallResult, point string) int {
				recs, err := rdb.LRange(ctx, key, 0, -1).Result()
				require.NoError(t, err)
				require.Len(t, recs, 1, "the record appended once")
				require.Contains(t, recs[0], `"call_id":"x"`)
				require.Equal(t, point == "after_write", strings.Contains(r.Content, "already recorded"), r.Content)
				return len(recs)
			},
		},
		{
			tool: "write_result",
			args: map[string]any{"content": "the answer", "title": "crash"},
			key:  func(s string) string { return "toolround:result:" + s },
			check: func(t *testing.T, key string, _ round.CallResult, _ string) int {
				fields, err := rdb.HGetAll(ctx, key).Result()
				require.NoError(t, err)
				require.Len(t, fields, 1)
				var rec struct {
					RunID   string `json:"run_id"`
					Content string `json:"content"`
					Title   string `json:"title"`
				}
				require.NoError(t, json.Unmarshal([]byte(fields["run-1"]), &rec))
				require.Equal(t, "run-1", rec.RunID)
				require.Equal(t, "the answer", rec.Content)
				require.Equal(t, "crash", rec.Title)
				return len(fields)
			},
		},
	}
	for _, c := range cases {
		for _, point := range []string{"before_write", "after_write"} {
			t.Run(c.tool+" "+point, func(t *testing.T) {
				e := newEnv(t)
				key := c.key(e.session)
				t.Cleanup(func() { _ = rdb.Del(context.Background(), key).Err() })
				w := e.startWorkerBin(testWorkerBin, "TOOLROUND_CRASH_AT="+c.tool+":"+point)
				in := e.input(1, "claude-code", &round.RunState{Fetched: []string{c.tool}}, call("x", c.tool, c.args))
				in.AutoApprove = true
				done := e.startRound(in)
				require.Eventually(t, func() bool { return !w.alive() }, time.Minute, 20*time.Millisecond, "the worker did not reach %s:%s", c.tool, point)
				require.Contains(t, w.logs.String(), "crashing at "+c.tool+":"+point)
				if point == "after_write" {
					require.Equal(t, int64(1), rdb.Exists(ctx, key).Val(), "the lost attempt wrote before the crash")
				} else {
					require.Equal(t, int64(0), rdb.Exists(ctx, key).Val(), "the lost attempt crashed before writing")
				}
				r := e.resumeOnNewWorker(in, done, "x")
				require.Equal(t, round.StatusOK, r.Status, r.Content)
				require.False(t, r.Reconciled)
				require.Equal(t, 2, r.Attempts, "the lost attempt and its retry")
				n := c.check(t, key, r, point)
				t.Logf("%s × %s → %s, attempts=%d, entries=%d", c.tool, point, r.Status, r.Attempts, n)
			})
		}
	}
}
