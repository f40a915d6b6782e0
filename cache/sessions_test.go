package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/tools"
)

func TestSessionDataOnRealRedis(t *testing.T) {
	c := open(t, cache.Options{})
	s, rdb, ctx := c.SessionData(), c.Redis(), context.Background()
	str, hash, list := unique(t)+":str", unique(t)+":hash", unique(t)+":list"
	cleanup(t, rdb, str, hash, list)

	_, ok, err := s.GetString(ctx, str)
	require.NoError(t, err)
	require.False(t, ok, "a missing key is a miss, not an error")
	require.NoError(t, s.SetString(ctx, str, "v", time.Hour))
	v, ok, err := s.GetString(ctx, str)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v", v)
	requireTTL(t, rdb, str, time.Hour)
	require.NoError(t, s.SetString(ctx, str, "w", -1))
	ttl, err := rdb.TTL(ctx, str).Result()
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), ttl, "ttl <= 0 keeps the key")

	_, ok, err = s.HGet(ctx, hash, "f")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, s.HSet(ctx, hash, "f", "x", time.Hour))
	v, ok, err = s.HGet(ctx, hash, "f")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "x", v)
	requireTTL(t, rdb, hash, time.Hour)

	for i, rec := range []string{`{"id":"a"}`, `{"id":"b"}`, `{"id":"a"}`, `{"id":"c"}`} {
		added, err := s.AppendOnce(ctx, list, string(rec[7]), rec, 2, time.Hour)
		require.NoError(t, err)
		require.Equal(t, i != 2, added, "record %d", i)
	}
	all, err := s.List(ctx, list, 0)
	require.NoError(t, err)
	require.Equal(t, []string{`{"id":"b"}`, `{"id":"c"}`}, all, "the newest max records")
	last, err := s.List(ctx, list, 1)
	require.NoError(t, err)
	require.Equal(t, []string{`{"id":"c"}`}, last)

	// An error Redis answers (a hash read of a string) is not worth a retry.
	_, _, err = s.HGet(ctx, str, "f")
	require.ErrorContains(t, err, "WRONGTYPE")
	require.False(t, tools.IsTransient(err))
}

func TestSessionDataOfADownRedisIsTransient(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: deadAddress(t), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s := cache.NewSessionData(rdb)
	err := s.SetString(context.Background(), "toolround:todo:x", "v", time.Hour)
	require.Error(t, err)
	require.True(t, tools.IsTransient(err), "a Redis that cannot be reached is worth a retry: %v", err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.List(ctx, "toolround:errors:x", 0)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, tools.IsTransient(err))
}
