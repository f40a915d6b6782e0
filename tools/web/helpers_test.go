package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// memCache is an in-memory tools.ResultCache that records what it is asked.
type memCache struct {
	mu   sync.Mutex
	data map[string]string
	gets []string
	sets []cacheSet
}

type cacheSet struct {
	key, content string
	ttl          time.Duration
}

func newMemCache() *memCache { return &memCache{data: map[string]string{}} }

func (c *memCache) Get(_ context.Context, key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets = append(c.gets, key)
	v, ok := c.data[key]
	return v, ok
}

func (c *memCache) Set(_ context.Context, key, content string, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sets = append(c.sets, cacheSet{key, content, ttl})
	c.data[key] = content
}

func (c *memCache) put(key, content string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data[key] = content
}

func (c *memCache) snapshot() (gets []string, sets []cacheSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.gets...), append([]cacheSet(nil), c.sets...)
}

// fakeSecrets is a tools.Secrets over a map, per session.
type fakeSecrets struct {
	session string
	values  map[string]string
}

var errNoSuchSecret = errors.New("no such secret")

func (s fakeSecrets) Get(_ context.Context, session, name string) (string, error) {
	if session != s.session {
		return "", errNoSuchSecret
	}
	v, ok := s.values[name]
	if !ok {
		return "", errNoSuchSecret
	}
	return v, nil
}

// recordingFilter marks what it was given, so that tests see every return
// pass through the decision model.
type recordingFilter struct {
	mu    sync.Mutex
	calls []filterCall
	err   error
}

type filterCall struct{ query, content string }

func (f *recordingFilter) Filter(_ context.Context, query, content string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, filterCall{query, content})
	if f.err != nil {
		return "", f.err
	}
	return "<<filtered for " + query + ">>", nil
}

func (f *recordingFilter) snapshot() []filterCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]filterCall(nil), f.calls...)
}

// toolSet builds the web tools with cfg and returns them by name.
func toolSet(t *testing.T, cfg Config) map[string]tools.Definition {
	t.Helper()
	defs, err := Definitions(cfg)
	require.NoError(t, err)
	out := map[string]tools.Definition{}
	for _, d := range defs {
		out[d.Name] = d
	}
	return out
}

func call(t *testing.T, def tools.Definition, session string, args any) (tools.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return def.Handler(context.Background(), tools.Request{CallID: "c1", SessionID: session, RunID: "r1", Round: 1, Args: raw})
}

// server is an httptest server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// blockUntilDone makes a handler that answers nothing until the client
// gives up or the test ends.
func blockUntilDone(t *testing.T) http.HandlerFunc {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}
