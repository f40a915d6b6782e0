package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
)

// peakServer answers GETs, each once `want` requests are in flight at
// once or after a second, and records the most it saw at once.
type peakServer struct {
	mu             sync.Mutex
	cond           *sync.Cond
	inFlight, peak int
	want           int
}

func (p *peakServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	p.inFlight++
	p.peak = max(p.peak, p.inFlight)
	p.cond.Broadcast()
	deadline := time.Now().Add(time.Second)
	for p.inFlight < p.want && time.Now().Before(deadline) {
		// Woken by the next request, or by the timer below.
		t := time.AfterFunc(time.Until(deadline), func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
		p.cond.Wait()
		t.Stop()
	}
	p.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
	p.mu.Lock()
	p.inFlight--
	p.mu.Unlock()
}

// Nine GETs to one host run as many at once as the worker's bound allows
// (no fixed 2 per host), and HTTP_HOST_CONCURRENCY lowers it for every
// host or for one (SPEC R; the usability issue's point 7).
func TestHTTPHostConcurrencyThroughTheWorker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra func(hostport string) []string
		want  int
	}{
		{"worker-bound", func(string) []string { return []string{"MAX_CONCURRENT_TOOLS=6"} }, 6},
		{"every-host", func(string) []string { return []string{"MAX_CONCURRENT_TOOLS=6", "HTTP_HOST_CONCURRENCY=3"} }, 3},
		{"one-host", func(hp string) []string {
			return []string{"MAX_CONCURRENT_TOOLS=6", "HTTP_HOST_CONCURRENCY=5," + hp + "=1"}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &peakServer{want: tc.want}
			p.cond = sync.NewCond(&p.mu)
			srv := httptest.NewServer(p)
			defer srv.Close()
			hostport := strings.TrimPrefix(srv.URL, "http://")
			e := newEnv(t, tc.extra(hostport)...)
			e.startWorker()
			var calls []round.ToolCall
			for i := range 9 {
				calls = append(calls, call(fmt.Sprintf("get_%d", i), "http_request", map[string]any{"method": "GET", "url": fmt.Sprintf("%s/item/%d", srv.URL, i)}))
			}
			res := e.round(e.input(1, "claude-code", &round.RunState{Fetched: []string{"http_request"}}, calls...))
			for _, r := range res.Results {
				require.Equal(t, round.StatusOK, r.Status, r.Content)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			require.Equal(t, tc.want, p.peak, "GETs to %s at once", hostport)
		})
	}
}
