// Command quickstart is the README's Go example: two rounds of one agent run
// through a worker. Round 1 fetches two tools' schemas with find_tools; round
// 2 calls them through run_tool, and edit_file waits for approval, which the
// approval handler gives. It needs a worker on the same TASK_QUEUE
// (make run, or bin/worker).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// call is one tool call as a model emits it.
func call(id, name, args string) round.ToolCall {
	return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(args)}}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The same environment as the worker: TEMPORAL_ADDRESS, TASK_QUEUE, REDIS_URL, ...
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	// Called for each call that waits for a person; here it approves them all.
	approve := client.WithApprovalHandler(func(ctx context.Context, p client.PendingCall) client.Decision {
		fmt.Printf("approving %s %s\n", p.Tool, p.Arguments)
		return client.Decision{Approve: true}
	})

	runID := fmt.Sprintf("run-%d", time.Now().UnixNano())
	rounds := [][]round.ToolCall{
		{call("call_1", "find_tools", `{"query":"select:calculate,edit_file"}`)},
		{
			call("call_2", "run_tool", `{"name":"calculate","args":{"expression":"6*7"}}`),
			call("call_3", "run_tool", `{"name":"edit_file","args":{"path":"hello.txt","new_text":"hello from toolround\n"}}`),
		},
	}
	var state *round.RunState // what round 1 learned (fetched schemas, results) for round 2
	for i, calls := range rounds {
		// One round: the model's tool calls, and the run state the previous round returned.
		in := &round.Input{SessionID: "quickstart", RunID: runID, Round: i + 1, Provider: "openai", State: state,
			Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
		res, err := c.Run(ctx, in, approve)
		if err != nil {
			return err
		}
		for _, r := range res.Results {
			fmt.Printf("round %d  %s %-10s %-6s %.70q\n", in.Round, r.CallID, r.Tool, r.Status, r.Content)
		}
		state = res.State
		// res.Messages are the tool messages to append to the conversation.
	}
	return nil
}
