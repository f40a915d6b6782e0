package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolround/toolround/tools"
)

// SearchResult is one hit of a web search.
type SearchResult struct {
	Title     string
	URL       string
	Snippet   string
	Published string // as the backend gives it; may be empty
}

// SearchResponse is what a backend found for a query.
type SearchResponse struct {
	Results     []SearchResult
	Answers     []string // direct answers, when the backend has any
	Suggestions []string // related queries
}

// Searcher is a web search backend. A failure the backend may get over (a
// timeout, a 5xx) should be wrapped with tools.Transient.
type Searcher interface {
	// Name identifies the backend in results and errors.
	Name() string
	Search(ctx context.Context, query string, limit int) (SearchResponse, error)
}

// SearXNG queries a SearXNG instance through its JSON API
// (GET {base}/search?q=...&format=json). The instance must list json in the
// search.formats of its settings.yml; otherwise it answers 403.
type SearXNG struct {
	base   *url.URL
	client *http.Client
}

// NewSearXNG returns a Searcher for the instance at baseURL. A nil client
// uses http.DefaultClient.
func NewSearXNG(baseURL string, client *http.Client) (*SearXNG, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("searxng: base URL %q: want an absolute http or https URL such as http://127.0.0.1:8888", baseURL)
	}
	if client == nil {
		client = http.DefaultClient
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/search"
	u.RawQuery = ""
	return &SearXNG{base: u, client: client}, nil
}

// Name implements Searcher.
func (s *SearXNG) Name() string { return "searxng" }

type searxngReply struct {
	Results []struct {
		Title         string `json:"title"`
		URL           string `json:"url"`
		Content       string `json:"content"`
		PublishedDate string `json:"publishedDate"`
	} `json:"results"`
	Answers     []json.RawMessage `json:"answers"`
	Suggestions []string          `json:"suggestions"`
}

// Search implements Searcher.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) (SearchResponse, error) {
	u := *s.base
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return SearchResponse{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return SearchResponse{}, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return SearchResponse{}, tools.Transient(fmt.Errorf("searxng at %s: %w", s.base.Host, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return SearchResponse{}, tools.Transient(fmt.Errorf("searxng: read reply: %w", err))
	}
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return SearchResponse{}, fmt.Errorf("searxng at %s refused format=json (403 Forbidden): add json to search.formats in its settings.yml", s.base.Host)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return SearchResponse{}, tools.Transient(fmt.Errorf("searxng: %s", resp.Status))
	case resp.StatusCode != http.StatusOK:
		return SearchResponse{}, fmt.Errorf("searxng: %s: %s", resp.Status, oneLine(string(raw[:min(len(raw), 200)])))
	}
	var r searxngReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return SearchResponse{}, fmt.Errorf("searxng: the reply is not its JSON format: %w", err)
	}
	var out SearchResponse
	for _, h := range r.Results {
		if strings.TrimSpace(h.URL) == "" {
			continue
		}
		out.Results = append(out.Results, SearchResult{
			Title: oneLine(h.Title), URL: strings.TrimSpace(h.URL), Snippet: oneLine(h.Content), Published: h.PublishedDate,
		})
		if len(out.Results) == limit {
			break
		}
	}
	for _, a := range r.Answers {
		// Older versions send strings, newer ones objects with an answer field.
		var text string
		if json.Unmarshal(a, &text) != nil {
			var obj struct {
				Answer string `json:"answer"`
			}
			if json.Unmarshal(a, &obj) == nil {
				text = obj.Answer
			}
		}
		if text = oneLine(text); text != "" {
			out.Answers = append(out.Answers, text)
		}
	}
	out.Suggestions = r.Suggestions
	return out, nil
}

var searchWebSchema = tools.Schema(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 500,
      "description": "What to search the web for; the backend's search syntax (site:, quotes) is passed on."}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

func (w *web) searchWebDef() tools.Definition {
	return tools.Definition{
		Name: "search_web",
		Description: "Search the web and return the results (title, URL, snippet), trimmed to those relevant to the query. " +
			"Read a result with fetch_page. Results are cached for 30 minutes in the session.",
		Parameters: searchWebSchema,
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Subject:    tools.SubjectField("query"),
		Timeout:    w.cfg.Timeout + filterAllowance,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(w.searchWeb),
	}
}

// errNoSearcher explains how to set up a backend.
var errNoSearcher = errors.New("no search backend is configured on this worker: " +
	"set SEARCH_URL (web.Config.SearXNGURL) to a SearXNG instance with the json format enabled, or give web.Config a Searcher; " +
	"until then, use fetch_page on a URL you know")

type searchWebArgs = struct {
	Query string `json:"query"`
}

func (w *web) searchWeb(ctx context.Context, req tools.Request, a searchWebArgs) (tools.Result, error) {
	query := strings.TrimSpace(a.Query)
	if query == "" {
		return tools.Result{}, errors.New("the query is empty")
	}
	if w.cfg.Searcher == nil {
		return tools.Result{}, errNoSearcher
	}
	key := tools.SearchWebCacheKey(req.SessionID, query)
	text, cached := "", false
	if w.cfg.Cache != nil {
		text, cached = w.cacheGet(ctx, key)
	}
	if !cached {
		resp, err := w.cfg.Searcher.Search(ctx, query, w.cfg.MaxSearchResults)
		if err != nil {
			return tools.Result{}, err // a transient one stays transient
		}
		if len(resp.Results) == 0 && len(resp.Answers) == 0 {
			msg := fmt.Sprintf("No results for %q (%s).", query, w.cfg.Searcher.Name())
			if len(resp.Suggestions) > 0 {
				msg += " Related searches: " + strings.Join(resp.Suggestions, "; ")
			}
			return tools.Text(msg), nil
		}
		text = renderResults(query, w.cfg.Searcher.Name(), resp)
		// K3: the handler caches its unfiltered results, per session (K4).
		if w.cfg.Cache != nil {
			w.cacheSet(ctx, key, text)
		}
	}
	note := ""
	if cached {
		note = "[from cache: searched in this session within the last 30 minutes]\n"
	}
	return tools.Text(w.present(ctx, query, text, note)), nil
}

// renderResults is the cached text of a search: a header paragraph, then one
// paragraph per answer and per result, so that the decision model can keep
// or drop each.
func renderResults(query, backend string, r SearchResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Search results for %q (%s, %d results)", query, backend, len(r.Results))
	for _, a := range r.Answers {
		fmt.Fprintf(&b, "\n\nAnswer: %s", a)
	}
	for i, h := range r.Results {
		title := h.Title
		if title == "" {
			title = h.URL
		}
		fmt.Fprintf(&b, "\n\n%d. %s\n   %s", i+1, title, h.URL)
		if h.Published != "" {
			fmt.Fprintf(&b, "\n   published %s", h.Published)
		}
		if h.Snippet != "" {
			fmt.Fprintf(&b, "\n   %s", h.Snippet)
		}
	}
	if len(r.Suggestions) > 0 {
		fmt.Fprintf(&b, "\n\nRelated searches: %s", strings.Join(r.Suggestions, "; "))
	}
	return b.String()
}
