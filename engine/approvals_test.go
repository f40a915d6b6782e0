package engine

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/secrets"
)

// TestAutoApproveSetting: AUTO_APPROVE=deny makes the worker ignore the
// rounds' auto_approve, through the catalog snapshot; a typo is an error
// (T5).
func TestAutoApproveSetting(t *testing.T) {
	t.Setenv(approval.EnvAutoApprove, "deny")
	cfg, err := ConfigFromEnv()
	require.NoError(t, err)
	require.True(t, cfg.DenyAutoApprove)

	t.Setenv(approval.EnvAutoApprove, "")
	cfg, err = ConfigFromEnv()
	require.NoError(t, err)
	require.False(t, cfg.DenyAutoApprove)

	t.Setenv(approval.EnvAutoApprove, "deny-please")
	_, err = ConfigFromEnv()
	require.ErrorContains(t, err, "AUTO_APPROVE")

	e := newTestEngine(t, Config{DenyAutoApprove: true})
	require.True(t, e.Catalog.Options.DenyAutoApprove)
}

// TestRuleKeyIsLoadedAtStart: the worker loads the rule key once, from
// TOOLROUND_RULE_KEY, and hands it to the activities that check and sign
// rules; a bad key stops the start (T4).
func TestRuleKeyIsLoadedAtStart(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	e := newTestEngine(t, Config{RuleKey: approval.KeyConfig{Key: base64.StdEncoding.EncodeToString(key)}})
	require.Equal(t, key, e.Activities.RuleKey)

	dir := t.TempDir()
	_, err := New(context.Background(), Config{
		Workdir: filepath.Join(dir, "workdir"), Secrets: secrets.Config{KeyFile: filepath.Join(dir, "secret.key")},
		RuleKey: approval.KeyConfig{Key: "short"},
	}, nil)
	require.ErrorContains(t, err, "signs allow rules")
}

func newTestEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	dir := t.TempDir()
	cfg.Workdir = filepath.Join(dir, "workdir")
	cfg.Secrets = secrets.Config{KeyFile: filepath.Join(dir, "secret.key")}
	if cfg.RuleKey == (approval.KeyConfig{}) {
		cfg.RuleKey = approval.KeyConfig{KeyFile: filepath.Join(dir, "rule.key")}
	}
	e, err := New(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

// TestWorkerLimitsSetting: WORKER_LIMITS is read strictly, like a round's
// limits, and reaches the catalog that records it in every round (B1).
func TestWorkerLimitsSetting(t *testing.T) {
	t.Setenv(EnvWorkerLimits, `{"max_calls": 50, "max_seconds": 3600}`)
	cfg, err := ConfigFromEnv()
	require.NoError(t, err)
	require.Equal(t, round.Limits{MaxCalls: 50, MaxSeconds: 3600}, cfg.Limits)

	for _, bad := range []string{`{"max_calls": -1}`, `{"max_calls": 0}`, `{"max_call": 5}`, `max_calls=5`} {
		t.Setenv(EnvWorkerLimits, bad)
		_, err = ConfigFromEnv()
		require.ErrorContains(t, err, "WORKER_LIMITS", bad)
	}

	e := newTestEngine(t, Config{Limits: round.Limits{MaxWrites: 7}})
	require.Equal(t, int64(7), e.Catalog.Options.WorkerLimits.MaxWrites)
}
