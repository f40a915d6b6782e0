package engine

import (
	"strings"
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

// TestPlacementConfig: WORKSPACE_PLACEMENT, HOST_ID and
// WORKSPACE_HOST_TIMEOUT (W4, W5): their defaults, and a clear error for
// a bad value of each.
func TestPlacementConfig(t *testing.T) {
	t.Setenv("REDIS_URL", "none")
	c, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Placement != "shared" || c.HostID != "" || c.HostTimeout != time.Minute {
		t.Fatalf("defaults: %q %q %s", c.Placement, c.HostID, c.HostTimeout)
	}
	t.Setenv("WORKSPACE_PLACEMENT", "host")
	t.Setenv("HOST_ID", "box-1")
	t.Setenv("WORKSPACE_HOST_TIMEOUT", "5s")
	if c, err = ConfigFromEnv(); err != nil || c.Placement != "host" || c.HostID != "box-1" || c.HostTimeout != 5*time.Second {
		t.Fatalf("set: %+v %v", c, err)
	}
	for name, bad := range map[string]string{"WORKSPACE_PLACEMENT": "everywhere", "HOST_ID": "a/b", "WORKSPACE_HOST_TIMEOUT": "1s"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, bad, err)
			}
		})
	}
}

// TestHostIDFollowsTheDisk: without HOST_ID the id is made once in
// TOOLS_WORKDIR/.toolround/host-id and read again on the next start.
func TestHostIDFollowsTheDisk(t *testing.T) {
	dir := t.TempDir()
	a, err := hostID(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hostID(dir)
	if err != nil || a != b || a == "" {
		t.Fatalf("%q %q %v", a, b, err)
	}
	if other, _ := hostID(t.TempDir()); other == a {
		t.Fatal("two disks, one id")
	}
}
