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
//	toolround:{<session>}:events                           event stream (XADD)
//	toolround:{<session>}:history                          session history (list)
//
// Tools keep their own per-session data under the same prefix (package
// agent, through SessionData: todo, errors, result; package secrets: secret). Result-cache keys
// expire after 30 minutes, blobs after BlobTTL; streams and histories are
// capped in length instead.
//
// REDIS_URL names one node, a master behind Sentinel or a Redis Cluster
// (Open, O1). The keys one script or transaction touches together share a
// hash tag, the session id in braces ({<session>}), so that in a cluster
// they are in one slot: a session's event stream and its publish-once
// markers (toolround:{<session>}:event-published:<id>), its history and
// its append markers (toolround:{<session>}:history-appended:<id>), its
// secrets and their operations (package secrets). These had names without
// braces before (toolround:events:<session>, ...); where those can still
// exist, on a deployment that is no cluster, they are read too (LegacyKey,
// V1).
package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
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
	rdb redis.UniversalClient
	// blob moves large results. Its socket deadlines come from each
	// operation's context, which grows with the blob's size: rdb's deadlines
	// are OpTimeout, too short for megabytes.
	blob redis.UniversalClient
	opts Options
	// mode is how REDIS_URL reaches Redis (O1).
	mode Mode
	// Skipped counts operations skipped because Redis failed or was slow.
	skipped  atomic.Int64
	lastWarn atomic.Int64
	// downUntil (unix nanoseconds) is the end of the cooldown after a failure.
	downUntil atomic.Int64
	// replicas caches whether the blob writes' master has replicas to
	// confirm them (blobs.go).
	replicas replicaCache
}

// errCooldown is the error of an operation skipped during the cooldown.
var errCooldown = errors.New("cache: redis failed moments ago; skipped until it has had time to come back")

// Mode is how a REDIS_URL reaches Redis (O1).
type Mode int

const (
	// Single is one node: redis[s]://[user:pass@]host:port/db (ParseURL).
	Single Mode = iota
	// Sentinel is a master found through Sentinel:
	// redis[s]://[user:pass@]sentinel1:26379/db?master_name=M&addr=sentinel2:26379
	// (ParseFailoverURL; the user and password are the sentinels', the
	// master's are the password= and username= parameters).
	Sentinel
	// Cluster is a Redis Cluster:
	// redis[s]://[user:pass@]node1:6379?addr=node2:6379&cluster=1
	// (ParseClusterURL, after cluster=1 is taken out; database 0 only).
	Cluster
)

func (m Mode) String() string {
	switch m {
	case Sentinel:
		return "sentinel"
	case Cluster:
		return "cluster"
	}
	return "single"
}

// Mode is how this client reaches Redis.
func (c *Client) Mode() Mode { return c.mode }

// Open connects to Redis. It returns the client even when Redis does not
// answer yet, with the ping error, so a worker can start and use Redis once
// it is back. A REDIS_URL that does not parse, or names a database other
// than 0 in Cluster mode, is an error and no client.
func Open(ctx context.Context, opts Options) (*Client, error) {
	opts.defaults()
	c := &Client{opts: opts}
	addr, err := c.dial()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	if err := c.rdb.Ping(pctx).Err(); err != nil {
		return c, notAnswering(addr, opts.DialTimeout, err)
	}
	return c, nil
}

// dial makes the clients REDIS_URL names and returns the first address it
// names, for messages (never the URL, which may hold a password).
func (c *Client) dial() (string, error) {
	o := c.opts
	mode, u, err := ParseMode(o.URL)
	if err != nil {
		return "", err
	}
	c.mode = mode
	switch mode {
	case Sentinel:
		fo, err := redis.ParseFailoverURL(u)
		if err != nil {
			return "", urlErr(err)
		}
		fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.MaxRetries = o.DialTimeout, o.OpTimeout, o.OpTimeout, 1
		bo := *fo
		bo.ReadTimeout, bo.WriteTimeout, bo.ContextTimeoutEnabled = blobTimeout, blobTimeout, true
		c.rdb, c.blob = redis.NewFailoverClient(fo), redis.NewFailoverClient(&bo)
		return fo.SentinelAddrs[0], nil
	case Cluster:
		co, err := redis.ParseClusterURL(u)
		if err != nil {
			return "", urlErr(err)
		}
		co.DialTimeout, co.ReadTimeout, co.WriteTimeout, co.MaxRetries = o.DialTimeout, o.OpTimeout, o.OpTimeout, 1
		bo := *co
		bo.ReadTimeout, bo.WriteTimeout, bo.ContextTimeoutEnabled = blobTimeout, blobTimeout, true
		c.rdb, c.blob = newClusterClient(co), newClusterClient(&bo)
		return co.Addrs[0], nil
	}
	ro, err := redis.ParseURL(u)
	if err != nil {
		return "", urlErr(err)
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.MaxRetries = o.DialTimeout, o.OpTimeout, o.OpTimeout, 1
	bo := *ro
	bo.ReadTimeout, bo.WriteTimeout, bo.ContextTimeoutEnabled = blobTimeout, blobTimeout, true
	c.rdb, c.blob = redis.NewClient(ro), redis.NewClient(&bo)
	return ro.Addr, nil
}

// urlErr names what is wrong with REDIS_URL without the URL itself, which
// may hold a password.
func urlErr(err error) error { return fmt.Errorf("cache: REDIS_URL: %w", err) }

// ParseMode tells which of the three forms of O1 the URL is and returns
// the URL its go-redis parser takes: "cluster=1" (or true) makes it a
// Cluster and is taken out; "master_name=" makes it Sentinel; else one
// node. In Cluster mode a database other than 0, in the path or as db=, is
// refused: a cluster has only database 0.
func ParseMode(raw string) (Mode, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Single, "", urlErr(errors.New("does not parse as a URL"))
	}
	q := u.Query()
	if !q.Has("cluster") {
		if q.Has("master_name") {
			return Sentinel, raw, nil
		}
		return Single, raw, nil
	}
	cluster := false
	if v := q["cluster"]; len(v) > 0 {
		last := v[len(v)-1]
		switch strings.ToLower(last) {
		case "1", "true", "yes":
			cluster = true
		case "0", "false", "no", "":
		default:
			return Single, "", urlErr(fmt.Errorf("cluster=%q is neither 1 nor 0", last))
		}
		q.Del("cluster")
		u.RawQuery = q.Encode()
	}
	switch {
	case cluster && q.Has("master_name"):
		return Single, "", urlErr(errors.New("cluster=1 and master_name= name two kinds of deployment; Sentinel in front of a cluster is not supported"))
	case cluster:
		db := strings.Trim(u.Path, "/")
		if q.Has("db") {
			db = q.Get("db")
		}
		if db != "" && db != "0" {
			return Single, "", urlErr(fmt.Errorf("a Redis Cluster has only database 0, the URL names database %q", db))
		}
		u.Path = ""
		q.Del("db")
		u.RawQuery = q.Encode()
		return Cluster, u.String(), nil
	case q.Has("master_name"):
		return Sentinel, u.String(), nil
	}
	return Single, u.String(), nil
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

// Redis is the underlying client, for tools that keep per-session data:
// one node, a Sentinel-backed master or a cluster.
func (c *Client) Redis() redis.UniversalClient { return c.rdb }

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
