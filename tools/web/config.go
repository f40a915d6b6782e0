// Package web holds the HTTP tools: http_request, fetch_page and search_web.
// Every connection passes the netguard policy; page and search results are
// cached unfiltered and trimmed by the decision model on every return (K3).
package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/decision"
	"github.com/toolround/toolround/tools/netguard"
)

// EnvSearchURL is the environment variable a worker may read into
// Config.SearXNGURL.
const EnvSearchURL = "SEARCH_URL"

// Config configures the web tools. Zero fields take the defaults given here,
// all set in withDefaults.
type Config struct {
	// Policy decides which addresses the tools may reach; every connection,
	// redirects included, is checked after DNS resolution.
	// Nil: netguard.DefaultPolicy() (everything but cloud metadata addresses).
	Policy *netguard.Policy
	// IdempotentHosts are the hosts ("api.example.com", or with a port,
	// "127.0.0.1:8080") that the operator knows honour Idempotency-Key: an
	// http_request POST or PATCH to one of them, sent with the same key on
	// every attempt (the call's operation id, or a key the call sets), is
	// retried after a lost attempt instead of ending unknown_outcome, since
	// the server applies it once (SPEC R). The worker reads it from
	// HTTP_IDEMPOTENT_HOSTS (comma-separated). Default none.
	IdempotentHosts []string
	// HostConcurrency is how many http_request and fetch_page calls of one
	// round run at once to one host. Default tools.HostKeyLimit; a worker
	// sets its MAX_CONCURRENT_TOOLS bound unless HTTP_HOST_CONCURRENCY says
	// otherwise (ParseHostConcurrency).
	HostConcurrency int
	// HostLimits are per-host exceptions to HostConcurrency, keyed by host
	// name ("api.example.com") or host and port ("127.0.0.1:8080"); a key
	// with a port wins over the host name alone.
	HostLimits map[string]int
	// Timeout bounds one HTTP exchange, from dial to the last byte of the
	// body. Default 30s.
	Timeout time.Duration
	// MaxResponseBytes caps the body that http_request reads and shows; the
	// rest is cut off with a note. Default 256 KiB.
	MaxResponseBytes int64
	// MaxPageBytes caps the document that fetch_page downloads. Default 5 MiB.
	MaxPageBytes int64
	// MaxPageTextBytes caps the readable text of a page, as cached. Default 512 KiB.
	MaxPageTextBytes int
	// MaxLinks caps the links fetch_page lists. Default 60.
	MaxLinks int
	// MaxRedirects is how many redirects a request follows. Default 5.
	MaxRedirects int
	// Tenant names the tenant of a session (H10: the scope of the console
	// token that covers it), which the fetch_page cache is kept per, so no
	// page fetched in one tenant's session is served to another's. Nil, or
	// "": every session shares the cache (K4).
	Tenant func(session string) string
	// UserAgent is sent unless a call sets its own. Default "toolround-web/1".
	UserAgent string
	// Cache is the result cache (K1). Nil: nothing is cached.
	Cache tools.ResultCache
	// CacheTimeout bounds one cache read or write, so that a slow cache is
	// skipped rather than holding up the call (K5). Default 2s.
	CacheTimeout time.Duration
	// Secrets fills {{secret:NAME}} placeholders of http_request. Nil: a call
	// with a placeholder fails, saying the secret is missing.
	Secrets tools.Secrets
	// Decision trims fetch_page and search_web results. Nil: the extractive
	// filter of package decision with its defaults.
	Decision decision.Filter
	// Searcher answers search_web. Nil: SearXNG at SearXNGURL when that is
	// set; otherwise search_web fails, saying no backend is configured.
	Searcher Searcher
	// SearXNGURL is the base URL of a SearXNG instance whose settings enable
	// the json format (a worker may read it from SEARCH_URL). Requests to it
	// skip Policy: it is the operator's choice, not the model's.
	SearXNGURL string
	// MaxSearchResults caps the results search_web shows. Default 10.
	MaxSearchResults int
	// Logger receives cache and filter fallbacks. Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultTimeout          = 30 * time.Second
	defaultMaxResponseBytes = 256 << 10
	defaultMaxPageBytes     = 5 << 20
	defaultMaxPageTextBytes = 512 << 10
	defaultMaxLinks         = 60
	defaultMaxRedirects     = 5
	defaultUserAgent        = "toolround-web/1"
	defaultMaxSearchResults = 10

	defaultCacheTimeout = 2 * time.Second
	// A tool's attempt timeout is Timeout plus an allowance: for the cache
	// and secrets, and for fetch_page and search_web the decision model.
	requestAllowance = 15 * time.Second
	filterAllowance  = 60 * time.Second
)

func (c Config) withDefaults() (Config, error) {
	if c.Policy == nil {
		p := netguard.DefaultPolicy()
		c.Policy = &p
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = defaultMaxResponseBytes
	}
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = defaultMaxPageBytes
	}
	if c.MaxPageTextBytes <= 0 {
		c.MaxPageTextBytes = defaultMaxPageTextBytes
	}
	if c.CacheTimeout <= 0 {
		c.CacheTimeout = defaultCacheTimeout
	}
	if c.MaxLinks <= 0 {
		c.MaxLinks = defaultMaxLinks
	}
	if c.HostConcurrency <= 0 {
		c.HostConcurrency = tools.HostKeyLimit
	}
	for h, n := range c.HostLimits {
		if n <= 0 || h == "" {
			return c, fmt.Errorf("host limit %q=%d: want a host and a number above 0", h, n)
		}
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = defaultMaxRedirects
	}
	if c.UserAgent == "" {
		c.UserAgent = defaultUserAgent
	}
	if c.Decision == nil {
		c.Decision = decision.Extractive{}
	}
	if c.MaxSearchResults <= 0 {
		c.MaxSearchResults = defaultMaxSearchResults
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Searcher == nil && strings.TrimSpace(c.SearXNGURL) != "" {
		s, err := NewSearXNG(c.SearXNGURL, &http.Client{Timeout: c.Timeout})
		if err != nil {
			return Config{}, err
		}
		c.Searcher = s
	}
	return c, nil
}

// Register adds http_request, fetch_page and search_web to reg.
func Register(reg *tools.Registry, cfg Config) error {
	defs, err := Definitions(cfg)
	if err != nil {
		return err
	}
	return reg.RegisterAll(defs...)
}

// Definitions returns the definitions of the web tools.
func Definitions(cfg Config) ([]tools.Definition, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	w := &web{cfg: cfg, client: newClient(cfg)}
	return []tools.Definition{w.httpRequestDef(), w.fetchPageDef(), w.searchWebDef()}, nil
}

// web is the state the three tools share.
type web struct {
	cfg    Config
	client *client
}
