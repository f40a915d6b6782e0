package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// TestStartWorkerFailsBeforeDialing: a tool the registry refuses stops the
// start before any connection is tried (the address here has no server).
func TestStartWorkerFailsBeforeDialing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{
		TemporalAddress: "127.0.0.1:1",
		TaskQueue:       "unused",
		Workdir:         filepath.Join(dir, "workdir"),
		Secrets:         secrets.Config{KeyFile: filepath.Join(dir, "keys", "secret.key")},
	}
	dup := tools.Definition{
		Name: "calculate", Description: "a second calculate", Parameters: []byte(`{"type":"object"}`),
		Handler: func(context.Context, tools.Request) (tools.Result, error) { return tools.Text(""), nil },
	}
	start := time.Now()
	w, err := StartWorker(context.Background(), cfg, nil, WithTools(dup))
	require.Nil(t, w)
	require.ErrorContains(t, err, "calculate")
	require.Less(t, time.Since(start), 10*time.Second, "no wait for a server")
}

// TestStartWorkerWithOptions runs a worker against the real Temporal server
// with an extra workflow, and checks that it polls the configured task queue.
func TestStartWorkerWithOptions(t *testing.T) {
	addr := os.Getenv("TEMPORAL_ADDRESS")
	if addr == "" {
		addr = "127.0.0.1:7233"
	}
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", addr, err)
	} else {
		_ = c.Close()
	}
	dir := t.TempDir()
	cfg := Config{
		TemporalAddress: addr,
		Namespace:       "default",
		TaskQueue:       fmt.Sprintf("engine-test-%d", time.Now().UnixNano()),
		Workdir:         filepath.Join(dir, "workdir"),
		Secrets:         secrets.Config{KeyFile: filepath.Join(dir, "keys", "secret.key")},
	}
	echo := func(_ workflow.Context, s string) (string, error) { return "echo " + s, nil }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, cfg, nil, WithWorkflow("EngineTestEcho", echo))
	require.NoError(t, err)
	defer w.Stop()
	require.GreaterOrEqual(t, w.Bound, 3, "MAX_CONCURRENT_TOOLS defaults to max(3, cores/2)")

	run, err := w.Client.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{TaskQueue: cfg.TaskQueue}, "EngineTestEcho", "hi")
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, "echo hi", got)
}
