package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

func (e *env) reconcileSecret(t *testing.T, req tools.Request, args string) tools.Reconciliation {
	t.Helper()
	def, ok := e.reg.Lookup(tools.StoreSecret)
	require.True(t, ok)
	require.NotNil(t, def.Reconcile, "store_secret has a reconciler")
	req.Tool, req.Args = tools.StoreSecret, json.RawMessage(args)
	r, err := def.Reconcile(context.Background(), req)
	require.NoError(t, err)
	require.NotContains(t, r.Content, secretValue)
	return r
}

// SPEC R: a lost store_secret attempt is decided from Redis. Its write
// recorded under the operation id is the effect found; no record fences
// the operation, so the lost attempt stores nothing if it acts late, and
// the run once more stores the secret.
func TestStoreSecretLostAttemptIsReconciled(t *testing.T) {
	e := redisEnv(t)
	ctx := context.Background()
	args := `{"name":"API_KEY","value":"` + secretValue + `"}`

	t.Run("applied", func(t *testing.T) {
		session := e.session(t)
		req := tools.Request{SessionID: session, CallID: "c1", OperationID: "wf/run/c1"}
		e.mustCall(t, tools.StoreSecret, req, args) // the attempt whose report was lost
		r := e.reconcileSecret(t, req, args)
		require.Equal(t, tools.VerdictApplied, r.Verdict, r.Content)
		require.Contains(t, r.Content, "stored secret API_KEY")
		require.Contains(t, r.Content, "{{secret:API_KEY}}")
	})

	t.Run("absent, fenced, run once more", func(t *testing.T) {
		session := e.session(t)
		req := tools.Request{SessionID: session, CallID: "c2", OperationID: "wf/run/c2"}
		r := e.reconcileSecret(t, req, args)
		require.Equal(t, tools.VerdictAbsent, r.Verdict, r.Content)
		require.Contains(t, r.Content, "fenced")
		again := e.reconcileSecret(t, req, args)
		require.Equal(t, tools.VerdictAbsent, again.Verdict, "a retried reconciliation answers the same")

		_, err := e.call(t, tools.StoreSecret, req, args) // the lost attempt, late
		require.ErrorIs(t, err, secrets.ErrFenced)
		require.NotContains(t, err.Error(), secretValue)
		_, err = e.secrets.Get(ctx, session, "API_KEY")
		require.ErrorIs(t, err, secrets.ErrNotFound, "a fenced attempt stores nothing")

		req.Generation = 1
		e.mustCall(t, tools.StoreSecret, req, args)
		v, err := e.secrets.Get(ctx, session, "API_KEY")
		require.NoError(t, err)
		require.Equal(t, secretValue, v)
		require.Equal(t, tools.VerdictApplied, e.reconcileSecret(t, req, args).Verdict, "the run once more, lost in turn, is found")

		ops, err := e.rdb.HGetAll(ctx, secrets.OpsKey(session)).Result()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"wf/run/c2": "done:1"}, ops, "the record holds the operation, never the name or value")
	})

	t.Run("an operation stores once", func(t *testing.T) {
		session := e.session(t)
		req := tools.Request{SessionID: session, CallID: "c3", OperationID: "wf/run/c3"}
		e.mustCall(t, tools.StoreSecret, req, args)
		require.NoError(t, e.secrets.Put(ctx, session, "API_KEY", "changed-later-by-another-call"))
		e.mustCall(t, tools.StoreSecret, req, args) // a repeated delivery of the same attempt
		v, err := e.secrets.Get(ctx, session, "API_KEY")
		require.NoError(t, err)
		require.Equal(t, "changed-later-by-another-call", v, "the repeat did not write over a later change")
	})
}

// The write and the reconciliation race: whichever comes first, the
// verdict matches the store. Applied never leaves the secret missing;
// absent never lets the late attempt store it.
func TestStoreSecretReconcileRacesTheLateAttempt(t *testing.T) {
	e := redisEnv(t)
	ctx := context.Background()
	args := `{"name":"RACE","value":"` + secretValue + `"}`
	def, ok := e.reg.Lookup(tools.StoreSecret)
	require.True(t, ok)
	seen := map[tools.Verdict]int{}
	for i := range 40 {
		session := e.session(t)
		req := tools.Request{Tool: tools.StoreSecret, SessionID: session, CallID: "c", OperationID: fmt.Sprintf("wf/run/c%d", i), Args: json.RawMessage(args)}
		var wg sync.WaitGroup
		var r tools.Reconciliation
		var werr, rerr error
		wg.Add(2)
		go func() { defer wg.Done(); _, werr = def.Handler(ctx, req) }()
		go func() { defer wg.Done(); r, rerr = def.Reconcile(ctx, req) }()
		wg.Wait()
		require.NoError(t, rerr)
		_, gerr := e.secrets.Get(ctx, session, "RACE")
		switch r.Verdict {
		case tools.VerdictApplied:
			require.NoError(t, werr)
			require.NoError(t, gerr)
		case tools.VerdictAbsent:
			require.True(t, errors.Is(werr, secrets.ErrFenced), "%v", werr)
			require.ErrorIs(t, gerr, secrets.ErrNotFound)
		default:
			t.Fatalf("verdict %q: %s", r.Verdict, r.Content)
		}
		seen[r.Verdict]++
	}
	t.Logf("verdicts: %v", seen)
}

// Secrets kept in one worker's memory cannot be seen by another worker's
// reconciliation: the outcome stays unknown. A Redis that cannot be
// reached is an error (the Reconcile activity retries, then gives up as
// unknown), never a verdict.
func TestStoreSecretReconcileUnknownOrError(t *testing.T) {
	mem := newEnv(t, nil)
	args := `{"name":"API_KEY","value":"` + secretValue + `"}`
	r := mem.reconcileSecret(t, tools.Request{SessionID: "s", OperationID: "wf/run/c1"}, args)
	require.Equal(t, tools.VerdictUnknown, r.Verdict)
	require.Contains(t, r.Content, "memory only")

	down := newEnv(t, downRedis(t))
	def, _ := down.reg.Lookup(tools.StoreSecret)
	_, err := def.Reconcile(context.Background(), tools.Request{Tool: tools.StoreSecret, SessionID: "s", OperationID: "wf/run/c1", Args: json.RawMessage(args)})
	require.Error(t, err)
	require.NotContains(t, err.Error(), secretValue)
}
