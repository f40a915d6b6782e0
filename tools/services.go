package tools

import (
	"context"
	"encoding/json"
	"time"
)

// ResultCache is the 30-minute result cache of fetch_page, search_web and
// http_request GET calls (K1). Implementations never fail a call: a cache
// that is down or slow is a miss, and a failed write is dropped (K5).
type ResultCache interface {
	Get(ctx context.Context, key string) (string, bool)
	Set(ctx context.Context, key, content string, ttl time.Duration)
}

// ResultCacheTTL is how long a cached result lives (K1).
const ResultCacheTTL = 30 * time.Minute

// Cache keys. fetch_page pages are shared across sessions (K4); search_web
// and http_request results are per session. args is the canonical argument
// text (Canonical) or, for fetch_page, the URL alone.
func FetchPageCacheKey(url string) string {
	return "toolround:cache:fetch_page:" + hashKey(url)
}

// FetchPageCacheKeyOf is the key of a fetch_page page in a tenant's own
// cache: the sessions of one tenant share it, no other's do.
func FetchPageCacheKeyOf(tenant, url string) string {
	return "toolround:cache:fetch_page:" + hashKey(tenant) + ":" + hashKey(url)
}

// SearchWebCacheKey is the per-session key of a search_web query.
func SearchWebCacheKey(sessionID, query string) string {
	return "toolround:cache:search_web:" + sessionID + ":" + hashKey(query)
}

// HTTPRequestCacheKey is the per-session key of an http_request GET; args
// are the call's canonical arguments.
func HTTPRequestCacheKey(sessionID, args string) string {
	if c, ok := Canonical([]byte(args)); ok {
		args = c
	}
	return "toolround:cache:http_request:" + sessionID + ":" + hashKey(args)
}

// Secrets resolves the secrets stored with store_secret. Tools that send
// credentials (http_request) expand {{secret:NAME}} through it, so the value
// never passes through a model or the round's history.
type Secrets interface {
	Get(ctx context.Context, sessionID, name string) (string, error)
}

// HistoryKey is the Redis list of a session's messages, one JSON
// HistoryRecord per element, appended by pass 3. The session id is its
// hash tag (Redis Cluster, O1); before it was toolround:history:<session>,
// still read where it may exist (cache.LegacyKey).
func HistoryKey(sessionID string) string { return "toolround:{" + sessionID + "}:history" }

// HistoryRecord is one message of a session's history as stored under
// HistoryKey: the assistant message of a round, then its tool messages.
type HistoryRecord struct {
	RunID      string          `json:"run_id"`
	Round      int             `json:"round"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	Time       time.Time       `json:"time"`
}
