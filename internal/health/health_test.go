package health

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, path string) (int, Report) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var rep Report
	if path == "/readyz" {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &rep))
	}
	return rec.Code, rep
}

// O2: /readyz is 200 while Temporal answers, whatever Redis does (its
// state is in the body); 503 when Temporal does not answer or the process
// drains. /healthz is 200 in every case.
func TestReadyFollowsTemporalNotRedisO2(t *testing.T) {
	var temporalErr, redisErr error
	h := New(Checks{
		Temporal: func(context.Context) error { return temporalErr },
		Redis:    func(context.Context) error { return redisErr },
	})
	code, rep := get(t, h, "/readyz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, Report{Ready: true, Temporal: "ok", Redis: "ok"}, rep)

	redisErr = errors.New("connection refused")
	code, rep = get(t, h, "/readyz")
	require.Equal(t, http.StatusOK, code, "Redis never decides the status")
	require.Equal(t, "down: connection refused", rep.Redis)

	temporalErr = errors.New("unavailable")
	code, rep = get(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.False(t, rep.Ready)
	require.Equal(t, "down: unavailable", rep.Temporal)
	code, _ = get(t, h, "/healthz")
	require.Equal(t, http.StatusOK, code, "alive even when not ready")

	temporalErr = nil
	h.Drain()
	code, rep = get(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.True(t, rep.Draining)
}

// A check that hangs is cut at the timeout, so a probe never hangs.
func TestAHangingCheckIsCut(t *testing.T) {
	h := New(Checks{Temporal: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, Timeout: 1})
	code, rep := get(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "down: context deadline exceeded", rep.Temporal)
	require.Equal(t, "none", rep.Redis)
}
