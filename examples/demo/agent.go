package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// agentDemo runs durable agent runs (A1): the model call as an activity,
// each round of tool calls as a child round, the model's tokens streamed to
// the session's events. Without LLM_BASE_URL the model is a scripted one
// that the demo serves on loopback (no network), and one run goes to each
// model API (F4: chat completions, the Messages API, the Responses API);
// with it, one run drives that model through LLM_API's API. Each run gets a
// worker of its own, in this process, on a task queue of its own, so that
// it knows the model and the API.
func agentDemo(ctx context.Context, session string) error {
	if os.Getenv(llm.EnvBaseURL) != "" {
		fmt.Printf("\n=== agent run with the model %s at %s\n", os.Getenv(llm.EnvModel), os.Getenv(llm.EnvBaseURL))
		return agentRun(ctx, session, "agent-1", agentTask)
	}
	// The model types a word each 25 ms.
	base, stop, err := scripted.Serve(scripted.Func(demoScript), scripted.Options{Typing: 25 * time.Millisecond})
	if err != nil {
		return err
	}
	defer stop()
	if err := setenv(llm.EnvBaseURL, base, llm.EnvModel, "scripted"); err != nil {
		return err
	}
	for _, api := range []string{"chat", "anthropic", "responses"} {
		if err := setenv(llm.EnvAPI, api); err != nil {
			return err
		}
		fmt.Printf("\n=== agent run, LLM_API=%s, with a scripted model served by this demo at %s (set LLM_BASE_URL, LLM_MODEL, LLM_API_KEY for a real one)\n", api, base)
		if err := agentRun(ctx, session, "agent-"+api, agentTask); err != nil {
			return fmt.Errorf("LLM_API=%s: %w", api, err)
		}
	}
	if err := setenv(llm.EnvAPI, "chat"); err != nil {
		return err
	}
	fmt.Printf("\n=== agent run with a subagent (G1): the agent hands a part of its task to a child agent run of its own\n")
	if err := agentRun(ctx, session, "agent-subagent", parentTask); err != nil {
		return err
	}
	fmt.Printf("\n=== an agent run of your own, offline, with a worker running: its model is a script of turns (docs/scripted-model.md)\n"+
		"  bin/starter agent --session %s --run mine --model scripted:examples/scripted/chat.json \"What is 6*7?\"\n", session)
	return nil
}

// The tasks of the demo's runs: the scripted model plays each.
const (
	agentTask  = "How big is notes.md, and what is 6*7? Check with a command too."
	parentTask = "Have a subagent count the lines of notes.md, then report."
	childTask  = "Count the lines of notes.md with a command and answer with the number."
)

// agentRun runs one agent run with a worker of its own.
func agentRun(ctx context.Context, session, runID, task string) error {
	queue := fmt.Sprintf("toolround-demo-agent-%d", time.Now().UnixNano())
	if err := setenv("TASK_QUEUE", queue); err != nil {
		return err
	}
	cfg, _, err := engine.FromEnv()
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	w, err := engine.StartWorker(ctx, cfg, quiet)
	if err != nil {
		return err
	}
	defer w.Stop()
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	in := round.AgentInput{SessionID: session, RunID: runID, Task: task, Provider: "openai", AutoApprove: true, MaxRounds: 10}
	fmt.Printf("task: %s\n", task)
	run, err := c.StartAgent(ctx, in)
	if err != nil {
		return err
	}
	fmt.Printf("workflow %s; watch it with: bin/starter watch %s\n", run.GetID(), session)
	ectx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = c.AgentEvents(ectx, session, in.RunID, printAgentEvent)
	}()
	start := time.Now()
	st, err := c.WaitAgent(ctx, run.GetID())
	if err == nil {
		waitFor(&wg, 3*time.Second)
	}
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	if st.Status != round.AgentCompleted {
		return fmt.Errorf("the run %s ended %s: %s", st.WorkflowID, st.Status, st.Reason)
	}
	fmt.Printf("\n  the run %s after %d rounds and %d model calls in %v; final answer:\n    %s\n",
		st.Status, st.Round, st.ModelCalls, time.Since(start).Round(time.Millisecond), st.Final)
	fmt.Printf("  its conversation: bin/starter agent-status %s (kill the worker mid-run and it goes on where it stopped)\n", st.WorkflowID)
	for _, m := range st.Conversation {
		if m.Role == "tool" && strings.HasPrefix(m.Content, "[subagents]") {
			fmt.Printf("  its subagent answered: %s\n  the subagent is an agent run of its own: in the Temporal UI, search ToolroundParent = \"%s\"\n",
				strings.TrimPrefix(m.Content, "[subagents] "), names.WorkflowID(session, runID, st.Round))
		}
	}
	return nil
}

// setenv sets name, value pairs: the in-process worker and client read
// their configuration from the environment, as bin/worker does.
func setenv(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := os.Setenv(kv[i], kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func waitFor(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// printAgentEvent shows the model's streamed tokens as they arrive and one
// line for each model reply and each round.
var streaming bool

func printAgentEvent(e round.Event) {
	switch e.Type {
	case round.EventModelToken:
		if !streaming {
			fmt.Print("  model: ")
			streaming = true
		}
		fmt.Print(e.Detail)
		return
	}
	if streaming {
		fmt.Println()
		streaming = false
	}
	switch e.Type {
	case round.EventModelReply:
		if strings.Contains(e.Detail, "tool calls: ") { // an answer was streamed already
			fmt.Printf("  model asks for %s\n", e.Detail)
		}
	case round.EventToolResult:
		fmt.Printf("    round %d  %-10s %-12s %-8s %s\n", e.Round, e.CallID, e.Tool, e.Status, strings.ReplaceAll(e.Detail, "\n", " "))
	case round.EventRoundFinished:
		fmt.Printf("    round %d finished (%s)\n", e.Round, e.WorkflowID)
	}
}

// demoScript plays a short agent: load the tools, read a file and
// calculate, run a command, answer; or a run that hands a count to a
// subagent, and that subagent. The scripted model (internal/llm/scripted)
// speaks it in each of the three APIs an agent run can use (F4).
func demoScript(r scripted.Request) (scripted.Turn, error) {
	rt := func(id, name string, args any) scripted.Call {
		b, _ := json.Marshal(map[string]any{"name": name, "args": args})
		return scripted.Call{ID: id, Name: "run_tool", Args: string(b)}
	}
	switch {
	case r.Task == parentTask:
		return parentScript(r.Step, r.Last, rt), nil
	case r.Task == childTask:
		return childScript(r.Step, r.Last, rt), nil
	case r.Step == 1:
		return scripted.Turn{Text: "I will load the tools I need first. ",
			Calls: []scripted.Call{{ID: "call_1", Name: "find_tools", Args: `{"query":"select:read_files,calculate,run_command"}`}}}, nil
	case r.Step == 2:
		return scripted.Turn{Text: "Now I read the file and calculate, in one round. ", Calls: []scripted.Call{
			rt("call_2", "read_files", map[string]any{"paths": []string{"notes.md"}}),
			rt("call_3", "calculate", map[string]any{"expression": "6*7"}),
		}}, nil
	case r.Step == 3:
		return scripted.Turn{Text: "Let me check the size with a command. ",
			Calls: []scripted.Call{rt("call_4", "run_command", map[string]any{"command": "wc -c < notes.md"})}}, nil
	default:
		// The command's result ends with its output: "...combined): 19".
		size := r.Last
		if i := strings.LastIndex(size, "):"); i >= 0 {
			size = size[i+2:]
		}
		return scripted.Turn{Text: fmt.Sprintf("notes.md is %s bytes (wc -c says so) and holds %q; 6*7 is 42.", strings.TrimSpace(size), "written by round 2")}, nil
	}
}

// parentScript plays the agent that starts a subagent: load subagents,
// hand it the count, report its answer.
func parentScript(step int, last string, rt func(id, name string, args any) scripted.Call) scripted.Turn {
	switch step {
	case 1:
		return scripted.Turn{Text: "I will load the subagents tool. ", Calls: []scripted.Call{{ID: "call_p1", Name: "find_tools", Args: `{"query":"select:subagents"}`}}}
	case 2:
		return scripted.Turn{Text: "A subagent counts the lines while I wait. ", Calls: []scripted.Call{rt("call_p2", "subagents", map[string]any{"task": childTask, "name": "counter"})}}
	default:
		return scripted.Turn{Text: "The subagent says: " + strings.TrimPrefix(strings.TrimSpace(last), "[subagents] ")}
	}
}

// childScript plays the subagent: load run_command, count, answer.
func childScript(step int, last string, rt func(id, name string, args any) scripted.Call) scripted.Turn {
	switch step {
	case 1:
		return scripted.Turn{Calls: []scripted.Call{{ID: "call_c1", Name: "find_tools", Args: `{"query":"select:run_command"}`}}}
	case 2:
		return scripted.Turn{Calls: []scripted.Call{rt("call_c2", "run_command", map[string]any{"command": "wc -l < notes.md"})}}
	default:
		n := last
		if i := strings.LastIndex(n, "):"); i >= 0 {
			n = n[i+2:]
		}
		return scripted.Turn{Text: "notes.md has " + strings.TrimSpace(n) + " lines."}
	}
}
