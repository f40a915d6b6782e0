package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/decision"
)

// searxng is a local server speaking SearXNG's JSON API.
func searxng(t *testing.T, results int) (*server, *[]string) {
	var mu sync.Mutex
	var queries []string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/searx/search" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "html is not served here", http.StatusBadRequest)
			return
		}
		q := r.URL.Query().Get("q")
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		switch q {
		case "forbidden":
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		case "overloaded":
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		case "garbage":
			_, _ = io.WriteString(w, "<html>not json</html>")
			return
		case "nothing":
			_, _ = io.WriteString(w, `{"query":"nothing","number_of_results":0,"results":[],"suggestions":["something"]}`)
			return
		}
		var rs []map[string]any
		for i := range results {
			rs = append(rs, map[string]any{
				"url": fmt.Sprintf("https://site%d.example/page", i), "title": fmt.Sprintf("Result %d about %s", i, q),
				"content": fmt.Sprintf("Snippet %d for %s.", i, q), "engine": "duckduckgo", "score": 1.0,
			})
		}
		rs = append(rs, map[string]any{"url": "", "title": "no url, skipped"})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"query": q, "number_of_results": results, "results": rs,
			"answers":     []any{"plain answer", map[string]any{"answer": "object answer", "url": "https://a.example"}},
			"suggestions": []string{q + " tutorial"}, "infoboxes": []any{}, "unresponsive_engines": []any{},
		})
	})
	return srv, &queries
}

func TestSearchWebSearXNG(t *testing.T) {
	srv, queries := searxng(t, 3)
	cache := newMemCache()
	filter := &recordingFilter{}
	sw := toolSet(t, Config{SearXNGURL: srv.URL + "/searx/", Cache: cache, Decision: filter})["search_web"]

	res, err := call(t, sw, "s1", map[string]any{"query": "go generics"})
	require.NoError(t, err)
	require.Equal(t, "Search results for \"go generics\" (searxng, 3 results)\n\n<<filtered for go generics>>", res.Content)
	require.Equal(t, []string{"go generics"}, *queries)

	_, sets := cache.snapshot()
	require.Len(t, sets, 1)
	require.Equal(t, tools.SearchWebCacheKey("s1", "go generics"), sets[0].key)
	require.Equal(t, tools.ResultCacheTTL, sets[0].ttl)
	require.Equal(t, `Search results for "go generics" (searxng, 3 results)

Answer: plain answer

Answer: object answer

1. Result 0 about go generics
   https://site0.example/page
   Snippet 0 for go generics.

2. Result 1 about go generics
   https://site1.example/page
   Snippet 1 for go generics.

3. Result 2 about go generics
   https://site2.example/page
   Snippet 2 for go generics.

Related searches: go generics tutorial`, sets[0].content)
	calls := filter.snapshot()
	require.Len(t, calls, 1)
	_, body, _ := strings.Cut(sets[0].content, "\n\n")
	require.Equal(t, filterCall{"go generics", body}, calls[0])

	// Same session: from the cache, filtered again.
	res, err = call(t, sw, "s1", map[string]any{"query": "go generics"})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Content, "[from cache: searched in this session within the last 30 minutes]\nSearch results for"))
	require.True(t, strings.HasSuffix(res.Content, "<<filtered for go generics>>"))
	require.Len(t, *queries, 1)
	require.Len(t, filter.snapshot(), 2)

	// Another session searches again (K4).
	_, err = call(t, sw, "s2", map[string]any{"query": "go generics"})
	require.NoError(t, err)
	require.Len(t, *queries, 2)
	_, sets = cache.snapshot()
	require.Len(t, sets, 2)
	require.Equal(t, tools.SearchWebCacheKey("s2", "go generics"), sets[1].key)
}

func TestSearchWebLimitsAndRealFilter(t *testing.T) {
	srv, _ := searxng(t, 40)
	sw := toolSet(t, Config{SearXNGURL: srv.URL + "/searx", MaxSearchResults: 25, Decision: decision.Extractive{MaxChars: 1 << 20}})["search_web"]
	res, err := call(t, sw, "s1", map[string]any{"query": "rust"})
	require.NoError(t, err)
	require.Contains(t, res.Content, "(searxng, 25 results)")
	require.Contains(t, res.Content, "25. Result 24 about rust")
	require.NotContains(t, res.Content, "Result 25 ")
	require.NotContains(t, res.Content, "no url, skipped")
}

func TestSearchWebFailures(t *testing.T) {
	srv, _ := searxng(t, 1)
	cache := newMemCache()
	sw := toolSet(t, Config{SearXNGURL: srv.URL + "/searx", Cache: cache})["search_web"]
	tests := []struct {
		query         string
		want          string
		wantErr       string
		wantTransient bool
	}{
		{query: "forbidden", wantErr: "searxng at " + srv.Listener.Addr().String() + " refused format=json (403 Forbidden): add json to search.formats in its settings.yml"},
		{query: "overloaded", wantErr: "searxng: 503 Service Unavailable", wantTransient: true},
		{query: "garbage", wantErr: "searxng: the reply is not its JSON format"},
		{query: "nothing", want: `No results for "nothing" (searxng). Related searches: something`},
		{query: "   ", wantErr: "the query is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := call(t, sw, "s1", map[string]any{"query": tt.query})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, tt.wantTransient, tools.IsTransient(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, res.Content)
		})
	}
	_, sets := cache.snapshot()
	require.Empty(t, sets, "failures and empty answers are not cached")

	// An unreachable backend is transient.
	srv.Close()
	_, err := call(t, sw, "s1", map[string]any{"query": "anything"})
	require.ErrorContains(t, err, "searxng at "+srv.Listener.Addr().String())
	require.True(t, tools.IsTransient(err))
}

func TestSearchWebTimeout(t *testing.T) {
	srv := newServer(t, blockUntilDone(t))
	sw := toolSet(t, Config{SearXNGURL: srv.URL, Timeout: 150 * time.Millisecond})["search_web"]
	_, err := call(t, sw, "s1", map[string]any{"query": "slow"})
	require.ErrorContains(t, err, "searxng at ")
	require.True(t, tools.IsTransient(err))
}

func TestSearchWebNotConfigured(t *testing.T) {
	sw := toolSet(t, Config{})["search_web"]
	_, err := call(t, sw, "s1", map[string]any{"query": "anything"})
	require.EqualError(t, err, "no search backend is configured on this worker: "+
		"set SEARCH_URL (web.Config.SearXNGURL) to a SearXNG instance with the json format enabled, or give web.Config a Searcher; "+
		"until then, use fetch_page on a URL you know")
	require.False(t, tools.IsTransient(err))
}

// stubSearcher shows that other backends plug in through Searcher.
type stubSearcher struct{}

func (stubSearcher) Name() string { return "stub" }
func (stubSearcher) Search(_ context.Context, q string, limit int) (SearchResponse, error) {
	return SearchResponse{Results: []SearchResult{{Title: "T", URL: "https://t.example", Snippet: q, Published: "2026-01-02"}}}, nil
}

func TestSearchWebCustomSearcher(t *testing.T) {
	sw := toolSet(t, Config{Searcher: stubSearcher{}, SearXNGURL: "http://ignored.invalid"})["search_web"]
	res, err := call(t, sw, "s1", map[string]any{"query": "hello"})
	require.NoError(t, err)
	require.Equal(t, "Search results for \"hello\" (stub, 1 results)\n\n1. T\n   https://t.example\n   published 2026-01-02\n   hello", res.Content)
}

func TestNewSearXNG(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:8888", "ftp://x", "http://"} {
		_, err := NewSearXNG(bad, nil)
		require.ErrorContains(t, err, "searxng: base URL")
		_, err = Definitions(Config{SearXNGURL: bad + " "})
		if bad != "" {
			require.ErrorContains(t, err, "web: searxng: base URL")
		}
	}
	s, err := NewSearXNG("http://127.0.0.1:8888/sub/?x=1", nil)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8888/sub/search", s.base.String())
}
