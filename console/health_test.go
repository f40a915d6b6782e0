package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/health"
)

// O2: the console answers /healthz and /readyz without a token; /readyz
// follows Temporal, never Redis.
func TestConsoleHealthO2(t *testing.T) {
	var temporalErr error
	s, err := New(Options{Backend: newFake(), Tokens: []Token{{Secret: approverToken, Name: "alice", Role: RoleApprover}},
		Health: health.Checks{
			Temporal: func(context.Context) error { return temporalErr },
			Redis:    func(context.Context) error { return errors.New("no Redis") },
		}})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	status := func(path string) int {
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, status("/healthz"))
	require.Equal(t, http.StatusOK, status("/readyz"), "Redis down never makes the console unready")
	temporalErr = errors.New("unavailable")
	require.Equal(t, http.StatusServiceUnavailable, status("/readyz"))
	require.Equal(t, http.StatusOK, status("/healthz"))
}
