package envconf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTemporalFromEnv(t *testing.T) {
	for _, v := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TASK_QUEUE", "TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY",
		"TEMPORAL_TLS_CA", "TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_API_KEY", "REDIS_URL"} {
		t.Setenv(v, "")
	}
	require.Equal(t, Temporal{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "toolround"}, TemporalFromEnv())
	require.Equal(t, "redis://127.0.0.1:6379/0", RedisURL())

	t.Setenv("TEMPORAL_ADDRESS", " temporal:7233 ")
	t.Setenv("TEMPORAL_NAMESPACE", "ns")
	t.Setenv("TASK_QUEUE", "q")
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", "temporal.internal")
	t.Setenv("TEMPORAL_API_KEY", "k")
	t.Setenv("REDIS_URL", "none")
	got := TemporalFromEnv()
	require.Equal(t, Temporal{Address: "temporal:7233", Namespace: "ns", TaskQueue: "q",
		TLS: TLS{ServerName: "temporal.internal"}, APIKey: "k"}, got)
	require.Empty(t, RedisURL(), "REDIS_URL=none: no Redis")

	opts, err := got.ClientOptions(nil)
	require.NoError(t, err)
	require.Equal(t, "temporal:7233", opts.HostPort)
	require.Equal(t, "ns", opts.Namespace)
	require.NotNil(t, opts.ConnectionOptions.TLS, "an API key implies TLS")
	require.NotNil(t, opts.Credentials)
}

func TestTLSLoad(t *testing.T) {
	cfg, err := TLS{}.Load(false)
	require.NoError(t, err)
	require.Nil(t, cfg, "no settings: a plain connection")
	_, err = TLS{CertFile: "c.pem"}.Load(false)
	require.ErrorContains(t, err, "go together")
	_, err = TLS{CAFile: "/nonexistent/ca.pem"}.Load(false)
	require.ErrorContains(t, err, "TEMPORAL_TLS_CA")
}
