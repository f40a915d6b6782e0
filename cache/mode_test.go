package cache_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
)

// TestParseModeO1: REDIS_URL's three forms, cluster=1 taken out before
// ParseClusterURL sees it, and a cluster's database other than 0 refused.
func TestParseModeO1(t *testing.T) {
	tests := []struct {
		url  string
		mode cache.Mode
		out  string
	}{
		{"redis://127.0.0.1:6379/0", cache.Single, "redis://127.0.0.1:6379/0"},
		{"rediss://u:p@r.example:6380/2", cache.Single, "rediss://u:p@r.example:6380/2"},
		{"redis://s1:26379/0?master_name=m&addr=s2:26379", cache.Sentinel, "redis://s1:26379/0?master_name=m&addr=s2:26379"},
		{"redis://n1:6379?addr=n2:6379&cluster=1", cache.Cluster, "redis://n1:6379?addr=n2%3A6379"},
		{"redis://n1:6379/0?cluster=true", cache.Cluster, "redis://n1:6379"},
		{"redis://n1:6379/?cluster=1&db=0", cache.Cluster, "redis://n1:6379"},
		{"redis://n1:6379/3?cluster=0", cache.Single, "redis://n1:6379/3"},
	}
	for _, tt := range tests {
		mode, out, err := cache.ParseMode(tt.url)
		require.NoError(t, err, tt.url)
		require.Equal(t, tt.mode, mode, tt.url)
		require.Equal(t, tt.out, out, tt.url)
	}
	for _, bad := range []string{
		"redis://n1:6379/3?cluster=1",
		"redis://n1:6379?cluster=1&db=2",
		"redis://n1:6379?cluster=maybe",
		"redis://n1:6379?cluster=1&master_name=m",
	} {
		_, _, err := cache.ParseMode(bad)
		require.ErrorContains(t, err, "cache: REDIS_URL: ", bad)
	}
}

// TestOpenMakesTheClientOfEachFormO1: the client Open makes is the one
// go-redis makes for that form; a cluster on database 3 is refused at
// start, without the URL's password in the error.
func TestOpenMakesTheClientOfEachFormO1(t *testing.T) {
	dead := deadAddress(t)
	c, _ := cache.Open(context.Background(), cache.Options{URL: "redis://" + dead + "/0?master_name=m"})
	require.NotNil(t, c)
	require.Equal(t, cache.Sentinel, c.Mode())
	_, ok := c.Redis().(*redis.Client)
	require.True(t, ok, "a failover client is a *redis.Client")
	require.NoError(t, c.Close())

	c, _ = cache.Open(context.Background(), cache.Options{URL: "redis://" + dead + "?cluster=1"})
	require.NotNil(t, c)
	require.Equal(t, cache.Cluster, c.Mode())
	_, ok = c.Redis().(*redis.ClusterClient)
	require.True(t, ok)
	require.NoError(t, c.Close())

	c, err := cache.Open(context.Background(), cache.Options{URL: "redis://:hunter2@" + dead + "/3?cluster=1"})
	require.Nil(t, c)
	require.ErrorContains(t, err, "a Redis Cluster has only database 0")
	require.NotContains(t, err.Error(), "hunter2")
}

func TestLegacyKey(t *testing.T) {
	for key, want := range map[string]string{
		"toolround:{s-1}:events":                  "toolround:events:s-1",
		"toolround:{s-1}:history":                 "toolround:history:s-1",
		"toolround:{s-1}:secret":                  "toolround:secret:s-1",
		"toolround:{s-1}:secretops":               "toolround:secretops:s-1",
		"toolround:{s-1}:event-published:e-1":     "toolround:event-published:s-1:e-1",
		"toolround:{s-1}:history-appended:abc123": "toolround:history-appended:s-1:abc123",
	} {
		old, ok := cache.LegacyKey(key)
		require.True(t, ok, key)
		require.Equal(t, want, old)
	}
	for _, key := range []string{"toolround:todo:s-1", "toolround:{s-1}:todo", "toolround:blob:ab", "toolround:mcp:grants"} {
		_, ok := cache.LegacyKey(key)
		require.False(t, ok, key)
	}
}
