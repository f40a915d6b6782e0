package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("MAX_CONCURRENT_TOOLS", "7")
	t.Setenv("CONFIRM_TIMEOUT", "90")
	t.Setenv("LOCAL_ACTIVITY_MAX", "0")
	t.Setenv("REDIS_URL", "none")
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", "x")
	t.Setenv("HTTP_IDEMPOTENT_HOSTS", " api.example.com, ,127.0.0.1:8080 ")
	c, err := ConfigFromEnv()
	require.NoError(t, err)
	require.Equal(t, 7, c.MaxConcurrent)
	require.Equal(t, 90*time.Second, c.ConfirmTimeout, "a bare number is seconds")
	require.Zero(t, c.LocalActivityMax)
	require.Empty(t, c.RedisURL, "none runs without Redis")
	require.Equal(t, "x", c.TLS.ServerName)
	require.Equal(t, "toolround", c.TaskQueue)
	require.Equal(t, []string{"api.example.com", "127.0.0.1:8080"}, c.IdempotentHosts)

	for name, bad := range map[string]string{"MAX_CONCURRENT_TOOLS": "-1", "CONFIRM_TIMEOUT": "soon", "HTTP_DENY_PRIVATE": "maybe", "LOG_LEVEL": "loud"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			_, err := ConfigFromEnv()
			require.ErrorContains(t, err, name)
		})
	}
}
