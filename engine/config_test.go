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

// TestConfirmTimeoutBounds: CONFIRM_TIMEOUT has the bounds of a round's
// confirm_timeout_seconds (1 s .. 7 days, T3); outside them the worker
// does not start, with one line that says why.
func TestConfirmTimeoutBounds(t *testing.T) {
	for v, want := range map[string]time.Duration{"1": time.Second, "1s": time.Second, "604800": 7 * 24 * time.Hour, "168h": 7 * 24 * time.Hour, "30m": 30 * time.Minute} {
		t.Setenv("CONFIRM_TIMEOUT", v)
		c, err := ConfigFromEnv()
		require.NoError(t, err, v)
		require.Equal(t, want, c.ConfirmTimeout, v)
	}
	for _, v := range []string{"0", "0s", "999ms", "604801", "168h0m1s", "169h", "8760h", "9223372036854775807", "-1", "-5s"} {
		t.Setenv("CONFIRM_TIMEOUT", v)
		_, _, err := FromEnv()
		require.Error(t, err, v)
		require.Contains(t, err.Error(), "CONFIRM_TIMEOUT", v)
		require.Contains(t, err.Error(), "7 days", v)
		require.NotContains(t, err.Error(), "\n", v)
	}
}
