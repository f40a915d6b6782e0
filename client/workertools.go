package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// WorkerToolsTimeout bounds WorkerTools' wait for a worker's answer.
const WorkerToolsTimeout = 20 * time.Second

// WorkerTools asks a worker of the client's task queue for the tools it
// offers provider: its built-ins, its MCP servers' tools and its
// TOOLS_CONFIG tools, which the caller's own configuration may not know.
// It fails with ErrNoWorker when no worker polls the task queue, and when
// none answers within WorkerToolsTimeout (a worker older than this call
// does not know it).
func (c *Client) WorkerTools(ctx context.Context, provider string) (tools.Toolset, error) {
	var ts tools.Toolset
	if err := c.requireWorkerOn(ctx, c.opts.TaskQueue); err != nil {
		return ts, err
	}
	ctx, cancel := context.WithTimeout(ctx, WorkerToolsTimeout)
	defer cancel()
	var id [8]byte
	_, _ = rand.Read(id[:])
	run, err := c.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                       "toolcatalog/" + hex.EncodeToString(id[:]),
		TaskQueue:                c.opts.TaskQueue,
		WorkflowExecutionTimeout: WorkerToolsTimeout,
		StaticSummary:            "tools for provider " + provider,
	}, names.WorkflowToolCatalog, provider)
	if err != nil {
		return ts, fmt.Errorf("ask a worker of task queue %s for its tools: %w", c.opts.TaskQueue, err)
	}
	if err := run.Get(ctx, &ts); err != nil {
		return ts, fmt.Errorf("no worker answered on task queue %s within %s (a worker older than this starter cannot list its tools): %w",
			c.opts.TaskQueue, WorkerToolsTimeout, err)
	}
	return ts, nil
}
