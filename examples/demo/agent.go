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
	base, stop, err := serveScriptedModel()
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
	return agentRun(ctx, session, "agent-subagent", parentTask)
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
				strings.TrimPrefix(m.Content, "[subagents] "), round.WorkflowID(session, runID, st.Round))
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

// serveScriptedModel serves on loopback a model that plays a short agent:
// load the tools, read a file and calculate, run a command, answer. It
// speaks the three APIs an agent run can use (F4), each streamed with its
// own events: chat completions (POST /v1/chat/completions), the Messages
// API (POST /v1/messages) and the Responses API (POST /v1/responses). Its
// step is the number of assistant turns in the request plus one, so the
// same conversation always gets the same answer.
func serveScriptedModel() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(scriptedModel), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// scriptedCall is one tool call of a scripted turn.
type scriptedCall struct {
	id, name, args string
}

func scriptedModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Input    []json.RawMessage `json:"input"`
	}
	api := map[string]string{"/v1/chat/completions": "chat", "/v1/messages": "anthropic", "/v1/responses": "responses"}[r.URL.Path]
	if api == "" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"the scripted model answers POST /v1/chat/completions, /v1/messages and /v1/responses"}}`, http.StatusBadRequest)
		return
	}
	step, last := scriptedStep(append(req.Messages, req.Input...))
	task := firstUser(req.Messages)
	rt := func(id, name string, args any) scriptedCall {
		b, _ := json.Marshal(map[string]any{"name": name, "args": args})
		return scriptedCall{id, "run_tool", string(b)}
	}
	var content string
	var calls []scriptedCall
	switch {
	case task == parentTask:
		content, calls = parentScript(step, last, rt)
	case task == childTask:
		content, calls = childScript(step, last, rt)
	case step == 1:
		content = "I will load the tools I need first. "
		calls = []scriptedCall{{"call_1", "find_tools", `{"query":"select:read_files,calculate,run_command"}`}}
	case step == 2:
		content = "Now I read the file and calculate, in one round. "
		calls = []scriptedCall{
			rt("call_2", "read_files", map[string]any{"paths": []string{"notes.md"}}),
			rt("call_3", "calculate", map[string]any{"expression": "6*7"}),
		}
	case step == 3:
		content = "Let me check the size with a command. "
		calls = []scriptedCall{rt("call_4", "run_command", map[string]any{"command": "wc -c < notes.md"})}
	default:
		// The command's result ends with its output: "...combined): 19".
		size := last
		if i := strings.LastIndex(size, "):"); i >= 0 {
			size = size[i+2:]
		}
		content = fmt.Sprintf("notes.md is %s bytes (wc -c says so) and holds %q; 6*7 is 42.", strings.TrimSpace(size), "written by round 2")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, v any) {
		b, _ := json.Marshal(v)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	words := strings.SplitAfter(content, " ")
	typing := func() { time.Sleep(25 * time.Millisecond) } // a model types
	switch api {
	case "chat":
		chunk := func(v any) { send("", map[string]any{"choices": []any{v}}) }
		for _, word := range words {
			chunk(map[string]any{"index": 0, "delta": map[string]any{"content": word}})
			typing()
		}
		for i, c := range calls {
			chunk(map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}}}})
		}
		finish := "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
		chunk(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish})
		fmt.Fprint(w, "data: [DONE]\n\n")
	case "anthropic":
		ev := func(v map[string]any) { send(v["type"].(string), v) }
		ev(map[string]any{"type": "message_start", "message": map[string]any{"id": fmt.Sprintf("msg_%d", step), "type": "message", "role": "assistant",
			"model": "scripted", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 50, "output_tokens": 1}}})
		ev(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, word := range words {
			ev(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": word}})
			typing()
		}
		ev(map[string]any{"type": "content_block_stop", "index": 0})
		for i, c := range calls {
			ev(map[string]any{"type": "content_block_start", "index": i + 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_" + c.id, "name": c.name, "input": map[string]any{}}})
			ev(map[string]any{"type": "content_block_delta", "index": i + 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.args}})
			ev(map[string]any{"type": "content_block_stop", "index": i + 1})
		}
		stop := "end_turn"
		if len(calls) > 0 {
			stop = "tool_use"
		}
		ev(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
		ev(map[string]any{"type": "message_stop"})
	case "responses":
		seq := 0
		ev := func(v map[string]any) { v["sequence_number"] = seq; seq++; send(v["type"].(string), v) }
		msgID := fmt.Sprintf("msg_%d", step)
		ev(map[string]any{"type": "response.created", "response": map[string]any{"id": fmt.Sprintf("resp_%d", step), "status": "in_progress", "output": []any{}}})
		ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		for _, word := range words {
			ev(map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": 0, "content_index": 0, "delta": word})
			typing()
		}
		message := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": content, "annotations": []any{}}}}
		ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": message})
		output := []any{message}
		for _, c := range calls {
			id := "fc_" + c.id
			i := len(output)
			ev(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.id, "name": c.name, "arguments": ""}})
			ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": i, "delta": c.args})
			ev(map[string]any{"type": "response.function_call_arguments.done", "item_id": id, "output_index": i, "arguments": c.args})
			item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.id, "name": c.name, "arguments": c.args}
			ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
			output = append(output, item)
		}
		ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": fmt.Sprintf("resp_%d", step), "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": 50, "output_tokens": 20, "total_tokens": 70}}})
	}
}

// scriptedStep reads a request's conversation, in any of the three APIs'
// shapes: the step is the number of assistant turns plus one, and last is
// the content of the last tool result.
func scriptedStep(conversation []json.RawMessage) (step int, last string) {
	step = 1
	for _, raw := range conversation {
		var m struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m.Role == "assistant" {
			step++
		}
		switch {
		case m.Role == "tool": // chat
			_ = json.Unmarshal(m.Content, &last)
		case m.Type == "function_call_output": // responses
			_ = json.Unmarshal(m.Output, &last)
		case m.Role == "user": // anthropic: tool_result blocks
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) == nil {
				for _, b := range blocks {
					if b.Type == "tool_result" && json.Unmarshal(b.Content, &last) != nil {
						var parts []struct{ Text string }
						if json.Unmarshal(b.Content, &parts) == nil && len(parts) > 0 {
							last = parts[len(parts)-1].Text
						}
					}
				}
			}
		}
	}
	return step, last
}

// firstUser is the first user message of a chat-completions conversation:
// the run's task.
func firstUser(conversation []json.RawMessage) string {
	for _, raw := range conversation {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Role == "user" {
			s, _ := m.Content.(string)
			return s
		}
	}
	return ""
}

// parentScript plays the agent that starts a subagent: load subagents,
// hand it the count, report its answer.
func parentScript(step int, last string, rt func(id, name string, args any) scriptedCall) (string, []scriptedCall) {
	switch step {
	case 1:
		return "I will load the subagents tool. ", []scriptedCall{{"call_p1", "find_tools", `{"query":"select:subagents"}`}}
	case 2:
		return "A subagent counts the lines while I wait. ", []scriptedCall{rt("call_p2", "subagents", map[string]any{"task": childTask, "name": "counter"})}
	default:
		return "The subagent says: " + strings.TrimPrefix(strings.TrimSpace(last), "[subagents] "), nil
	}
}

// childScript plays the subagent: load run_command, count, answer.
func childScript(step int, last string, rt func(id, name string, args any) scriptedCall) (string, []scriptedCall) {
	switch step {
	case 1:
		return "", []scriptedCall{{"call_c1", "find_tools", `{"query":"select:run_command"}`}}
	case 2:
		return "", []scriptedCall{rt("call_c2", "run_command", map[string]any{"command": "wc -l < notes.md"})}
	default:
		n := last
		if i := strings.LastIndex(n, "):"); i >= 0 {
			n = n[i+2:]
		}
		return "notes.md has " + strings.TrimSpace(n) + " lines.", nil
	}
}
