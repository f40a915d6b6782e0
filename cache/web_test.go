package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/web"
)

// markingFilter stands in for the decision model: it records what it is
// given and returns a marker, so a test sees every return pass through it.
type markingFilter struct {
	mu    sync.Mutex
	given []string
}

func (f *markingFilter) Filter(_ context.Context, query, content string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.given = append(f.given, content)
	return "<<filtered for " + query + ">>", nil
}

func (f *markingFilter) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.given...)
}

type countingSearcher struct{ n atomic.Int32 }

func (s *countingSearcher) Name() string { return "fake" }

func (s *countingSearcher) Search(_ context.Context, query string, _ int) (web.SearchResponse, error) {
	s.n.Add(1)
	return web.SearchResponse{Results: []web.SearchResult{
		{Title: "Unfiltered result about " + query, URL: "https://example.test/1", Snippet: "the whole snippet"},
	}}, nil
}

func webTools(t *testing.T, cfg web.Config) map[string]tools.Definition {
	t.Helper()
	defs, err := web.Definitions(cfg)
	require.NoError(t, err)
	out := map[string]tools.Definition{}
	for _, d := range defs {
		out[d.Name] = d
	}
	return out
}

func run(t *testing.T, def tools.Definition, session string, args any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := def.Handler(context.Background(), tools.Request{Tool: def.Name, CallID: "c1", SessionID: session, RunID: "r1", Round: 1, Args: raw})
	require.NoError(t, err)
	return res
}

// TestWebToolsOnRealRedis checks K1-K4 with the real result cache: the
// fetch_page and search_web handlers store their unfiltered results for 30
// minutes, every return (fresh or cached) goes through the decision model,
// fetch_page entries serve every session and search_web entries only their
// own; http_request only reads the cache, for GETs, and never writes it.
func TestWebToolsOnRealRedis(t *testing.T) {
	c := open(t, cache.Options{})
	rdb := c.Redis()
	ctx := context.Background()
	a, b := unique(t)+"-a", unique(t)+"-b"

	var pageHits, getHits, postHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/page"):
			pageHits.Add(1)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>Tomatoes</title></head><body><p>The whole unfiltered page text.</p></body></html>")
		case r.Method == http.MethodPost:
			postHits.Add(1)
			fmt.Fprint(w, "posted")
		default:
			getHits.Add(1)
			fmt.Fprint(w, "fresh answer")
		}
	}))
	defer srv.Close()

	filter := &markingFilter{}
	searcher := &countingSearcher{}
	defs := webTools(t, web.Config{Cache: c.ResultCache(), Decision: filter, Searcher: searcher})

	t.Run("fetch_page is shared across sessions", func(t *testing.T) {
		url := srv.URL + "/page-" + a
		key := tools.FetchPageCacheKey(url)
		cleanup(t, rdb, key)

		fresh := run(t, defs["fetch_page"], a, map[string]any{"url": url, "query": "sun"})
		require.EqualValues(t, 1, pageHits.Load())
		require.Contains(t, fresh.Content, "<<filtered for sun>>")
		require.NotContains(t, fresh.Content, "The whole unfiltered page text.")
		stored, err := rdb.Get(ctx, key).Result()
		require.NoError(t, err, "K3: the handler writes its own result")
		require.Contains(t, stored, "The whole unfiltered page text.", "K3: the cache holds the unfiltered page")
		requireTTL(t, rdb, key, tools.ResultCacheTTL)

		cached := run(t, defs["fetch_page"], b, map[string]any{"url": url, "query": "water"})
		require.EqualValues(t, 1, pageHits.Load(), "K4: another session is served from the cache")
		require.True(t, strings.HasPrefix(cached.Content, "[from cache"), cached.Content)
		require.Contains(t, cached.Content, "<<filtered for water>>", "K3: a cached page is filtered again, for the new query")
		given := filter.calls()
		require.Len(t, given, 2)
		require.Equal(t, given[0], given[1], "the model sees the same unfiltered text, cached or fresh")
	})

	t.Run("search_web is per session", func(t *testing.T) {
		const query = "k4 search"
		cleanup(t, rdb, tools.SearchWebCacheKey(a, query), tools.SearchWebCacheKey(b, query))
		before := len(filter.calls())

		run(t, defs["search_web"], a, map[string]any{"query": query})
		again := run(t, defs["search_web"], a, map[string]any{"query": query})
		require.EqualValues(t, 1, searcher.n.Load(), "the same session is served from the cache")
		require.True(t, strings.HasPrefix(again.Content, "[from cache"), again.Content)
		require.Contains(t, again.Content, "<<filtered for k4 search>>")
		stored, err := rdb.Get(ctx, tools.SearchWebCacheKey(a, query)).Result()
		require.NoError(t, err)
		require.Contains(t, stored, "Unfiltered result about k4 search")
		requireTTL(t, rdb, tools.SearchWebCacheKey(a, query), tools.ResultCacheTTL)

		other := run(t, defs["search_web"], b, map[string]any{"query": query})
		require.EqualValues(t, 2, searcher.n.Load(), "K4: another session searches again")
		require.False(t, strings.HasPrefix(other.Content, "[from cache"), other.Content)
		require.Len(t, filter.calls(), before+3, "K3: every return is filtered")
	})

	t.Run("http_request reads GETs only and writes nothing", func(t *testing.T) {
		get := map[string]any{"url": srv.URL + "/api"}
		post := map[string]any{"url": srv.URL + "/api", "method": "POST", "body": "x"}
		keyOf := func(session string, args any) string {
			raw, err := json.Marshal(args)
			require.NoError(t, err)
			return tools.HTTPRequestCacheKey(session, string(raw))
		}
		cleanup(t, rdb, keyOf(a, get), keyOf(b, get), keyOf(a, post))

		res := run(t, defs["http_request"], a, get)
		require.EqualValues(t, 1, getHits.Load())
		require.False(t, res.FromCache)
		require.Contains(t, res.Content, "fresh answer")
		n, err := rdb.Exists(ctx, keyOf(a, get)).Result()
		require.NoError(t, err)
		require.Zero(t, n, "K2: pass 3 writes http_request results, not the handler")

		// What pass 3 stores is served to the same session only.
		c.ResultCache().Set(ctx, keyOf(a, get), "stored answer", tools.ResultCacheTTL)
		res = run(t, defs["http_request"], a, get)
		require.True(t, res.FromCache)
		require.Contains(t, res.Content, "stored answer")
		require.EqualValues(t, 1, getHits.Load())
		res = run(t, defs["http_request"], b, get)
		require.False(t, res.FromCache, "K4: per session")
		require.EqualValues(t, 2, getHits.Load())

		// A POST never reads the cache, even with an entry under its arguments.
		c.ResultCache().Set(ctx, keyOf(a, post), "stored post", tools.ResultCacheTTL)
		res = run(t, defs["http_request"], a, post)
		require.False(t, res.FromCache)
		require.Contains(t, res.Content, "posted")
		require.EqualValues(t, 1, postHits.Load())
	})
	require.Zero(t, c.Skipped())
}
