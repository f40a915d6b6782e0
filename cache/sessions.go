package cache

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolround/toolround/tools"
)

// SessionData is the per-session data the agent tools keep in Redis (todo
// lists, error records, run results) and the session history they read.
// Unlike the result cache it is not skipped when Redis fails: errors are
// returned, marked with tools.Transient when Redis could not be reached (a
// retry may succeed) and left unmarked when Redis answered with an error or
// the context was cancelled.
//
// A ttl > 0 makes a written key expire that long after its last write;
// ttl <= 0 makes it permanent.
//
// Keys that had other names before hash tags (LegacyKey) are read under
// both names where the old ones can exist (no cluster), so a worker of this
// release finds what one of the previous release wrote (V1).
type SessionData struct {
	rdb    redis.UniversalClient
	legacy bool
}

// SessionData returns the per-session store over this connection.
func (c *Client) SessionData() *SessionData { return NewSessionData(c.rdb) }

// NewSessionData returns the per-session store over rdb: one node, a
// Sentinel-backed master or a cluster.
func NewSessionData(rdb redis.UniversalClient) *SessionData {
	return &SessionData{rdb: rdb, legacy: readsLegacy(rdb)}
}

// old is key's name before hash tags, when it had one and it may exist.
func (s *SessionData) old(key string) (string, bool) {
	if !s.legacy {
		return "", false
	}
	return LegacyKey(key)
}

func sessionErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return err
	}
	return tools.Transient(err)
}

func expire(ctx context.Context, p redis.Pipeliner, key string, ttl time.Duration) {
	if ttl > 0 {
		p.Expire(ctx, key, ttl)
	} else {
		p.Persist(ctx, key)
	}
}

// GetString returns the string at key; a missing key is not an error.
func (s *SessionData) GetString(ctx context.Context, key string) (string, bool, error) {
	v, err := s.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, sessionErr(err)
	}
	return v, true, nil
}

// SetString sets the string at key.
func (s *SessionData) SetString(ctx context.Context, key, value string, ttl time.Duration) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, value, 0)
		expire(ctx, p, key, ttl)
		return nil
	})
	return sessionErr(err)
}

// HSet sets field of the hash at key.
func (s *SessionData) HSet(ctx context.Context, key, field, value string, ttl time.Duration) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, field, value)
		expire(ctx, p, key, ttl)
		return nil
	})
	return sessionErr(err)
}

// HGet returns field of the hash at key; a missing one is not an error.
func (s *SessionData) HGet(ctx context.Context, key, field string) (string, bool, error) {
	v, err := s.rdb.HGet(ctx, key, field).Result()
	if errors.Is(err, redis.Nil) {
		if old, ok := s.old(key); ok {
			return s.HGet(ctx, old, field)
		}
		return "", false, nil
	}
	if err != nil {
		return "", false, sessionErr(err)
	}
	return v, true, nil
}

// HKeys returns the fields of the hash at key; a missing key has none.
func (s *SessionData) HKeys(ctx context.Context, key string) ([]string, error) {
	f, err := s.rdb.HKeys(ctx, key).Result()
	if err != nil {
		return nil, sessionErr(err)
	}
	if old, ok := s.old(key); ok {
		of, err := s.rdb.HKeys(ctx, old).Result()
		if err != nil {
			return nil, sessionErr(err)
		}
		seen := make(map[string]bool, len(f))
		for _, k := range f {
			seen[k] = true
		}
		for _, k := range of {
			if !seen[k] {
				f = append(f, k)
			}
		}
	}
	return f, nil
}

// HDel removes field of the hash at key; a missing one is not an error.
func (s *SessionData) HDel(ctx context.Context, key, field string) error {
	if old, ok := s.old(key); ok {
		if err := s.rdb.HDel(ctx, old, field).Err(); err != nil {
			return sessionErr(err)
		}
	}
	return sessionErr(s.rdb.HDel(ctx, key, field).Err())
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

// AppendOnce adds record, a JSON object, to the list at key unless a record
// with the same "id" is already there (a retried attempt), then keeps the
// newest max records. It reports whether record was added.
func (s *SessionData) AppendOnce(ctx context.Context, key, id, record string, max int, ttl time.Duration) (bool, error) {
	n, err := appendOnceScript.Run(ctx, s.rdb, []string{key}, id, record, max, ttl.Milliseconds()).Int()
	if err != nil {
		return false, sessionErr(err)
	}
	return n == 1, nil
}

// List returns the newest n elements of the list at key, oldest first;
// n <= 0 means all of them.
func (s *SessionData) List(ctx context.Context, key string, n int) ([]string, error) {
	start := int64(0)
	if n > 0 {
		start = -int64(n)
	}
	l, err := s.rdb.LRange(ctx, key, start, -1).Result()
	if err != nil {
		return nil, sessionErr(err)
	}
	if old, ok := s.old(key); ok && (n <= 0 || len(l) < n) {
		// The old list's entries were all written before the new one's.
		ol, err := s.rdb.LRange(ctx, old, start, -1).Result()
		if err != nil {
			return nil, sessionErr(err)
		}
		l = append(ol, l...)
		if n > 0 && len(l) > n {
			l = l[len(l)-n:]
		}
	}
	return l, nil
}

// Operation records, in a hash of their own (opsKey, field = operation
// id): "done:<generation>" once that generation's write took effect,
// "fence:<generation>" once a reconciliation refused every older
// generation. The write and its record are one script, so a record is
// found exactly when the write happened, and a fenced attempt can never
// write afterwards.
//
// KEYS[3], when given, is the operations hash under its old name (V1),
// consulted as KEYS[2] is.
var hsetOpScript = redis.NewScript(`
for i = 2, #KEYS do
  local st = redis.call('HGET', KEYS[i], ARGV[3])
  if st then
    local kind, g = string.match(st, '^(%a+):(%d+)$')
    if kind == 'done' then
      return 'done'
    end
    if kind == 'fence' and tonumber(ARGV[4]) < tonumber(g) then
      return 'fenced'
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], 'done:' .. ARGV[4])
local ttl = tonumber(ARGV[5])
for _, k in ipairs({KEYS[1], KEYS[2]}) do
  if ttl > 0 then
    redis.call('PEXPIRE', k, ttl)
  else
    redis.call('PERSIST', k)
  end
end
return 'ok'
`)

// settleOpScript settles operation ARGV[1] in the operations hash KEYS[1]
// and, when given, KEYS[2], the same hash under its old name (V1): the
// fence goes into both, so an attempt of either release is refused.
var settleOpScript = redis.NewScript(`
local next = tonumber(ARGV[2]) + 1
for i = 1, #KEYS do
  local st = redis.call('HGET', KEYS[i], ARGV[1])
  if st then
    local kind, g = string.match(st, '^(%a+):(%d+)$')
    if kind == 'done' then
      return 'applied'
    end
    if kind == 'fence' and tonumber(g) > next then
      next = tonumber(g)
    end
  end
end
local ttl = tonumber(ARGV[3])
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], ARGV[1], 'fence:' .. next)
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return 'absent'
`)

// HSetOp sets field of the hash at key and records in opsKey that
// operation opID (of that generation) wrote it, in one atomic step. An
// operation already recorded as done writes nothing again; an attempt
// older than the operation's fence writes nothing and reports fenced.
// Both keys expire ttl after the write (never when ttl <= 0).
func (s *SessionData) HSetOp(ctx context.Context, key, field, value, opsKey, opID string, generation int, ttl time.Duration) (fenced bool, err error) {
	keys := []string{key, opsKey}
	if old, ok := s.old(opsKey); ok {
		keys = append(keys, old)
	}
	st, err := hsetOpScript.Run(ctx, s.rdb, keys, field, value, opID, generation, ttl.Milliseconds()).Text()
	if err != nil {
		return false, sessionErr(err)
	}
	return st == "fenced", nil
}

// SettleOp decides what became of operation opID after its attempt of
// that generation was lost: applied when its write is recorded; else it
// fences the operation against that generation and older ones, in the same
// atomic step, so that the lost attempt can never write, and reports it
// absent.
func (s *SessionData) SettleOp(ctx context.Context, opsKey, opID string, generation int, ttl time.Duration) (applied bool, err error) {
	keys := []string{opsKey}
	if old, ok := s.old(opsKey); ok {
		keys = append(keys, old)
	}
	st, err := settleOpScript.Run(ctx, s.rdb, keys, opID, generation, ttl.Milliseconds()).Text()
	if err != nil {
		return false, sessionErr(err)
	}
	return st == "applied", nil
}
