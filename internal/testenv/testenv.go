// Package testenv finds the real services that tests run against. In CI
// (CI=true) a missing service fails the test; elsewhere it skips with a
// message that says how to start it.
package testenv

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/toolround/toolround/round/names"
)

// InCI reports whether the tests run in CI, where nothing may be skipped.
func InCI() bool { return os.Getenv("CI") == "true" || os.Getenv("CI") == "1" }

// Unavailable fails the test in CI and skips it elsewhere.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("required service unavailable in CI: "+format, args...)
	}
	t.Skipf("service unavailable (run `make test`, which starts it): "+format, args...)
}

// RedisURL is REDIS_URL or the local default.
func RedisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Redis returns a client of the real Redis, closed when the test ends.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(RedisURL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		Unavailable(t, "redis at %s: %v", RedisURL(), err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TemporalAddress is TEMPORAL_ADDRESS or the local default.
func TemporalAddress() string {
	if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" {
		return a
	}
	return "127.0.0.1:7233"
}

// QuietLogger is a Temporal logger that writes nothing, for clients,
// replayers and test environments whose logs the tests do not read.
func QuietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// TemporalClient is a client of the Temporal server at TemporalAddress,
// with identity and a quiet logger, closed when t ends; a missing server
// fails or skips t as Unavailable does.
func TemporalClient(t testing.TB, identity string) tclient.Client {
	t.Helper()
	c, err := tclient.Dial(tclient.Options{HostPort: TemporalAddress(), Logger: QuietLogger(), Identity: identity})
	if err != nil {
		Unavailable(t, "temporal at %s: %v", TemporalAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// WriteHistory writes the history of execution runID of workflow id (the
// latest for "") to path, in the JSON of `temporal workflow show --output
// json` that the replay tests read.
func WriteHistory(t testing.TB, c tclient.Client, id, runID, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	t.Logf("%s: %d events", path, len(events))
}

// ReadHistory reads a history that WriteHistory wrote.
func ReadHistory(t testing.TB, path string) *historypb.History {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h, err := tclient.HistoryFromJSON(f, tclient.HistoryJSONOptions{})
	require.NoError(t, err, path)
	return h
}

// SearchAttributeFlags are the `temporal server start-dev` flags that
// register the search attributes rounds keep (T7); every dev server a test
// starts needs them, as scripts/lib.sh's does.
func SearchAttributeFlags() []string {
	return []string{
		"--search-attribute", names.SearchSession + "=Keyword",
		"--search-attribute", names.SearchWaiting + "=Bool",
		"--search-attribute", names.SearchWaitingCalls + "=Int",
		"--search-attribute", names.SearchParent + "=Keyword",
	}
}

// BareNamespace is the name of a namespace on the Temporal server at
// TemporalAddress without the search attributes of rounds: a new namespace
// has no custom attributes. It is created on first use and kept (creating
// it again is harmless); a missing server skips or fails the test as
// Unavailable does.
func BareNamespace(t testing.TB) string {
	t.Helper()
	const name = "toolround-test-bare"
	nc, err := tclient.NewNamespaceClient(tclient.Options{HostPort: TemporalAddress(), Logger: QuietLogger()})
	if err != nil {
		Unavailable(t, "temporal at %s: %v", TemporalAddress(), err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	// A new namespace reaches the frontend's cache within seconds.
	require.Eventually(t, func() bool {
		_, err := nc.Describe(ctx, name)
		return err == nil
	}, time.Minute, 200*time.Millisecond, "namespace %s did not become usable", name)
	return name
}

// RedisClusterURL is REDIS_CLUSTER_URL or the Redis Cluster that
// scripts/redis-ha.sh starts (O1).
func RedisClusterURL() string {
	if u := os.Getenv("REDIS_CLUSTER_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:7101?addr=127.0.0.1:7102&addr=127.0.0.1:7103&cluster=1"
}

// RedisSentinelURL is REDIS_SENTINEL_URL or the Sentinel set that
// scripts/redis-ha.sh starts (O1).
func RedisSentinelURL() string {
	if u := os.Getenv("REDIS_SENTINEL_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:7211/0?master_name=toolround&addr=127.0.0.1:7212&addr=127.0.0.1:7213"
}

// RedisHA is the URL of the Redis Cluster (cluster true) or the Sentinel
// set, after checking that it answers: a test fails in CI without it and
// skips elsewhere. `bash scripts/redis-ha.sh cluster|sentinel` starts them.
func RedisHA(t testing.TB, cluster bool) string {
	t.Helper()
	u, what := RedisSentinelURL(), "sentinel"
	if cluster {
		u, what = RedisClusterURL(), "cluster"
	}
	opts := &redis.UniversalOptions{}
	if cluster {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatalf("REDIS_CLUSTER_URL: %v", err)
		}
		q := pu.Query()
		q.Del("cluster")
		pu.RawQuery = q.Encode()
		co, err := redis.ParseClusterURL(pu.String())
		if err != nil {
			t.Fatalf("REDIS_CLUSTER_URL: %v", err)
		}
		opts.Addrs, opts.IsClusterMode = co.Addrs, true
	} else {
		fo, err := redis.ParseFailoverURL(u)
		if err != nil {
			t.Fatalf("REDIS_SENTINEL_URL: %v", err)
		}
		opts.Addrs, opts.MasterName = fo.SentinelAddrs, fo.MasterName
	}
	c := redis.NewUniversalClient(opts)
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		Unavailable(t, "redis %s at %s (bash scripts/redis-ha.sh %s): %v", what, u, what, err)
	}
	return u
}
