package client

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/tools/secrets"
)

// FromEnv returns a client configured from the environment variables the
// worker reads, ready to use with no further options: it dials Temporal
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY),
// submits to TASK_QUEUE, resolves large results and follows a round's events
// through Redis (REDIS_URL; "none" leaves previews in place and has no
// events), and seals store_secret values with the key the workers use
// (TOOLROUND_SECRET_KEY or TOOLROUND_SECRET_KEY_FILE), also in a thought
// that holds a value an earlier turn stored (Options.StoredSecrets, read
// from Redis). It returns an error
// when the configuration is unusable or Temporal does not answer; a Redis
// that does not answer yet is retried on use. Close the client when done.
func FromEnv(ctx context.Context) (*Client, error) {
	t := envconf.TemporalFromEnv()
	tc, err := t.Dial(nil)
	if err != nil {
		return nil, err
	}
	opts := Options{TaskQueue: t.TaskQueue, Secrets: secrets.ConfigFromEnv()}
	var rc *cache.Client
	var redisErr error
	if url := envconf.RedisURL(); url != "" {
		// Open returns a client without error-free ping too: it reconnects
		// on use. Only an unusable URL gives no client.
		if rc, redisErr = cache.Open(ctx, cache.Options{URL: url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); rc == nil {
			tc.Close()
			return nil, redisErr
		}
		opts.Blobs, opts.Events, opts.SecretData = rc.Blobs(), rc.Events(), rc.SessionData()
	}
	c := New(tc, opts)
	c.redisErr = redisErr
	c.close = func() error {
		tc.Close()
		if rc != nil {
			return rc.Close()
		}
		return nil
	}
	return c, nil
}

// sessionSecrets reads the sessions' stored secrets from the workers' Redis,
// opened with the client's key, which it loads on first use.
type sessionSecrets struct {
	c     *Client
	data  secrets.Hashes
	mu    sync.Mutex
	store *secrets.Store
}

func (s *sessionSecrets) open() (*secrets.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store != nil {
		return s.store, nil
	}
	key, err := s.c.secretKey()
	if err != nil {
		return nil, err
	}
	if s.store, err = secrets.NewStore(key, secrets.StoreOptions{Hashes: s.data}); err != nil {
		return nil, err
	}
	return s.store, nil
}

func (s *sessionSecrets) Names(ctx context.Context, sessionID string) ([]string, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	return st.Names(ctx, sessionID)
}

func (s *sessionSecrets) Get(ctx context.Context, sessionID, name string) (string, error) {
	st, err := s.open()
	if err != nil {
		return "", err
	}
	return st.Get(ctx, sessionID, name)
}

// RedisError is why Redis (REDIS_URL) did not answer when FromEnv opened
// the client, naming its address (it matches cache.ErrNotAnswering); nil when
// it answered, or for a client without Redis. Until it answers, large results
// stay previews and no events arrive.
func (c *Client) RedisError() error { return c.redisErr }

// Close releases the connections that FromEnv opened. It returns nil and does
// nothing for a client made with New: the caller owns that Temporal client.
func (c *Client) Close() error {
	if c.close == nil {
		return nil
	}
	err := c.close()
	c.close = nil
	return err
}
