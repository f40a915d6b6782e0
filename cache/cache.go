// Package cache keeps what a round needs outside workflow history, in Redis:
// the 30-minute result cache (K1-K5), large results, the session event
// streams and the session history. A Redis that is down or slow never fails a
// round: operations time out quickly, are skipped, logged and counted.
//
// Keys (all under the "toolround:" prefix):
//
//	toolround:cache:fetch_page:<hash(url)>                 result cache, shared (K4)
//	toolround:cache:search_web:<session>:<hash(query)>     result cache, per session
//	toolround:cache:http_request:<session>:<hash(args)>    result cache, per session
//	toolround:blob:<sha256>                                large results
//	toolround:events:<session>                             event stream (XADD)
//	toolround:history:<session>                            session history (list)
//
// Tools keep their own per-session data under the same prefix (package
// agent, through SessionData: todo, errors, result; package secrets: secret). Result-cache keys
// expire after 30 minutes, blobs after BlobTTL; streams and histories are
// capped in length instead.
package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure the Redis connection.
type Options struct {
	// URL is REDIS_URL. Default "redis://127.0.0.1:6379/0".
	URL string
	// DialTimeout bounds connecting. Default 500ms.
	DialTimeout time.Duration
	// OpTimeout bounds each cache operation of a round. Default 250ms.
	OpTimeout time.Duration
	// Logger receives warnings about skipped operations. Default slog.Default().
	Logger *slog.Logger
	// Cooldown: after an operation fails, the next ones are skipped at once
	// for this long instead of each waiting out its timeout, so a Redis that
	// is down costs a round nothing. Default 2s.
	Cooldown time.Duration
}

func (o *Options) defaults() {
	if o.URL == "" {
		o.URL = "redis://127.0.0.1:6379/0"
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 500 * time.Millisecond
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 2 * time.Second
	}
}

// Client is the shared Redis connection with the skip accounting of K5.
type Client struct {
	rdb *redis.Client
	// blob moves large results. Its socket deadlines come from each
	// operation's context, which grows with the blob's size: rdb's deadlines
	// are OpTimeout, too short for megabytes.
	blob *redis.Client
	opts Options
	// Skipped counts operations skipped because Redis failed or was slow.
	skipped  atomic.Int64
	lastWarn atomic.Int64
	// downUntil (unix nanoseconds) is the end of the cooldown after a failure.
	downUntil atomic.Int64
}

// errCooldown is the error of an operation skipped during the cooldown.
var errCooldown = errors.New("cache: redis failed moments ago; skipped until it has had time to come back")

// Open connects to Redis. It returns the client even when Redis does not
// answer yet, with the ping error, so a worker can start and use Redis once
// it is back.
func Open(ctx context.Context, opts Options) (*Client, error) {
	opts.defaults()
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("cache: REDIS_URL %q: %w", opts.URL, err)
	}
	ro.DialTimeout = opts.DialTimeout
	ro.ReadTimeout = opts.OpTimeout
	ro.WriteTimeout = opts.OpTimeout
	ro.MaxRetries = 1
	bo := *ro
	bo.ReadTimeout, bo.WriteTimeout = blobTimeout, blobTimeout
	bo.ContextTimeoutEnabled = true
	c := &Client{rdb: redis.NewClient(ro), blob: redis.NewClient(&bo), opts: opts}
	pctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	if err := c.rdb.Ping(pctx).Err(); err != nil {
		return c, notAnswering(ro.Addr, opts.DialTimeout, err)
	}
	return c, nil
}

// ErrNotAnswering is matched by Open's error when Redis does not answer.
var ErrNotAnswering = errors.New("does not answer")

// notAnswering names Redis and its address (never the URL, which may hold a
// password) and why it does not answer: the dial's own error rather than
// the ping's expired context when connecting is what fails.
func notAnswering(addr string, timeout time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		if conn, derr := net.DialTimeout("tcp", addr, timeout); derr != nil {
			err = derr
		} else {
			_ = conn.Close()
		}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("cache: Redis at %s %w: %w", addr, ErrNotAnswering, err)
}

// DiscardDriverLog silences the Redis driver's own log lines ("pool.go:
// failed to dial ..."), for a command whose errors say it in one line.
// It sets the driver's process-wide logger.
func DiscardDriverLog() { redis.SetLogger(discardLog{}) }

type discardLog struct{}

func (discardLog) Printf(context.Context, string, ...any) {}

// Redis is the underlying client, for tools that keep per-session data.
func (c *Client) Redis() *redis.Client { return c.rdb }

// Close closes the connections.
func (c *Client) Close() error { return errors.Join(c.rdb.Close(), c.blob.Close()) }

// Skipped is how many operations were skipped since start (K5 metric).
func (c *Client) Skipped() int64 { return c.skipped.Load() }

func (c *Client) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.OpTimeout)
}

// cooling reports whether an operation is skipped because an earlier one
// failed within the cooldown; it counts the skip.
func (c *Client) cooling() bool {
	if time.Now().UnixNano() < c.downUntil.Load() {
		c.skipped.Add(1)
		return true
	}
	return false
}

// skip records a failed operation: counted always, logged at most every 10s,
// and the start of a cooldown.
func (c *Client) skip(what string, err error) {
	c.downUntil.Store(time.Now().Add(c.opts.Cooldown).UnixNano())
	c.skipped.Add(1)
	now := time.Now().UnixNano()
	last := c.lastWarn.Load()
	if now-last > int64(10*time.Second) && c.lastWarn.CompareAndSwap(last, now) {
		c.opts.Logger.Warn("redis unavailable or slow; skipped", "op", what, "error", err, "skipped_total", c.skipped.Load())
	}
}

// ResultCache is the Redis result cache; it implements tools.ResultCache.
type ResultCache struct{ c *Client }

// ResultCache returns the result cache over this connection.
func (c *Client) ResultCache() *ResultCache { return &ResultCache{c: c} }

// Get returns a cached result; errors are misses.
func (r *ResultCache) Get(ctx context.Context, key string) (string, bool) {
	if r.c.cooling() {
		return "", false
	}
	ctx, cancel := r.c.op(ctx)
	defer cancel()
	v, err := r.c.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false
	}
	if err != nil {
		r.c.skip("cache get", err)
		return "", false
	}
	return v, true
}

// Set stores a result with its TTL; errors are dropped.
func (r *ResultCache) Set(ctx context.Context, key, content string, ttl time.Duration) {
	if r.c.cooling() {
		return
	}
	ctx, cancel := r.c.op(ctx)
	defer cancel()
	if err := r.c.rdb.Set(ctx, key, content, ttl).Err(); err != nil {
		r.c.skip("cache set", err)
	}
}

// MemoryCache is the in-process result cache used when Redis is not
// configured: not shared between workers.
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]memEntry
}

type memEntry struct {
	v   string
	exp time.Time
}

// NewMemoryCache returns an empty in-process cache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{m: map[string]memEntry{}} }

// Get implements tools.ResultCache.
func (m *MemoryCache) Get(_ context.Context, key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || time.Now().After(e.exp) {
		delete(m.m, key)
		return "", false
	}
	return e.v, true
}

// Set implements tools.ResultCache.
func (m *MemoryCache) Set(_ context.Context, key, content string, ttl time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[key] = memEntry{v: content, exp: time.Now().Add(ttl)}
}
