package cache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// open connects to the real Redis of the tests and closes it at the end.
func open(t *testing.T, opts cache.Options) *cache.Client {
	t.Helper()
	testenv.Redis(t)
	if opts.URL == "" {
		opts.URL = testenv.RedisURL()
	}
	c, err := cache.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// unique names a session or key part that no other test or run uses.
func unique(t *testing.T) string {
	return fmt.Sprintf("test-%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), time.Now().UnixNano())
}

// cleanup deletes keys of the shared Redis when the test ends.
// One DEL per key, as a cluster wants for keys of many slots.
func cleanup(t *testing.T, rdb redis.UniversalClient, keys ...string) {
	t.Cleanup(func() {
		for _, k := range keys {
			rdb.Del(context.Background(), k)
		}
	})
}

// logBuffer is a slog destination that tests can read while others write.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestOpenUsesDatabaseZeroByDefault(t *testing.T) {
	dead := deadAddress(t)
	tests := []struct {
		name, url string
		addr      string
		db        int
	}{
		{"default", "", "127.0.0.1:6379", 0},
		{"url without database", "redis://" + dead, dead, 0},
		{"url with database", "redis://" + dead + "/3", dead, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := cache.Open(context.Background(), cache.Options{URL: tt.url, DialTimeout: 100 * time.Millisecond})
			require.NotNil(t, c, "a worker starts even when Redis does not answer yet")
			defer c.Close()
			rdb, ok := c.Redis().(*redis.Client)
			require.True(t, ok, "one node: a plain client")
			require.Equal(t, cache.Single, c.Mode())
			require.Equal(t, tt.addr, rdb.Options().Addr)
			require.Equal(t, tt.db, rdb.Options().DB)
		})
	}
	_, err := cache.Open(context.Background(), cache.Options{URL: "http://127.0.0.1:6379"})
	require.ErrorContains(t, err, "cache: REDIS_URL")
}

func TestResultCacheOnRealRedis(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	rc := c.ResultCache()
	ctx := context.Background()
	session := unique(t)
	keys := []string{
		tools.FetchPageCacheKey("https://example.test/" + session),
		tools.SearchWebCacheKey(session, "what is k1"),
		tools.HTTPRequestCacheKey(session, `{"url":"https://example.test/api"}`),
	}
	cleanup(t, rdb, keys...)
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			_, hit := rc.Get(ctx, key)
			require.False(t, hit)
			rc.Set(ctx, key, "content of "+key, tools.ResultCacheTTL)
			got, hit := rc.Get(ctx, key)
			require.True(t, hit)
			require.Equal(t, "content of "+key, got)
			requireTTL(t, rdb, key, tools.ResultCacheTTL)
		})
	}
	require.Equal(t, 30*time.Minute, tools.ResultCacheTTL, "K1")
	require.Zero(t, c.Skipped())
}

// requireTTL checks that key expires in want, give or take the test's time.
func requireTTL(t *testing.T, rdb redis.UniversalClient, key string, want time.Duration) {
	t.Helper()
	ttl, err := rdb.TTL(context.Background(), key).Result()
	require.NoError(t, err)
	require.LessOrEqual(t, ttl, want, key)
	require.Greater(t, ttl, want-time.Minute, key)
}

// TestKeysMatchPackageDoc keeps the key list of the package comment true:
// every key the code builds matches exactly one documented pattern, and
// every documented pattern is built.
func TestKeysMatchPackageDoc(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cache.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	var patterns []string
	for _, line := range strings.Split(doc, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && strings.HasPrefix(fields[0], "toolround:") {
			patterns = append(patterns, fields[0])
		}
	}
	require.NotEmpty(t, patterns)
	toRegexp := func(p string) *regexp.Regexp {
		var b strings.Builder
		for _, part := range regexp.MustCompile(`<[^>]+>|[^<]+`).FindAllString(p, -1) {
			switch {
			case part == "<session>":
				b.WriteString("s-1")
			case strings.HasPrefix(part, "<"):
				b.WriteString("[0-9a-f]{32,64}")
			default:
				b.WriteString(regexp.QuoteMeta(part))
			}
		}
		return regexp.MustCompile("^" + b.String() + "$")
	}
	blob := sha256.Sum256([]byte("x"))
	built := []string{
		tools.FetchPageCacheKey("https://example.test/"),
		tools.SearchWebCacheKey("s-1", "query"),
		tools.HTTPRequestCacheKey("s-1", `{"url":"https://example.test/"}`),
		cache.BlobPrefix + hex.EncodeToString(blob[:]),
		cache.EventsKey("s-1"),
		tools.HistoryKey("s-1"),
	}
	used := map[string]bool{}
	for _, key := range built {
		var matched []string
		for _, p := range patterns {
			if toRegexp(p).MatchString(key) {
				matched = append(matched, p)
			}
		}
		require.Len(t, matched, 1, "key %s against the documented keys %v", key, patterns)
		used[matched[0]] = true
	}
	require.Len(t, used, len(patterns), "a documented key that nothing builds: %v", patterns)

	// K4: fetch_page keys are the same for every session, the others are not.
	require.NotContains(t, tools.FetchPageCacheKey("https://example.test/"), "s-1")
	require.NotEqual(t, tools.SearchWebCacheKey("a", "q"), tools.SearchWebCacheKey("b", "q"))
	require.NotEqual(t, tools.HTTPRequestCacheKey("a", `{"url":"u"}`), tools.HTTPRequestCacheKey("b", `{"url":"u"}`))
	require.Equal(t, tools.HTTPRequestCacheKey("a", `{"url":"u","method":"GET"}`), tools.HTTPRequestCacheKey("a", `{"method":"GET", "url":"u"}`),
		"http_request keys are of the canonical arguments")
}

// deadAddress is a local port that refuses connections.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// silentAddress is a local port that accepts connections and never answers,
// like a Redis that hangs.
func silentAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// TestRedisDownOrSlowIsSkipped is K5: against a Redis that refuses
// connections or never answers, every operation returns within its timeout,
// reads miss, writes are dropped, and the skips are counted and logged.
func TestRedisDownOrSlowIsSkipped(t *testing.T) {
	const opTimeout = 150 * time.Millisecond
	// Far below go-redis's own 3s read timeout, which is what a slow Redis
	// would cost without OpTimeout.
	const bound = 4 * opTimeout
	tests := []struct {
		name string
		addr func(*testing.T) string
	}{
		{"connection refused", deadAddress},
		{"never answers", silentAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			c, err := cache.Open(context.Background(), cache.Options{
				URL: "redis://" + tt.addr(t) + "/0", DialTimeout: opTimeout, OpTimeout: opTimeout,
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
			})
			require.Error(t, err, "Open reports that Redis does not answer")
			require.NotNil(t, c, "and still returns a client that skips")
			defer c.Close()
			ctx := context.Background()

			ops := []struct {
				name string
				run  func() error
			}{
				{"get", func() error {
					if v, hit := c.ResultCache().Get(ctx, "toolround:cache:fetch_page:x"); hit || v != "" {
						return fmt.Errorf("get hit %q", v)
					}
					return nil
				}},
				{"set", func() error {
					c.ResultCache().Set(ctx, "toolround:cache:fetch_page:x", "v", tools.ResultCacheTTL)
					return nil
				}},
				{"publish", func() error {
					if c.Events().Publish(ctx, "s", []round.Event{{ID: "e", Type: round.EventRoundStarted}}) == nil {
						return fmt.Errorf("publish reported success")
					}
					return nil
				}},
				{"history", func() error {
					if c.History().Append(ctx, "s", []tools.HistoryRecord{{Role: "tool", Content: "x"}}) == nil {
						return fmt.Errorf("append reported success")
					}
					return nil
				}},
				{"blob put", func() error {
					if _, err := c.Blobs().Put(ctx, strings.Repeat("x", 1<<10)); err == nil {
						return fmt.Errorf("blob put reported success")
					}
					return nil
				}},
			}
			for i, op := range ops {
				start := time.Now()
				require.NoError(t, op.run(), op.name)
				took := time.Since(start)
				require.Less(t, took, bound, "%s took %v", op.name, took)
				require.Equal(t, int64(i+1), c.Skipped(), "%s is counted", op.name)
			}
			require.Equal(t, 1, strings.Count(logs.String(), "redis unavailable or slow; skipped"),
				"one warning, not one per operation:\n%s", logs.String())
			require.Contains(t, logs.String(), "skipped_total=1")
		})
	}
}

func TestBlobs(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	ctx := context.Background()
	content := strings.Repeat("0123456789abcdef", 5<<20/16) + unique(t)

	ref, err := c.Blobs().Put(ctx, content)
	require.NoError(t, err)
	cleanup(t, rdb, ref)
	sum := sha256.Sum256([]byte(content))
	require.Equal(t, cache.BlobPrefix+hex.EncodeToString(sum[:]), ref)
	again, err := c.Blobs().Put(ctx, content)
	require.NoError(t, err)
	require.Equal(t, ref, again, "a retried activity stores the same blob")
	requireTTL(t, rdb, ref, cache.BlobTTL)
	require.Greater(t, cache.BlobTTL, 24*time.Hour, "a blob outlives the dev server's retention")

	got, err := c.Blobs().Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, content, got)

	_, err = c.Blobs().Get(ctx, cache.BlobPrefix+strings.Repeat("0", 64))
	require.ErrorContains(t, err, "expired or never existed")
	_, err = c.Blobs().Get(ctx, "toolround:cache:fetch_page:x")
	require.ErrorContains(t, err, "is not a blob reference")
	require.Zero(t, c.Skipped())
}

// TestBlobsOutlastTheOperationTimeout: a large blob takes longer to move
// than a cache lookup may; the round's short timeout must not cut it off.
func TestBlobsOutlastTheOperationTimeout(t *testing.T) {
	testenv.Redis(t)
	// Open's ping may itself miss so short a timeout; the client works anyway.
	c, _ := cache.Open(context.Background(), cache.Options{URL: testenv.RedisURL(), OpTimeout: time.Millisecond})
	require.NotNil(t, c)
	defer c.Close()
	ctx := context.Background()
	content := strings.Repeat("x", 16<<20) + unique(t)
	ref, err := c.Blobs().Put(ctx, content)
	require.NoError(t, err)
	cleanup(t, c.Redis(), ref)
	got, err := c.Blobs().Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, len(content), len(got))
}

func TestHistoryAppend(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	ctx := context.Background()
	session := unique(t)
	key := tools.HistoryKey(session)
	cleanup(t, rdb, key)

	require.NoError(t, c.History().Append(ctx, session, nil))
	n, err := rdb.Exists(ctx, key).Result()
	require.NoError(t, err)
	require.Zero(t, n, "nothing to append creates nothing")

	recs := []tools.HistoryRecord{
		{RunID: "r", Round: 1, Role: "assistant", ToolCalls: []byte(`[{"id":"c1"}]`)},
		{RunID: "r", Round: 1, Role: "tool", ToolCallID: "c1", Content: "ok"},
	}
	require.NoError(t, c.History().Append(ctx, session, recs))
	require.NoError(t, c.History().Append(ctx, session, recs[1:]))
	got, err := rdb.LRange(ctx, key, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.JSONEq(t, `{"run_id":"r","round":1,"role":"tool","content":"ok","tool_call_id":"c1","time":"0001-01-01T00:00:00Z"}`, got[2])
	require.Contains(t, got[0], `"tool_calls":[{"id":"c1"}]`)
}

func TestMemoryCache(t *testing.T) {
	m := cache.NewMemoryCache()
	ctx := context.Background()
	_, hit := m.Get(ctx, "k")
	require.False(t, hit)
	m.Set(ctx, "k", "v", time.Minute)
	got, hit := m.Get(ctx, "k")
	require.True(t, hit)
	require.Equal(t, "v", got)
	m.Set(ctx, "short", "v", time.Millisecond)
	require.Eventually(t, func() bool { _, hit := m.Get(ctx, "short"); return !hit }, time.Second, time.Millisecond)
	_, hit = m.Get(ctx, "k")
	require.True(t, hit, "entries expire one by one")
}

func TestFailedRedisCoolsDownInsteadOfCostingEveryOperationItsTimeout(t *testing.T) {
	const opTimeout, cooldown = 150 * time.Millisecond, 300 * time.Millisecond
	c, err := cache.Open(context.Background(), cache.Options{
		URL: "redis://" + silentAddress(t) + "/0", DialTimeout: opTimeout, OpTimeout: opTimeout, Cooldown: cooldown,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.Error(t, err)
	defer c.Close()
	ctx := context.Background()
	get := func() time.Duration {
		start := time.Now()
		_, hit := c.ResultCache().Get(ctx, "toolround:cache:fetch_page:x")
		require.False(t, hit)
		return time.Since(start)
	}
	require.GreaterOrEqual(t, get(), opTimeout/2, "the first operation waits for Redis")
	failedAt := time.Now()
	for i := 0; i < 20; i++ {
		require.Less(t, get(), 20*time.Millisecond, "during the cooldown operations are skipped at once")
	}
	require.Equal(t, int64(21), c.Skipped())
	require.Eventually(t, func() bool { return time.Since(failedAt) > cooldown }, 2*cooldown, 10*time.Millisecond)
	require.GreaterOrEqual(t, get(), opTimeout/2, "after the cooldown Redis is tried again")
}

// TestBlobsRefresh (B3): a blob that has lived part of its TTL gets the
// whole BlobTTL again; a reference that is gone, or is no blob
// reference, is reported missing and is not created.
func TestBlobsRefresh(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	ctx := context.Background()
	ref, err := c.Blobs().Put(ctx, "a replaced result "+unique(t))
	require.NoError(t, err)
	cleanup(t, rdb, ref)
	require.NoError(t, rdb.Expire(ctx, ref, time.Hour).Err())
	gone := cache.BlobPrefix + strings.Repeat("0", 64)
	missing, err := c.Blobs().Refresh(ctx, []string{ref, gone, "toolround:cache:fetch_page:x"})
	require.NoError(t, err)
	require.Equal(t, []string{"toolround:cache:fetch_page:x", gone}, missing)
	requireTTL(t, rdb, ref, cache.BlobTTL)
	n, err := rdb.Exists(ctx, gone).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a missing blob is not created")
	missing, err = c.Blobs().Refresh(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, missing)
}
