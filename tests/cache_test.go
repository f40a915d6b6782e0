package tests

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// webServer answers http_request (/api), fetch_page (/page...) and
// search_web (/search, SearXNG's JSON API), counting each.
type webServer struct {
	*httptest.Server
	gets, posts, pages, searches atomic.Int32
}

func newWebServer(t *testing.T) *webServer {
	t.Helper()
	s := &webServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/search":
			s.searches.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"results":[{"title":"About %s","url":"https://example.test/1","content":"a snippet"}]}`, r.URL.Query().Get("q"))
		case strings.HasPrefix(r.URL.Path, "/page"):
			s.pages.Add(1)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>A page</title></head><body><p>Page text.</p></body></html>")
		case r.Method == http.MethodPost:
			s.posts.Add(1)
			fmt.Fprint(w, "created")
		default:
			n := s.gets.Add(1)
			fmt.Fprintf(w, "answer number %d", n)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// cacheKey is the result-cache key of an http_request call.
func cacheKey(session string, c round.ToolCall) string {
	return tools.HTTPRequestCacheKey(session, string(c.Function.Arguments))
}

// requireCacheTTL checks K1's 30 minutes on a key.
func requireCacheTTL(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	ttl, err := rdb.TTL(context.Background(), key).Result()
	require.NoError(t, err)
	require.LessOrEqual(t, ttl, 30*time.Minute, key)
	require.Greater(t, ttl, 29*time.Minute, "%s expires in %v", key, ttl)
}

// TestResultCacheAcrossRounds runs the cached tools through the worker and
// starter against real Redis (K1-K4, P3.4): an http_request GET is stored
// by pass 3 for 30 minutes and answers the same request in a later round of
// the session; a POST is never stored; fetch_page results serve every
// session, http_request and search_web results only their own.
func TestResultCacheAcrossRounds(t *testing.T) {
	srv := newWebServer(t)
	e := newEnv(t, "SEARCH_URL="+srv.URL)
	e.startWorker()
	rdb := testenv.Redis(t)
	ctx := context.Background()
	page := srv.URL + "/page-" + e.session
	state := func() *round.RunState {
		return &round.RunState{Fetched: []string{"http_request", "fetch_page", "search_web"}}
	}
	get := call("h1", "http_request", map[string]any{"url": srv.URL + "/api"})
	post := call("p1", "http_request", map[string]any{"url": srv.URL + "/api", "method": "POST", "body": "{}"})
	fetch := call("f1", "fetch_page", map[string]any{"url": page})
	search := call("w1", "search_web", map[string]any{"query": "k4 " + e.session})
	other := *e
	other.session += "-other"
	t.Cleanup(func() {
		rdb.Del(ctx, tools.FetchPageCacheKey(page),
			cacheKey(e.session, get), cacheKey(other.session, get), cacheKey(e.session, post),
			tools.SearchWebCacheKey(e.session, "k4 "+e.session), tools.SearchWebCacheKey(other.session, "k4 "+e.session))
	})
	// Each round is the first of its own run, so the run's dedupe map never
	// answers a repeat: only the cache can.
	runRound := func(env *env, runID string, calls ...round.ToolCall) map[string]round.CallResult {
		t.Helper()
		in := env.input(1, "claude-code", state(), calls...)
		in.RunID, in.AutoApprove = runID, true
		res := env.round(in)
		requireEveryCallOnce(t, in, res)
		for _, r := range res.Results {
			require.Equal(t, round.StatusOK, r.Status, "%s: %s", r.CallID, r.Content)
		}
		return byID(res)
	}

	first := runRound(e, "run-1", get, fetch, search)
	require.EqualValues(t, 1, srv.gets.Load())
	require.EqualValues(t, 1, srv.pages.Load())
	require.EqualValues(t, 1, srv.searches.Load())
	require.Contains(t, first["h1"].Content, "answer number 1")
	stored, err := rdb.Get(ctx, cacheKey(e.session, get)).Result()
	require.NoError(t, err, "P3.4: pass 3 stores the GET's result")
	require.Equal(t, first["h1"].Content, stored)
	requireCacheTTL(t, rdb, cacheKey(e.session, get))
	requireCacheTTL(t, rdb, tools.FetchPageCacheKey(page))
	requireCacheTTL(t, rdb, tools.SearchWebCacheKey(e.session, "k4 "+e.session))

	second := runRound(e, "run-2", get, fetch, search)
	require.EqualValues(t, 1, srv.gets.Load(), "the second GET is answered from the cache")
	require.EqualValues(t, 1, srv.pages.Load())
	require.EqualValues(t, 1, srv.searches.Load())
	for id, r := range second {
		require.True(t, strings.HasPrefix(r.Content, "[from cache"), "%s: %s", id, r.Content)
	}
	require.Contains(t, second["h1"].Content, "answer number 1")

	runRound(e, "run-3", post)
	runRound(e, "run-4", post)
	require.EqualValues(t, 2, srv.posts.Load(), "a POST always goes to the server")
	n, err := rdb.Exists(ctx, cacheKey(e.session, post)).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a POST is never cached")

	elsewhere := runRound(&other, "run-1", get, fetch, search)
	require.EqualValues(t, 2, srv.gets.Load(), "K4: http_request results are per session")
	require.EqualValues(t, 2, srv.searches.Load(), "K4: search_web results are per session")
	require.EqualValues(t, 1, srv.pages.Load(), "K4: fetch_page results are shared")
	require.Contains(t, elsewhere["h1"].Content, "answer number 2")
	require.True(t, strings.HasPrefix(elsewhere["f1"].Content, "[from cache"), elsewhere["f1"].Content)
	requireCacheTTL(t, rdb, cacheKey(other.session, get))
}

// monitor records every command a Redis server runs, through MONITOR on a
// connection of its own (a reply per command, one line each).
func monitor(t *testing.T, addr string, rdb *redis.Client) *syncBuffer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	out := &syncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(conn)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			_, _ = out.Write([]byte(strings.TrimPrefix(sc.Text(), "+") + "\n"))
		}
	}()
	t.Cleanup(func() { _ = conn.Close(); <-done })
	mark(t, rdb, out, "monitor-ready")
	return out
}

// mark sends a marker and waits for the monitor to see it: everything sent
// before it has been recorded.
func mark(t *testing.T, rdb *redis.Client, out *syncBuffer, marker string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_ = rdb.Echo(context.Background(), marker).Err()
		return strings.Contains(out.String(), marker)
	}, 10*time.Second, 20*time.Millisecond)
}

// TestOnlyCachedToolsTouchTheCache watches every command of a Redis that
// only this test's worker uses (K1): a round of other tools and a POST reads
// and writes no cache key; a round of the cached tools does, in database 0.
func TestOnlyCachedToolsTouchTheCache(t *testing.T) {
	r := startOwnRedis(t)
	srv := newWebServer(t)
	e := newEnv(t, "REDIS_URL="+r.url, "SEARCH_URL="+srv.URL)
	e.startWorker()
	require.NoError(t, os.WriteFile(filepath.Join(e.workdir, "a.txt"), []byte("a\n"), 0o644))
	commands := monitor(t, r.addr, r.client)

	state := &round.RunState{Fetched: append([]string{"http_request", "fetch_page", "search_web", "find_files", "write_todo"}, allTools...)}
	in := e.input(1, "claude-code", state,
		call("c1", "calculate", map[string]any{"expression": "1+1"}),
		call("r1", "read_files", map[string]any{"paths": []string{"a.txt"}}),
		call("g1", "find_files", map[string]any{"pattern": "*.txt"}),
		call("t1", "write_todo", map[string]any{"items": []any{map[string]any{"text": "x", "done": false}}}),
		call("e1", "edit_file", map[string]any{"path": "b.txt", "new_text": "b"}),
		call("s1", "run_command", map[string]any{"command": "echo hi"}),
		call("p1", "http_request", map[string]any{"url": srv.URL + "/api", "method": "POST", "body": "{}"}),
	)
	in.AutoApprove = true
	res := e.round(in)
	for _, cr := range res.Results {
		require.Equal(t, round.StatusOK, cr.Status, "%s: %s", cr.CallID, cr.Content)
	}
	mark(t, r.client, commands, "after-round-1")
	require.Contains(t, commands.String(), cache.EventsKey(e.session), "the monitor sees the worker's commands")
	require.NotContains(t, commands.String(), "toolround:cache:", "no other tool touches the result cache")

	in2 := e.input(1, "claude-code", state,
		call("h1", "http_request", map[string]any{"url": srv.URL + "/api"}),
		call("f1", "fetch_page", map[string]any{"url": srv.URL + "/page"}),
		call("w1", "search_web", map[string]any{"query": "k1"}),
	)
	in2.RunID = "run-2"
	res2 := e.round(in2)
	for _, cr := range res2.Results {
		require.Equal(t, round.StatusOK, cr.Status, "%s: %s", cr.CallID, cr.Content)
	}
	mark(t, r.client, commands, "after-round-2")
	var cacheCommands []string
	for _, line := range strings.Split(commands.String(), "\n") {
		if strings.Contains(line, "toolround:cache:") {
			cacheCommands = append(cacheCommands, line)
		}
	}
	// A monitor line reads: 1700000000.000000 [0 127.0.0.1:5000] "get" "key"
	cmd := regexp.MustCompile(`\[(\d+) [^\]]*\] "(\w+)" "toolround:cache:(\w+):`)
	seen := map[string]bool{}
	for _, line := range cacheCommands {
		m := cmd.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		require.Equal(t, "0", m[1], "K1: the cache is in database 0: %s", line)
		seen[strings.ToLower(m[2])+" "+m[3]] = true
	}
	want := map[string]bool{
		"get http_request": true, "set http_request": true,
		"get fetch_page": true, "set fetch_page": true,
		"get search_web": true, "set search_web": true,
	}
	require.Equal(t, want, seen, "commands on cache keys:\n%s", strings.Join(cacheCommands, "\n"))
	var keys []string
	require.NoError(t, r.client.Keys(context.Background(), "toolround:cache:*").ScanSlice(&keys))
	require.Len(t, keys, 3, "%v", keys)
	require.Contains(t, keys, tools.HTTPRequestCacheKey(e.session, string(in2.Assistant.ToolCalls[0].Function.Arguments)))
}

// TestLargeGETIsCachedWhole: an http_request GET whose result is above
// LARGE_RESULT_BYTES is kept in a blob; pass 3 caches the whole result, not
// the preview that history holds, so a later round answered from the cache
// gets all of it.
func TestLargeGETIsCachedWhole(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 200<<10/16) + "THE END"
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.startWorker()
	rdb := testenv.Redis(t)
	get := call("h1", "http_request", map[string]any{"url": srv.URL + "/big"})
	t.Cleanup(func() { rdb.Del(context.Background(), cacheKey(e.session, get)) })

	var results []round.CallResult
	for _, runID := range []string{"run-1", "run-2"} {
		in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"http_request"}}, get)
		in.RunID = runID
		res := e.round(in)
		require.Equal(t, round.StatusOK, res.Results[0].Status, "%.300s", res.Results[0].Content)
		results = append(results, res.Results[0])
	}
	require.EqualValues(t, 1, hits.Load(), "the second round is answered from the cache")
	require.NotEmpty(t, results[0].ContentRef, "the result is large enough to be kept in a blob")
	require.True(t, strings.HasSuffix(results[0].Content, body), "%.300s", results[0].Content)
	require.True(t, strings.HasPrefix(results[1].Content, "[from cache"), "%.300s", results[1].Content)
	require.True(t, strings.HasSuffix(results[1].Content, body), "the cached result is whole: %.300s...%s",
		results[1].Content, results[1].Content[max(0, len(results[1].Content)-300):])
}
