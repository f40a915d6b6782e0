package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// env is a registry with the agent tools over one backend.
type env struct {
	reg     *tools.Registry
	rdb     *redis.Client // nil for the in-process store
	st      Store
	cfg     Config
	secrets *secrets.Store
	key     []byte
}

func newEnv(t *testing.T, rdb *redis.Client, tweak ...func(*Config)) *env {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	var opts secrets.StoreOptions
	cfg := Config{}
	if rdb != nil {
		cfg.Store = cache.NewSessionData(rdb)
		opts.Hashes = cache.NewSessionData(rdb)
	}
	store, err := secrets.NewStore(key, opts)
	require.NoError(t, err)
	cfg.Secrets = store
	for _, f := range tweak {
		f(&cfg)
	}
	defs, ts, err := build(cfg)
	require.NoError(t, err)
	reg := tools.NewRegistry()
	for _, d := range defs {
		require.NoError(t, reg.Register(d))
	}
	return &env{reg: reg, rdb: rdb, st: ts.st, cfg: ts.cfg, secrets: store, key: key}
}

// redisEnv uses the real Redis (skipped outside CI when it is not running).
func redisEnv(t *testing.T, tweak ...func(*Config)) *env {
	t.Helper()
	return newEnv(t, testenv.Redis(t), tweak...)
}

var sessionSeq atomic.Int64

// session returns a session id no other test uses, and removes its keys
// when the test ends.
func (e *env) session(t *testing.T) string {
	t.Helper()
	id := fmt.Sprintf("test-agent-%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "."), time.Now().UnixNano(), sessionSeq.Add(1))
	if e.rdb != nil {
		t.Cleanup(func() {
			keys := []string{todoKey(id), errorsKey(id), resultKey(id), secrets.Key(id), secrets.OpsKey(id), tools.HistoryKey(id)}
			_ = e.rdb.Del(context.Background(), keys...).Err()
		})
	}
	return id
}

// call validates args against the tool's schema, as pass 1 does, and runs
// the handler.
func (e *env) call(t *testing.T, name string, req tools.Request, args string) (tools.Result, error) {
	t.Helper()
	def, ok := e.reg.Lookup(name)
	require.True(t, ok, "tool %s is registered", name)
	require.Empty(t, tools.Validate(def.Parameters, json.RawMessage(args)), "arguments %s are valid for %s", args, name)
	req.Args = json.RawMessage(args)
	if req.CallID == "" {
		req.CallID = fmt.Sprintf("call_%d", sessionSeq.Add(1))
	}
	return def.Handler(context.Background(), req)
}

func (e *env) mustCall(t *testing.T, name string, req tools.Request, args string) string {
	t.Helper()
	res, err := e.call(t, name, req, args)
	require.NoError(t, err)
	return res.Content
}

func backends(t *testing.T) map[string]func(t *testing.T) *env {
	return map[string]func(t *testing.T) *env{
		"redis":  func(t *testing.T) *env { return redisEnv(t) },
		"memory": func(t *testing.T) *env { return newEnv(t, nil) },
	}
}

// downRedis is a client of an address where nothing listens.
func downRedis(t *testing.T) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
