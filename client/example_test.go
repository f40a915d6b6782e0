package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// ExampleClient_Run runs one round through a worker and approves every call
// that waits for a person. It is the README's Go snippet; it needs a worker
// on the same TASK_QUEUE (make run, or bin/worker), so go test compiles it
// and does not run it. examples/quickstart is the whole program.
func ExampleClient_Run() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls := []round.ToolCall{{ID: "call_1", Type: "function",
		Function: round.FunctionCall{Name: "find_tools", Arguments: round.Arguments(`{"query":"select:calculate"}`)}}}
	if err := runRound(ctx, "run-1", 0, nil, calls); err != nil {
		log.Fatal(err)
	}
}

// runRound submits round i+1 of run runID with the model's calls and the
// run state the previous round returned, and prints each call's status.
func runRound(ctx context.Context, runID string, i int, state *round.RunState, calls []round.ToolCall) error {
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

	// One round: the model's tool calls, and the run state the previous round returned.
	in := &round.Input{SessionID: "quickstart", RunID: runID, Round: i + 1, Provider: "openai", State: state,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls}}
	res, err := c.Run(ctx, in, approve)
	if err != nil {
		return err
	}
	for _, r := range res.Results {
		fmt.Println(r.CallID, r.Tool, r.Status)
	}
	return nil
}

// TestREADMEGoSnippetIsTheExample: the README's client snippet is the code
// of ExampleClient_Run's round, line for line, so go test compiles what the
// README shows.
func TestREADMEGoSnippetIsTheExample(t *testing.T) {
	requireSnippetIn(t, "examples/quickstart/main.go", "example_test.go")
}

// requireSnippetIn finds the first ```go block of ../README.md after the
// text marker and fails unless its lines, indentation and blank lines
// aside, are consecutive lines of file.
func requireSnippetIn(t *testing.T, marker, file string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("the README does not name %s", marker)
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatalf("the README has no Go block after %s", marker)
	}
	block, _, _ = strings.Cut(block, "```")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, have := codeLines(block), codeLines(string(src))
	if len(want) == 0 {
		t.Fatalf("the README's Go block after %s is empty", marker)
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if strings.Join(have[i:i+len(want)], "\n") == strings.Join(want, "\n") {
			return
		}
	}
	t.Fatalf("the README's Go block after %s is not in %s as shown:\n%s", marker, file, strings.Join(want, "\n"))
}

// codeLines is s's lines without their indentation and without blank lines.
func codeLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// ExampleClient_NewRun drives a run's rounds through a handle (U9): each
// round goes with the state the one before returned, and a process that
// lost its handle reopens it with ResumeRun.
func ExampleClient_NewRun() {
	ctx := context.Background()
	c, err := client.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	run, err := c.ResumeRun(ctx, "my-session", "run-1", round.Input{Provider: "openai"})
	if err != nil {
		log.Fatal(err)
	}
	// The model's calls of its next turn (here, fetch a tool's schema).
	calls := []round.ToolCall{{ID: "call_1", Type: "function",
		Function: round.FunctionCall{Name: "find_tools", Arguments: round.Arguments(`{"query":"select:calculate"}`)}}}
	res, err := run.Calls(ctx, calls)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("round", run.Number(), "messages", len(res.Messages))
}
