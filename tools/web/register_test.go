package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
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

// TestConcurrentCalls runs many calls of the three web tools at once on one
// set of definitions: the calls really overlap (the server holds every
// request until several of each tool are in flight together), and each call
// gets its own answer, with its own secret expanded and redacted.
func TestConcurrentCalls(t *testing.T) {
	const n, together, secret = 20, 3, "val-K-9f3c"
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
		peak     = map[string]int{}
		badKey   []string
		once     sync.Once
	)
	release := make(chan struct{})
	open := func() { once.Do(func() { close(release) }) }
	// Should one tool run its calls one at a time, the barrier never fills:
	// the requests are let go after this long and the peaks tell.
	go func() {
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			open()
		}
	}()
	t.Cleanup(open)
	kind := func(r *http.Request) string {
		switch {
		case r.URL.Path == "/search":
			return "search_web"
		case strings.HasPrefix(r.URL.Path, "/h/"):
			return "http_request"
		default:
			return "fetch_page"
		}
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		k := kind(r)
		mu.Lock()
		inFlight[k]++
		peak[k] = max(peak[k], inFlight[k])
		if k == "http_request" && r.URL.Query().Get("k") != secret {
			badKey = append(badKey, r.URL.String())
		}
		if inFlight["search_web"] >= together && inFlight["http_request"] >= together && inFlight["fetch_page"] >= together {
			open()
		}
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		inFlight[k]--
		mu.Unlock()
		switch k {
		case "search_web":
			_, _ = fmt.Fprintf(w, `{"results":[{"title":"t","url":"https://r.example/[%s]","content":"c"}]}`, r.URL.Query().Get("q"))
		case "http_request":
			_, _ = fmt.Fprintf(w, "page [%s] k=%s", r.URL.Path, r.URL.Query().Get("k"))
		default:
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprintf(w, "<html><head><title>t</title></head><body><p>page [%s]</p></body></html>", r.URL.Path)
		}
	})
	cache := newMemCache()
	defs := toolSet(t, Config{Cache: cache, SearXNGURL: srv.URL, Decision: passThrough{},
		Secrets: fakeSecrets{session: "s1", values: map[string]string{"K": secret}}})

	type outcome struct {
		tool, want string
		content    string
		err        error
	}
	results := make([]outcome, 3*n)
	var wg sync.WaitGroup
	for i := range n {
		jobs := []struct {
			tool, want string
			args       map[string]any
		}{
			{"http_request", fmt.Sprintf("[/h/%d]", i), map[string]any{"url": fmt.Sprintf("%s/h/%d?k={{secret:K}}", srv.URL, i)}},
			{"fetch_page", fmt.Sprintf("[/p/%d]", i%5), map[string]any{"url": fmt.Sprintf("%s/p/%d", srv.URL, i%5), "query": "page"}},
			{"search_web", fmt.Sprintf("[q%d]", i), map[string]any{"query": fmt.Sprint("q", i)}},
		}
		for j, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := call(t, defs[job.tool], "s1", job.args)
				results[3*i+j] = outcome{tool: job.tool, want: job.want, content: res.Content, err: err}
			}()
		}
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, tool := range []string{"http_request", "fetch_page", "search_web"} {
		require.GreaterOrEqual(t, peak[tool], together, "%s: calls did not overlap (peak in flight %d)", tool, peak[tool])
	}
	require.Empty(t, badKey, "http_request sent another value than the secret")
	marker := regexp.MustCompile(`\[(/[hp]/\d+|q\d+)\]`)
	for _, o := range results {
		require.NoError(t, o.err, o.tool+" "+o.want)
		require.Equal(t, []string{o.want}, marker.FindAllString(o.content, -1), "%s got another call's answer: %q", o.tool, o.content)
		require.NotContains(t, o.content, secret, o.tool)
		if o.tool == "http_request" {
			require.Contains(t, o.content, "k=[secret:K]")
		}
	}
}

// passThrough is a decision filter that keeps everything, so that a result
// shows exactly what its request got.
type passThrough struct{}

func (passThrough) Filter(_ context.Context, _, content string) (string, error) { return content, nil }
