package secrets

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
)

func uniqueSession(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	id := fmt.Sprintf("test-secrets-%s-%d", t.Name(), time.Now().UnixNano())
	if rdb != nil {
		t.Cleanup(func() { _ = rdb.Del(context.Background(), Key(id)).Err() })
	}
	return id
}

func TestStore(t *testing.T) {
	backends := []struct {
		name  string
		redis func(t *testing.T) *redis.Client
	}{
		{name: "redis", redis: func(t *testing.T) *redis.Client { return testenv.Redis(t) }},
		{name: "memory", redis: func(t *testing.T) *redis.Client { return nil }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := b.redis(t)
			key := testKey(t)
			s, err := NewStore(key, StoreOptions{Hashes: hashes(rdb)})
			require.NoError(t, err)
			require.Equal(t, rdb != nil, s.Shared())
			session := uniqueSession(t, rdb)

			require.NoError(t, s.Put(ctx, session, "PLAIN", "hunter2-and-more"))
			sealed, err := Seal(key, "s3cret-value")
			require.NoError(t, err)
			require.NoError(t, s.Put(ctx, session, "SEALED", sealed))

			got, err := s.Get(ctx, session, "PLAIN")
			require.NoError(t, err)
			require.Equal(t, "hunter2-and-more", got)
			got, err = s.Get(ctx, session, "SEALED")
			require.NoError(t, err)
			require.Equal(t, "s3cret-value", got)

			_, err = s.Get(ctx, session, "MISSING")
			require.True(t, errors.Is(err, ErrNotFound), err)
			require.ErrorContains(t, err, "store it with store_secret")
			_, err = s.Get(ctx, session+"-other", "PLAIN")
			require.True(t, errors.Is(err, ErrNotFound), "secrets are per session")

			otherSealed, err := Seal(testKey(t), "x-long-enough")
			require.NoError(t, err)
			err = s.Put(ctx, session, "FOREIGN", otherSealed)
			require.True(t, errors.Is(err, ErrOpen), err)

			names, err := s.Names(ctx, session)
			require.NoError(t, err)
			require.Equal(t, []string{"PLAIN", "SEALED"}, names)

			require.NoError(t, s.Put(ctx, session, "PLAIN", "changed-value"))
			got, err = s.Get(ctx, session, "PLAIN")
			require.NoError(t, err)
			require.Equal(t, "changed-value", got)

			require.NoError(t, s.Delete(ctx, session, "PLAIN"))
			require.NoError(t, s.Delete(ctx, session, "PLAIN"))
			_, err = s.Get(ctx, session, "PLAIN")
			require.True(t, errors.Is(err, ErrNotFound))

			other, err := NewStore(testKey(t), StoreOptions{Hashes: hashes(rdb)})
			require.NoError(t, err)
			if rdb != nil {
				_, err = other.Get(ctx, session, "SEALED")
				require.True(t, errors.Is(err, ErrOpen), "a store with another key cannot read: %v", err)
			}
		})
	}
}

func TestStoreKeepsOnlySealedValuesInRedis(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	s, err := NewStore(testKey(t), StoreOptions{Hashes: hashes(rdb), TTL: time.Hour})
	require.NoError(t, err)
	session := uniqueSession(t, rdb)
	require.NoError(t, s.Put(ctx, session, "TOKEN", "hunter2-and-more"))

	raw, err := rdb.HGet(ctx, Key(session), "TOKEN").Result()
	require.NoError(t, err)
	require.True(t, IsSealed(raw))
	require.NotContains(t, raw, "hunter2-and-more")

	ttl, err := rdb.TTL(ctx, Key(session)).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 50*time.Minute)
	require.LessOrEqual(t, ttl, time.Hour)
}

func TestStoreNegativeTTLNeverExpires(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	s, err := NewStore(testKey(t), StoreOptions{Hashes: hashes(rdb), TTL: -1})
	require.NoError(t, err)
	session := uniqueSession(t, rdb)
	require.NoError(t, s.Put(ctx, session, "TOKEN", "value-of-token"))
	ttl, err := rdb.TTL(ctx, Key(session)).Result()
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), ttl)
}

func TestNewStoreRejectsBadKey(t *testing.T) {
	_, err := NewStore([]byte("short"), StoreOptions{})
	require.ErrorContains(t, err, "want 32")
}

func TestStoreRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := NewStore(testKey(t), StoreOptions{Hashes: hashes(rdb)})
	require.NoError(t, err)
	err = s.Put(context.Background(), "s", "TOKEN", "hunter2-and-more")
	require.ErrorContains(t, err, `secrets: put "TOKEN"`)
	require.NotContains(t, err.Error(), "hunter2-and-more")
	require.False(t, tools.IsTransient(err), "a failed put is not retried")
	_, err = s.Get(context.Background(), "s", "TOKEN")
	require.ErrorContains(t, err, `secrets: get "TOKEN"`)
	require.False(t, errors.Is(err, ErrNotFound))
	require.False(t, tools.IsTransient(err))
}

func TestStoreRefusesShortValues(t *testing.T) {
	ctx := context.Background()
	key := testKey(t)
	s, err := NewStore(key, StoreOptions{})
	require.NoError(t, err)
	for _, v := range []string{"x", "1234567", "äöüäöüä"} {
		err := s.Put(ctx, "s", "SHORT", v)
		require.True(t, errors.Is(err, ErrTooShort), err)
		require.ErrorContains(t, err, "shorter than 8 characters")
		sealed, err := Seal(key, v)
		require.NoError(t, err)
		require.True(t, errors.Is(s.Put(ctx, "s", "SHORT", sealed), ErrTooShort), "a sealed value is opened and measured")
	}
	_, err = s.Get(ctx, "s", "SHORT")
	require.True(t, errors.Is(err, ErrNotFound))
	require.NoError(t, s.Put(ctx, "s", "OK", "äöüäöüäö"), "eight characters are enough, whatever their bytes")
}

// hashes is the worker's storage over rdb; nil (in process) when rdb is nil.
func hashes(rdb *redis.Client) Hashes {
	if rdb == nil {
		return nil
	}
	return cache.NewSessionData(rdb)
}

// QueueKey is the same in every language's tool worker: this vector is in
// clients/python/tests/test_tools.py and clients/typescript's tools tests.
func TestQueueKeyVectorY3(t *testing.T) {
	master := bytes.Repeat([]byte{1}, 32)
	require.Equal(t, "ee83db82028700846772d02583cd28b4cffcbd96f5d8844ea2dcb8190d7ae674", hex.EncodeToString(QueueKey(master, "orders")))
	require.NotEqual(t, QueueKey(master, "orders"), QueueKey(master, "orders2"))
}
