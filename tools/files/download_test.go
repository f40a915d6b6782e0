package files

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

func downloadServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/data.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write([]byte("a,b\n1,2\n"))
	})
	mux.HandleFunc("/v2.csv", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("a,b\n3,4\n"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such object", http.StatusNotFound)
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "login first", http.StatusUnauthorized)
	})
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/big-stream", func(w http.ResponseWriter, r *http.Request) {
		for range 50 {
			_, _ = w.Write([]byte(strings.Repeat("y", 100)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n == 0 {
			http.Redirect(w, r, "/data.csv", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestDownloadFile(t *testing.T) {
	srv := downloadServer(t)
	e := newEnv(t, func(c *Config) {
		c.MaxDownloadBytes = 1000
		c.MaxRedirects = 3
		c.DownloadTimeout = 300 * time.Millisecond
	})

	res := e.ok("download_file", m{"url": srv.URL + "/data.csv", "path": "in/data.csv"})
	require.Equal(t, "a,b\n1,2\n", e.content("in/data.csv"))
	require.Equal(t, []string{"in/data.csv"}, res.Touched)
	require.Contains(t, res.Content, "download_file: saved "+srv.URL+"/data.csv to in/data.csv (8 bytes, text/csv)")
	require.Contains(t, res.Content, "version 1 records that the file did not exist")

	res = e.ok("download_file", m{"url": srv.URL + "/v2.csv", "path": "in/data.csv"})
	require.Equal(t, "a,b\n3,4\n", e.content("in/data.csv"))
	require.Contains(t, res.Content, "the previous content is version 2")
	require.Contains(t, e.ok("file_history", m{"path": "in/data.csv"}).Content, "made by download_file from "+srv.URL+"/data.csv")
	e.ok("restore_file", m{"path": "in/data.csv"})
	require.Equal(t, "a,b\n1,2\n", e.content("in/data.csv"))

	res = e.ok("download_file", m{"url": srv.URL + "/v2.csv?x=1", "path": "in/"})
	require.Equal(t, []string{"in/v2.csv"}, res.Touched)
	require.Equal(t, "a,b\n3,4\n", e.content("in/v2.csv"))
	res = e.ok("download_file", m{"url": srv.URL + "/hop/2", "path": "in"})
	require.Equal(t, []string{"in/2"}, res.Touched)
	require.Contains(t, res.Content, "after redirects to "+srv.URL+"/data.csv")

	for _, tc := range []struct {
		name, url, want string
		transient       bool
	}{
		{"not found", "/missing", "GET " + srv.URL + "/missing: HTTP 404 Not Found (check the URL): no such object", false},
		{"unauthorized", "/private", "HTTP 401 Unauthorized (the server refused access): login first", false},
		{"forbidden", "/forbidden", "HTTP 403 Forbidden", false},
		{"server error", "/broken", "HTTP 502 Bad Gateway", true},
		{"too large by its length", "/big", "is 5000 bytes, more than the 1000-byte download limit", false},
		{"too large while streaming", "/big-stream", "is more than the 1000-byte download limit; nothing was saved", false},
		{"a redirect loop", "/loop", "stopped after 3 redirects", false},
		{"too many redirects", "/hop/3", "stopped after 3 redirects", false},
		{"a redirect to another scheme", "/to-ftp", "only http and https are followed", false},
		{"timeout", "/slow", "timed out after 300ms", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.fail("download_file", m{"url": srv.URL + tc.url, "path": "out/file"})
			require.Contains(t, err.Error(), tc.want)
			require.False(t, strings.HasPrefix(err.Error(), "download_file"), "the failure text adds the name: %s", err)
			require.Equal(t, tc.transient, tools.IsTransient(err))
			e.missing("out/file")
		})
	}

	var leftovers []string
	require.NoError(t, walkAll(e.dir, func(p string) {
		if strings.Contains(p, ".toolround-tmp-") {
			leftovers = append(leftovers, p)
		}
	}))
	require.Empty(t, leftovers, "failed downloads leave no temporary files")

	e.write("keep.txt", "precious")
	err := e.fail("download_file", m{"url": srv.URL + "/missing", "path": "keep.txt"})
	require.Contains(t, err.Error(), "404")
	require.Equal(t, "precious", e.content("keep.txt"), "a failed download leaves the file alone")

	err = e.fail("download_file", m{"url": srv.URL + "/", "path": "in"})
	require.Contains(t, err.Error(), "the URL has no file name")
}

func TestDownloadNetworkErrors(t *testing.T) {
	srv := downloadServer(t)
	deny := netguard.Policy{DenyPrivate: true}
	e := newEnv(t, func(c *Config) { c.NetPolicy = &deny })
	err := e.fail("download_file", m{"url": srv.URL + "/data.csv", "path": "x.csv"})
	require.Contains(t, err.Error(), "network policy denies private addresses")
	require.False(t, tools.IsTransient(err))
	e.missing("x.csv")

	// The default policy refuses the cloud metadata address before any packet leaves.
	d := newEnv(t, nil)
	err = d.fail("download_file", m{"url": "http://169.254.169.254/latest/meta-data", "path": "md"})
	require.Contains(t, err.Error(), "denied by the network policy")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	err = d.fail("download_file", m{"url": "http://" + addr + "/x", "path": "x"})
	require.Contains(t, err.Error(), "connection refused")
	require.True(t, tools.IsTransient(err))

	var hits atomic.Int32
	custom := newEnv(t, func(c *Config) {
		c.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			hits.Add(1)
			return &http.Response{StatusCode: 200, Status: "200 OK", Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
	})
	custom.ok("download_file", m{"url": "https://example.invalid/empty", "path": "empty"})
	require.Equal(t, int32(1), hits.Load(), "Config.Transport replaces the default transport")
	require.Equal(t, "", custom.content("empty"))
}

func TestDownloadCancelled(t *testing.T) {
	srv := downloadServer(t)
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.defs["download_file"].Handler(ctx, tools.Request{Args: rawArgs(t, m{"url": srv.URL + "/slow", "path": "s"})})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "context canceled")
		require.False(t, tools.IsTransient(err))
	case <-time.After(10 * time.Second):
		t.Fatal("download_file did not stop when its context was cancelled")
	}
	e.missing("s")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
