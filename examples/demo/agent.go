package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/round"
)

// agentDemo runs a durable agent run (A1): the model call as an activity,
// each round of tool calls as a child round, the model's tokens streamed to
// the session's events. Without LLM_BASE_URL the model is a scripted one
// that the demo serves on loopback (no network); with it, the same run
// drives that model. The run gets a worker of its own, in this process, on
// a task queue of its own, so that it knows the model.
func agentDemo(ctx context.Context, session string) error {
	task := "How big is notes.md, and what is 6*7? Check with a command too."
	if os.Getenv(llm.EnvBaseURL) == "" {
		base, stop, err := serveScriptedModel()
		if err != nil {
			return err
		}
		defer stop()
		if err := setenv(llm.EnvBaseURL, base, llm.EnvModel, "scripted"); err != nil {
			return err
		}
		fmt.Printf("\n=== agent run with a scripted model served by this demo at %s (set LLM_BASE_URL, LLM_MODEL, LLM_API_KEY for a real one)\n", base)
	} else {
		fmt.Printf("\n=== agent run with the model %s at %s\n", os.Getenv(llm.EnvModel), os.Getenv(llm.EnvBaseURL))
	}
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

	in := round.AgentInput{SessionID: session, RunID: "agent-1", Task: task, Provider: "openai", AutoApprove: true, MaxRounds: 10}
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
	fmt.Printf("\n  the run %s after %d rounds and %d model calls in %v; final answer:\n    %s\n",
		st.Status, st.Round, st.ModelCalls, time.Since(start).Round(time.Millisecond), st.Final)
	fmt.Printf("  its conversation: bin/starter agent-status %s (kill the worker mid-run and it goes on where it stopped)\n", st.WorkflowID)
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

// serveScriptedModel serves an OpenAI-compatible chat-completions endpoint
// on loopback that plays a short agent: load the tools, read a file and
// calculate, run a command, answer. Its step is the number of assistant
// messages in the request, so the same conversation always gets the same
// answer.
func serveScriptedModel() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(scriptedModel), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

func scriptedModel(w http.ResponseWriter, r *http.Request) {
	var req llm.Request
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"the scripted model answers POST /v1/chat/completions"}}`, http.StatusBadRequest)
		return
	}
	step := 1
	var last string
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			step++
		}
		if m.Role == "tool" {
			last = m.Content
		}
	}
	rt := func(id, name string, args any) llm.ToolCall {
		b, _ := json.Marshal(map[string]any{"name": name, "args": args})
		return llm.ToolCall{ID: id, Type: "function", Function: llm.Function{Name: "run_tool", Arguments: string(b)}}
	}
	var content string
	var calls []llm.ToolCall
	switch step {
	case 1:
		content = "I will load the tools I need first. "
		calls = []llm.ToolCall{{ID: "call_1", Type: "function", Function: llm.Function{Name: "find_tools", Arguments: `{"query":"select:read_files,calculate,run_command"}`}}}
	case 2:
		content = "Now I read the file and calculate, in one round. "
		calls = []llm.ToolCall{
			rt("call_2", "read_files", map[string]any{"paths": []string{"notes.md"}}),
			rt("call_3", "calculate", map[string]any{"expression": "6*7"}),
		}
	case 3:
		content = "Let me check the size with a command. "
		calls = []llm.ToolCall{rt("call_4", "run_command", map[string]any{"command": "wc -c < notes.md"})}
	default:
		// The command's result ends with its output: "...combined): 19".
		size := last
		if i := strings.LastIndex(size, "):"); i >= 0 {
			size = size[i+2:]
		}
		content = fmt.Sprintf("notes.md is %s bytes (wc -c says so) and holds %q; 6*7 is 42.", strings.TrimSpace(size), "written by round 2")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flush := func(v any) {
		b, _ := json.Marshal(map[string]any{"choices": []any{v}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	for _, word := range strings.SplitAfter(content, " ") {
		flush(map[string]any{"index": 0, "delta": map[string]any{"content": word}})
		time.Sleep(25 * time.Millisecond) // a model types
	}
	for i, c := range calls {
		flush(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Function.Name, "arguments": c.Function.Arguments}}}}})
	}
	flush(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
