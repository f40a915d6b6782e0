package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestRegister(t *testing.T) {
	reg := tools.NewRegistry()
	require.NoError(t, Register(reg, Config{Timeout: 10 * time.Second}))
	require.Equal(t, []string{"fetch_page", "http_request", "search_web"}, reg.Names())
	for _, name := range reg.Names() {
		d, _ := reg.Lookup(name)
		require.True(t, d.Concurrent, name)
		require.True(t, slices.Contains(tools.ConcurrentBuiltins, name), name)
		require.Equal(t, tools.SourceBuiltin, d.Source, name)
		require.NotEmpty(t, d.Description, name)
		require.Greater(t, d.Timeout, 10*time.Second, name)
		require.NotNil(t, d.Subject, name)
	}
	hr, _ := reg.Lookup("http_request")
	require.Equal(t, tools.AtMostOnce, hr.SideEffect)
	require.NotNil(t, hr.Effect)
	for _, name := range []string{"fetch_page", "search_web"} {
		d, _ := reg.Lookup(name)
		require.Equal(t, tools.ReadOnly, d.SideEffect, name)
	}

	require.ErrorContains(t, Register(reg, Config{}), "already registered")
	require.ErrorContains(t, Register(tools.NewRegistry(), Config{SearXNGURL: "nope"}), "web: searxng: base URL")
}

func TestSchemas(t *testing.T) {
	defs := toolSet(t, Config{})
	tests := []struct {
		tool, args string
		ok         bool
	}{
		{"http_request", `{"url":"https://x"}`, true},
		{"http_request", `{"url":"https://x","method":"post","headers":{"A":"b"},"body":"x"}`, true},
		{"http_request", `{}`, false},
		{"http_request", `{"url":"https://x","headers":{"A":1}}`, false},
		{"http_request", `{"url":"https://x","method":"G ET"}`, false},
		{"http_request", `{"url":"https://x","extra":true}`, false},
		{"fetch_page", `{"url":"https://x","query":"q"}`, true},
		{"fetch_page", `{"query":"q"}`, false},
		{"search_web", `{"query":"q"}`, true},
		{"search_web", `{"query":""}`, false},
		{"search_web", `{"q":"x"}`, false},
	}
	for _, tt := range tests {
		d := defs[tt.tool]
		_, err := tools.CompileSchema(d.Parameters)
		require.NoError(t, err)
		errs := tools.Validate(d.Parameters, json.RawMessage(tt.args))
		require.Equal(t, tt.ok, len(errs) == 0, "%s %s: %v", tt.tool, tt.args, errs)
	}
}

// slowCache answers nothing until its caller gives up, like a cache that is
// down behind a long network timeout.
type slowCache struct{ sets atomic.Int32 }

func (c *slowCache) Get(ctx context.Context, _ string) (string, bool) {
	<-ctx.Done()
	return "", false
}

func (c *slowCache) Set(ctx context.Context, _, _ string, _ time.Duration) {
	c.sets.Add(1)
	<-ctx.Done()
}

func TestSlowCacheIsSkipped(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "live page")
	})
	cache := &slowCache{}
	defs := toolSet(t, Config{Cache: cache, CacheTimeout: 50 * time.Millisecond})
	for _, name := range []string{"http_request", "fetch_page"} {
		start := time.Now()
		res, err := call(t, defs[name], "s1", map[string]any{"url": srv.URL})
		require.NoError(t, err, name)
		require.Contains(t, res.Content, "live page", name)
		require.Less(t, time.Since(start), 2*time.Second, name)
	}
	require.EqualValues(t, 1, cache.sets.Load(), "fetch_page tried to write; http_request did not")
}

func TestConcurrentCalls(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			_, _ = fmt.Fprintf(w, `{"results":[{"title":"t","url":"https://r.example/%s","content":"c"}]}`, r.URL.Query().Get("q"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>page %s</p></body></html>", r.URL.Path, r.URL.Path)
	})
	cache := newMemCache()
	defs := toolSet(t, Config{Cache: cache, SearXNGURL: srv.URL, Secrets: fakeSecrets{session: "s1", values: map[string]string{"K": "v"}}})
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 20 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, err := call(t, defs["http_request"], "s1", map[string]any{"url": fmt.Sprintf("%s/h/%d?k={{secret:K}}", srv.URL, i)})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := call(t, defs["fetch_page"], "s1", map[string]any{"url": fmt.Sprintf("%s/p/%d", srv.URL, i%5), "query": "page"})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := call(t, defs["search_web"], "s1", map[string]any{"query": fmt.Sprint("q", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
