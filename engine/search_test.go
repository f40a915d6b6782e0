package engine

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools/secrets"
)

func requireTemporal(t *testing.T) string {
	t.Helper()
	addr := testenv.TemporalAddress()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", addr, err)
	}
	_ = c.Close()
	return addr
}

// TestWorkerRefusesANamespaceWithoutTheSearchAttributes (T7): a namespace
// without the inbox's attributes stops the worker before it polls, with one
// line that names them and the command that adds them.
func TestWorkerRefusesANamespaceWithoutTheSearchAttributes(t *testing.T) {
	addr := requireTemporal(t)
	ns := testenv.BareNamespace(t)
	dir := t.TempDir()
	cfg := Config{
		TemporalAddress: addr,
		Namespace:       ns,
		TaskQueue:       "unused",
		Workdir:         filepath.Join(dir, "workdir"),
		Secrets:         secrets.Config{KeyFile: filepath.Join(dir, "keys", "secret.key")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, cfg, nil)
	require.Nil(t, w)
	require.ErrorIs(t, err, ErrSearchAttributes)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	for _, want := range []string{
		"ToolroundSession (Keyword)", "ToolroundWaiting (Bool)", "ToolroundWaitingCalls (Int)", "ToolroundParent (Keyword)",
		"temporal operator search-attribute create --address " + addr + " --namespace " + ns + " --name ToolroundSession --name ToolroundParent --type Keyword",
		"--name ToolroundWaiting --type Bool", "--name ToolroundWaitingCalls --type Int",
	} {
		require.Contains(t, msg, want)
	}
	require.Equal(t, 3, strings.Count(msg, "search-attribute create"))
}

// TestCheckSearchAttributesAcceptsARegisteredNamespace: the namespace the
// scripts set up has them.
func TestCheckSearchAttributesAcceptsARegisteredNamespace(t *testing.T) {
	addr := requireTemporal(t)
	c, err := Dial(Config{TemporalAddress: addr, Namespace: "default"}, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, CheckSearchAttributes(context.Background(), c, "default", addr),
		"register them on the dev server with scripts/lib.sh's ensure_search_attributes")
}
