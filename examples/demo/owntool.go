package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// ownToolRound calls a tool of one's own in a round: lookup_order, a Python
// function of examples/python/orders.py that `make run` serves with `python
// -m toolround.tools serve` on the task queue queue (DEMO_TOOL_QUEUE), which
// the worker runs (TOOL_QUEUES). It waits until the worker lists the tool
// as served, as `bin/starter tools --worker` shows it.
func ownToolRound(ctx context.Context, c *client.Client, session string, state *round.RunState) error {
	const tool = "lookup_order"
	queue := demoToolQueue()
	fmt.Printf("\n=== your own tool: %s, a Python function served by a tool worker on task queue %s\n", tool, queue)
	deadline := time.Now().Add(time.Minute)
	for {
		ts, err := c.WorkerTools(ctx, "openai")
		if err != nil {
			return err
		}
		served := false
		for _, q := range ts.Queues {
			served = served || q.Queue == queue && q.Available && slices.Contains(q.Tools, tool)
		}
		if served {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no tool worker served %s on task queue %s within a minute (see .run/toolworker.log)", tool, queue)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A user tool is a deferred tool (Y2): the model loads its schema,
	// then calls it.
	for i, calls := range [][]round.ToolCall{
		{call("call_13", "find_tools", map[string]any{"query": "select:" + tool})},
		{runTool("call_14", tool, map[string]any{"order_id": "A-1001"})},
	} {
		in := &round.Input{SessionID: session, RunID: "run-1", Round: 4 + i, Provider: "openai", State: state,
			Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
		fmt.Printf("=== round %d (%s): %d call\n", in.Round, in.WorkflowID(), len(calls))
		start := time.Now()
		res, err := c.Run(ctx, in, client.WithApprovalHandler(approveAll))
		if err != nil {
			return err
		}
		printResult(res, time.Since(start))
		state = res.State
	}
	return nil
}
