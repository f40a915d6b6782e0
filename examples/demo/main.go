// Command demo runs three rounds of one agent run through a worker, the way an
// agent would, and prints what happened to every call: a deferred schema, a
// concurrent fan-out with a repeated call, an approval, a serial command, and
// a result reused from an earlier round. It approves the waiting calls itself,
// as a person would with `starter approve`. With DEMO_TOOL_QUEUE, it calls a
// Python tool of one's own in a fourth round (owntool.go). Then it runs a durable agent
// run (agent.go) against a scripted model it serves itself, or against the
// model that LLM_BASE_URL names.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func call(id, name string, args any) round.ToolCall {
	b, _ := json.Marshal(args)
	return round.ToolCall{ID: id, Type: "function", Function: round.FunctionCall{Name: name, Arguments: round.Arguments(b)}}
}

func runTool(id, name string, args any) round.ToolCall {
	return call(id, "run_tool", map[string]any{"name": name, "args": args})
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	session := fmt.Sprintf("demo-%d", time.Now().Unix())

	rounds := [][]round.ToolCall{
		{
			call("call_1", "find_tools", map[string]any{"query": "select:calculate,read_files,edit_file,run_command"}),
			runTool("call_2", "find_files", map[string]any{"pattern": "*.md"}),
			call("call_3", "write_todo", map[string]any{"items": []any{map[string]any{"text": "show the demo", "done": false}}}),
			call("call_4", "read_files", map[string]any{"paths": []string{"notes.md"}}),
		},
		{
			runTool("call_5", "calculate", map[string]any{"expression": "6*7"}),
			runTool("call_6", "calculate", map[string]any{"expression": "2^10"}),
			runTool("call_7", "calculate", map[string]any{"expression": "sqrt(2)"}),
			runTool("call_8", "calculate", map[string]any{"expression": "6*7"}),
			runTool("call_9", "edit_file", map[string]any{"path": "notes.md", "new_text": "written by round 2\n"}),
			runTool("call_10", "run_command", map[string]any{"command": "wc -c notes.md && cat notes.md"}),
		},
		{
			runTool("call_11", "calculate", map[string]any{"expression": "6*7"}),
			runTool("call_12", "read_files", map[string]any{"paths": []string{"notes.md"}}),
		},
	}
	var state *round.RunState
	for i, calls := range rounds {
		in := &round.Input{SessionID: session, RunID: "run-1", Round: i + 1, Provider: "openai", State: state,
			Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
		fmt.Printf("\n=== round %d (%s): %d calls\n", in.Round, in.WorkflowID(), len(calls))
		start := time.Now()
		res, err := c.Run(ctx, in, client.WithApprovalHandler(approveAll))
		if err != nil {
			return err
		}
		printResult(res, time.Since(start))
		state = res.State
	}
	if demoToolQueue() != "" {
		if err := ownToolRound(ctx, c, session, state); err != nil {
			return err
		}
	}
	fmt.Println("\nEvery call got exactly one result. Try `bin/starter round examples/round.json` next.")
	return agentDemo(ctx, session)
}

// demoToolQueue is the task queue of the Python tool worker `make run`
// starts (DEMO_TOOL_QUEUE), or "" without one.
func demoToolQueue() string { return os.Getenv("DEMO_TOOL_QUEUE") }

// approveAll plays the person at the terminal: it approves the call that
// waits for a decision, and allows the rest of the round.
func approveAll(_ context.Context, p client.PendingCall) client.Decision {
	fmt.Printf("    waiting for approval: %s %q (%s): approving, and allowing the rest of the round\n", p.Tool, p.Subject, p.Reason)
	return client.Decision{Approve: true, AllowTurn: true}
}

func printResult(res *round.Result, took time.Duration) {
	for _, r := range res.Results {
		via := ""
		if r.ViaRunTool {
			via = " (via run_tool)"
		}
		fmt.Printf("  %-8s %-12s %-16s%s\n", r.CallID, r.Tool, r.Status, via)
		fmt.Printf("           %s\n", text.Preview(r.Content, 110))
	}
	fmt.Printf("  round finished in %v; the run state now remembers %d results and %d fetched schemas\n",
		took.Round(time.Millisecond), len(res.State.Dedupe), len(res.State.Fetched))
}
