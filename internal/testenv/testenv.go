// Package testenv finds the real services that tests run against. In CI
// (CI=true) a missing service fails the test; elsewhere it skips with a
// message that says how to start it.
package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
