package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolround/toolround/tools"
)

// Key kinds under "toolround:<kind>:<session_id>".
func todoKey(sessionID string) string   { return "toolround:todo:" + sessionID }
func errorsKey(sessionID string) string { return "toolround:errors:" + sessionID }
func resultKey(sessionID string) string { return "toolround:result:" + sessionID }

// store is the small part of Redis the tools use. Errors from it are
// wrapped by the callers with the tool's name.
type store interface {
	getString(ctx context.Context, key string) (string, bool, error)
	setString(ctx context.Context, key, value string) error
	hset(ctx context.Context, key, field, value string) error
	hget(ctx context.Context, key, field string) (string, bool, error)
	// appendOnce adds record to the list at key unless a record with the same
	// id is already there (a retried attempt), then keeps the newest max.
	appendOnce(ctx context.Context, key, id, record string, max int) (added bool, err error)
	// list returns the newest n elements of a list, oldest first; n <= 0 means all.
	list(ctx context.Context, key string, n int) ([]string, error)
	shared() bool
}

type redisStore struct {
	rdb *redis.Client
	ttl time.Duration
}

func (s *redisStore) shared() bool { return true }

func (s *redisStore) expire(ctx context.Context, p redis.Pipeliner, key string) {
	if s.ttl > 0 {
		p.Expire(ctx, key, s.ttl)
	} else {
		p.Persist(ctx, key)
	}
}

func (s *redisStore) getString(ctx context.Context, key string) (string, bool, error) {
	v, err := s.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

func (s *redisStore) setString(ctx context.Context, key, value string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, value, 0)
		s.expire(ctx, p, key)
		return nil
	})
	return err
}

func (s *redisStore) hset(ctx context.Context, key, field, value string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, field, value)
		s.expire(ctx, p, key)
		return nil
	})
	return err
}

func (s *redisStore) hget(ctx context.Context, key, field string) (string, bool, error) {
	v, err := s.rdb.HGet(ctx, key, field).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// appendOnceScript scans the (capped) list for the record id, so that the
// check and the push are one atomic step on one key.
var appendOnceScript = redis.NewScript(`
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for _, item in ipairs(items) do
  local ok, rec = pcall(cjson.decode, item)
  if ok and type(rec) == 'table' and rec['id'] == ARGV[1] then
    return 0
  end
end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('PERSIST', KEYS[1])
end
return 1
`)

func (s *redisStore) appendOnce(ctx context.Context, key, id, record string, max int) (bool, error) {
	n, err := appendOnceScript.Run(ctx, s.rdb, []string{key}, id, record, max, s.ttl.Milliseconds()).Int()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

func (s *redisStore) list(ctx context.Context, key string, n int) ([]string, error) {
	start := int64(0)
	if n > 0 {
		start = -int64(n)
	}
	return s.rdb.LRange(ctx, key, start, -1).Result()
}

// memStore is the in-process fallback when no Redis client is configured.
// It is not shared between workers and ignores the TTL.
type memStore struct {
	mu      sync.Mutex
	strings map[string]string
	hashes  map[string]map[string]string
	lists   map[string][]memRecord
}

type memRecord struct{ id, record string }

func newMemStore() *memStore {
	return &memStore{
		strings: make(map[string]string),
		hashes:  make(map[string]map[string]string),
		lists:   make(map[string][]memRecord),
	}
}

func (s *memStore) shared() bool { return false }

func (s *memStore) getString(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.strings[key]
	return v, ok, nil
}

func (s *memStore) setString(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strings[key] = value
	return nil
}

func (s *memStore) hset(_ context.Context, key, field, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hashes[key] == nil {
		s.hashes[key] = make(map[string]string)
	}
	s.hashes[key][field] = value
	return nil
}

func (s *memStore) hget(_ context.Context, key, field string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.hashes[key][field]
	return v, ok, nil
}

func (s *memStore) appendOnce(_ context.Context, key, id, record string, max int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.lists[key] {
		if r.id == id {
			return false, nil
		}
	}
	l := append(s.lists[key], memRecord{id, record})
	if max > 0 && len(l) > max {
		l = append([]memRecord(nil), l[len(l)-max:]...)
	}
	s.lists[key] = l
	return true, nil
}

func (s *memStore) list(_ context.Context, key string, n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[key]
	if n > 0 && len(l) > n {
		l = l[len(l)-n:]
	}
	out := make([]string, len(l))
	for i, r := range l {
		out[i] = r.record
	}
	return out, nil
}

// storeError wraps a storage failure with the tool's name. Failures to
// reach Redis are transient (the engine retries them for read-only and
// idempotent tools); errors that Redis itself answered are not.
func storeError(tool, op string, err error) error {
	wrapped := fmt.Errorf("%s: %s: %w", tool, op, err)
	if errors.Is(err, context.Canceled) {
		return wrapped
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return wrapped
	}
	return tools.Transient(wrapped)
}

// needSession refuses calls without a session id: every record here is per
// session.
func needSession(tool string, req tools.Request) error {
	if req.SessionID == "" {
		return fmt.Errorf("%s: the call has no session id; per-session data cannot be kept without one", tool)
	}
	return nil
}
