package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/decision"
)

const articleHTML = `<!doctype html>
<html><head>
<title>  Gardening   Guide </title>
<style>body { color: red; } .secret-style { display: none }</style>
<script>var tracking = "do-not-show"; function x() { return 1 < 2; }</script>
</head>
<body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="javascript:void(0)">JS</a></nav>
<noscript><img src="/pixel.gif" alt="noscript-pixel"></noscript>
<article>
<h1>Growing tomatoes</h1>
<p>Tomatoes need at least six hours of direct sunlight every day to produce a good harvest. Plant them after the last frost, when the soil has warmed, and give each plant enough room for air to move between the leaves.</p>
<h2>Watering</h2>
<p>Water deeply twice a week rather than a little every day, so that the roots grow down into the soil. Mulch keeps the moisture in during hot weeks and stops the soil from splashing onto the lower leaves.</p>
<ul><li>Use stakes or cages</li><li>Pinch off suckers</li></ul>
<p>Read the <a href="pests.html#aphids">guide to pests</a> and the <a href="https://seeds.example/catalogue">seed catalogue</a>.</p>
<pre>if soil.dry():
    water()</pre>
</article>
<template><p>template-content</p></template>
<footer>Copyright footer text</footer>
</body></html>`

func TestFetchPageHTMLToText(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, articleHTML)
	})
	cache := newMemCache()
	defs := toolSet(t, Config{Cache: cache, Decision: decision.Extractive{MaxChars: 100_000, PassThroughChars: 100_000}})
	res, err := call(t, defs["fetch_page"], "s1", map[string]any{"url": srv.URL + "/garden/tomatoes"})
	require.NoError(t, err)
	got := res.Content

	require.True(t, strings.HasPrefix(got, "Title: Gardening Guide\nURL: "+srv.URL+"/garden/tomatoes\n\n"), got)
	for _, want := range []string{
		"# Growing tomatoes\n\nTomatoes need at least six hours",
		"## Watering\n\nWater deeply twice a week",
		"- Use stakes or cages\n- Pinch off suckers",
		"Read the guide to pests and the seed catalogue.",
		"if soil.dry():\n    water()",
		"\n\nLinks:\n",
		"- About us: " + srv.URL + "/about",
		"- guide to pests: " + srv.URL + "/garden/pests.html\n",
		"- seed catalogue: https://seeds.example/catalogue",
	} {
		require.Contains(t, got, want)
	}
	for _, unwanted := range []string{"do-not-show", "color: red", "secret-style", "noscript-pixel", "<img", "template-content", "javascript:", "#aphids"} {
		require.NotContains(t, got, unwanted)
	}
	require.NotContains(t, got, "Copyright footer text", "readability keeps the article, not the page furniture")
}

func TestReadableFallsBackToWholeBody(t *testing.T) {
	// A listing with no article: everything is kept.
	var b strings.Builder
	b.WriteString("<html><body><h1>Index</h1><ul>")
	for i := range 30 {
		fmt.Fprintf(&b, `<li><a href="/item/%d">Item %d</a></li>`, i, i)
	}
	b.WriteString("</ul></body></html>")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, b.String())
	})
	defs := toolSet(t, Config{MaxLinks: 5, Decision: decision.Extractive{MaxChars: 100_000, PassThroughChars: 100_000}})
	res, err := call(t, defs["fetch_page"], "s1", map[string]any{"url": srv.URL})
	require.NoError(t, err)
	require.Contains(t, res.Content, "Title: Index\n")
	require.Contains(t, res.Content, "- Item 0\n")
	require.Contains(t, res.Content, "- Item 29\n")
	require.Equal(t, 5, strings.Count(res.Content, ": "+srv.URL+"/item/"), "MaxLinks caps the Links list")
}

func TestFetchPageCacheAndDecision(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, articleHTML)
	})
	cache := newMemCache()
	filter := &recordingFilter{}
	fp := toolSet(t, Config{Cache: cache, Decision: filter})["fetch_page"]
	url := srv.URL + "/tomatoes#watering"
	key := tools.FetchPageCacheKey(srv.URL + "/tomatoes")

	// Fresh: fetched, cached unfiltered, returned filtered with the query.
	res, err := call(t, fp, "s1", map[string]any{"url": url, "query": " watering "})
	require.NoError(t, err)
	require.Equal(t, "Title: Gardening Guide\nURL: "+srv.URL+"/tomatoes\n\n<<filtered for watering>>", res.Content)
	_, sets := cache.snapshot()
	require.Len(t, sets, 1)
	require.Equal(t, key, sets[0].key, "the key is the URL without its fragment, with no session")
	require.Equal(t, tools.ResultCacheTTL, sets[0].ttl)
	unfiltered := sets[0].content
	require.Contains(t, unfiltered, "Tomatoes need at least six hours")
	require.Contains(t, unfiltered, "Water deeply twice a week")
	require.NotContains(t, unfiltered, "<<filtered")
	calls := filter.snapshot()
	require.Len(t, calls, 1)
	require.Equal(t, "watering", calls[0].query)
	_, body, _ := strings.Cut(unfiltered, "\n\n")
	require.Equal(t, body, calls[0].content, "the filter sees the page without its header")

	// Cached, from another session, with a new query: no fetch, filtered again.
	res, err = call(t, fp, "s2", map[string]any{"url": url, "query": "sunlight"})
	require.NoError(t, err)
	require.EqualValues(t, 1, srv.hits.Load())
	require.Equal(t, "[from cache: fetched within the last 30 minutes]\nTitle: Gardening Guide\nURL: "+srv.URL+"/tomatoes\n\n<<filtered for sunlight>>", res.Content)
	calls = filter.snapshot()
	require.Len(t, calls, 2)
	require.Equal(t, filterCall{"sunlight", body}, calls[1])
	_, sets = cache.snapshot()
	require.Len(t, sets, 1, "a hit is not written again")

	// No query: filtered all the same, with an empty query.
	_, err = call(t, fp, "s1", map[string]any{"url": url})
	require.NoError(t, err)
	calls = filter.snapshot()
	require.Equal(t, filterCall{"", body}, calls[2])
}

func TestFetchPageRealFilterPicksRelevantPart(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><title>Long</title></head><body><main>")
	for i := range 80 {
		if i == 57 {
			b.WriteString("<p>The warranty lasts three years from the date of purchase.</p>")
			continue
		}
		fmt.Fprintf(&b, "<p>Paragraph %d describes colours, shapes and sizes of the product in general terms.</p>", i)
	}
	b.WriteString("</main></body></html>")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, b.String())
	})
	cache := newMemCache()
	fp := toolSet(t, Config{Cache: cache, Decision: decision.Extractive{MaxChars: 1500, PassThroughChars: 500}})["fetch_page"]
	for _, q := range []string{"warranty", "warranty years"} {
		res, err := call(t, fp, "s1", map[string]any{"url": srv.URL, "query": q})
		require.NoError(t, err)
		require.Contains(t, res.Content, "The warranty lasts three years")
		require.NotContains(t, res.Content, "Paragraph 3 ")
		require.Less(t, len(res.Content), 1700)
	}
	_, sets := cache.snapshot()
	require.Len(t, sets, 1)
	require.Contains(t, sets[0].content, "Paragraph 3 ", "the cache keeps the whole page")
}

func TestFetchPageFilterErrorFallsBack(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("filler words about nothing.\n\n", 400)+"the answer is 42")
	})
	var logs bytes.Buffer
	filter := &recordingFilter{err: errors.New("model on fire")}
	fp := toolSet(t, Config{Decision: filter, Logger: slog.New(slog.NewTextHandler(&logs, nil))})["fetch_page"]
	res, err := call(t, fp, "s1", map[string]any{"url": srv.URL, "query": "answer"})
	require.NoError(t, err)
	require.Contains(t, res.Content, "the answer is 42")
	require.NotContains(t, res.Content, "filler words")
	require.Contains(t, logs.String(), "decision filter failed")
	require.Contains(t, logs.String(), "model on fire")
}

func TestFetchPageResponses(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "just   text\n\n\n\nsecond paragraph   ")
		case "/latin1":
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			_, _ = w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>"))
		case "/meta-charset":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<html><head><meta charset="windows-1252"><title>Quotes</title></head><body><p>` + "\x93quoted\x94" + `</p></body></html>`))
		case "/untyped":
			_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Sniffed</title></head><body><p>found by sniffing</p></body></html>")
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = io.WriteString(w, "%PDF-1.7 binary")
		case "/empty":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<html><body><div id="app"></div><script>render()</script></body></html>`)
		case "/missing":
			http.NotFound(w, r)
		case "/auth":
			http.Error(w, "login required", http.StatusUnauthorized)
		case "/broken":
			http.Error(w, "bad gateway", http.StatusBadGateway)
		case "/huge":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body><p>start of the page</p>"+strings.Repeat("<p>more</p>", 100_000)+"<p>end of the page</p></body></html>")
		}
	})
	keepAll := decision.Extractive{MaxChars: 1 << 20, PassThroughChars: 1 << 20}
	fp := toolSet(t, Config{MaxPageBytes: 64 << 10, Decision: keepAll})["fetch_page"]
	tests := []struct {
		path          string
		want          []string
		notWant       []string
		wantErr       string
		wantTransient bool
	}{
		{path: "/text", want: []string{"Title: (none)\n", "just   text\n\nsecond paragraph"}},
		{path: "/latin1", want: []string{"Title: Café\n", "crème brûlée"}},
		{path: "/meta-charset", want: []string{"\u201cquoted\u201d"}},
		{path: "/untyped", want: []string{"Title: Sniffed", "found by sniffing"}},
		{path: "/empty", want: []string{"(the page has no readable text; it may need JavaScript)"}, notWant: []string{"render()"}},
		{path: "/huge", want: []string{"start of the page", "[the page is larger than 65536 bytes; only its start was read]"}, notWant: []string{"end of the page"}},
		{path: "/pdf", wantErr: "not a web page but application/pdf, 15 bytes, sha256 "},
		{path: "/missing", wantErr: srv.URL + "/missing: 404 Not Found: 404 page not found"},
		{path: "/auth", wantErr: "401 Unauthorized: login required"},
		{path: "/broken", wantErr: "502 Bad Gateway: bad gateway", wantTransient: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, err := call(t, fp, "s1", map[string]any{"url": srv.URL + tt.path})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, tt.wantTransient, tools.IsTransient(err))
				return
			}
			require.NoError(t, err)
			for _, w := range tt.want {
				require.Contains(t, res.Content, w)
			}
			for _, nw := range tt.notWant {
				require.NotContains(t, res.Content, nw)
			}
		})
	}
}

func TestFetchPageTimeoutAndBadInput(t *testing.T) {
	srv := newServer(t, blockUntilDone(t))
	fp := toolSet(t, Config{Timeout: 150 * time.Millisecond})["fetch_page"]
	_, err := call(t, fp, "s1", map[string]any{"url": srv.URL})
	require.ErrorContains(t, err, srv.URL+": no complete response within 150ms")
	require.True(t, tools.IsTransient(err))

	for _, args := range []map[string]any{{"url": "file:///etc/passwd"}, {"url": ""}, {"url": "example.org"}} {
		_, err := call(t, fp, "s1", args)
		require.ErrorContains(t, err, "want an absolute http:// or https:// URL")
	}
	_, err = fp.Handler(context.Background(), tools.Request{Args: []byte(`{"url":[]}`)})
	require.ErrorContains(t, err, "invalid arguments")
}

func TestFetchPageCapsText(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strings.Repeat("word ", 10_000))
	})
	cache := newMemCache()
	fp := toolSet(t, Config{Cache: cache, MaxPageTextBytes: 1000})["fetch_page"]
	_, err := call(t, fp, "s1", map[string]any{"url": srv.URL})
	require.NoError(t, err)
	_, sets := cache.snapshot()
	require.Len(t, sets, 1)
	require.Contains(t, sets[0].content, "[the page text goes on past 1000 bytes and was cut]")
	require.Less(t, len(sets[0].content), 1200)
}
