package cache_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
)

// TestOpenNamesRedisAndItsAddress: a Redis that does not answer is named
// with its address and the dial's reason, never with the URL's password.
func TestOpenNamesRedisAndItsAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	c, err := cache.Open(context.Background(), cache.Options{URL: "redis://:hunter2@" + addr + "/0"})
	require.NotNil(t, c, "a client that reconnects on use")
	defer c.Close()
	require.ErrorIs(t, err, cache.ErrNotAnswering)
	require.Equal(t, "cache: Redis at "+addr+" does not answer: connect: connection refused", err.Error())
	require.NotContains(t, err.Error(), "hunter2")
}
