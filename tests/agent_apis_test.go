package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newAPIModel is scriptedModel's agent on the Messages API (anthropic) or
// the Responses API (responses), streamed with the API's events (F4). The
// step is the number of tool results in the request plus one. Step 1's
// turn holds a thinking block (a reasoning item); sentBack counts the
// requests that carried it back unchanged.
func newAPIModel(t *testing.T, api string) (*scriptedModel, *int) {
	t.Helper()
	m := &scriptedModel{counts: map[int]int{}, streams: map[int]int{}, users: map[int][]string{}, release: make(chan struct{}),
		commands: map[int]string{2: "echo two >> log.txt", 3: "echo three >> log.txt"}}
	sentBack := new(int)
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := "/v1/messages"
		if api == "responses" {
			path = "/v1/responses"
		}
		if r.URL.Path != path || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Stream   bool              `json:"stream"`
			Messages []json.RawMessage `json:"messages"`
			Input    []json.RawMessage `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		step := 1
		back := false
		for _, raw := range append(req.Messages, req.Input...) {
			s := string(raw)
			step += strings.Count(s, `"type":"tool_result"`) + strings.Count(s, `"type":"function_call_output"`)
			back = back || strings.Contains(s, "sig-step1") || strings.Contains(s, "enc-step1")
		}
		m.mu.Lock()
		m.counts[step]++
		if req.Stream {
			m.streams[step]++
		}
		if back {
			*sentBack++
		}
		held := m.hold == step
		m.mu.Unlock()
		if held {
			select {
			case <-m.release:
			case <-r.Context().Done():
				return
			}
		}
		var content string
		var calls []map[string]any
		switch step {
		case 1:
			content = "First I load run_command."
			calls = []map[string]any{toolCall("call_find", "find_tools", map[string]any{"query": "select:run_command"})}
		case 2, 3:
			calls = []map[string]any{toolCall(fmt.Sprintf("call_cmd%d", step), "run_tool",
				map[string]any{"name": "run_command", "args": map[string]any{"command": m.commands[step]}})}
		default:
			content = agentFinal
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
			w.(http.Flusher).Flush()
		}
		if api == "anthropic" {
			send(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg", "type": "message", "role": "assistant", "content": []any{}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
			send(map[string]any{"type": "ping"})
			i := 0
			if step == 1 {
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
				send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": "I need run_command."}})
				send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": "sig-step1"}})
				send(map[string]any{"type": "content_block_stop", "index": i})
				i++
			}
			if content != "" {
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
				for _, word := range strings.SplitAfter(content, " ") {
					send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": word}})
				}
				send(map[string]any{"type": "content_block_stop", "index": i})
				i++
			}
			for _, c := range calls {
				fn := c["function"].(map[string]any)
				args := fn["arguments"].(string)
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": fn["name"], "input": map[string]any{}}})
				send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[:len(args)/2]}})
				send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[len(args)/2:]}})
				send(map[string]any{"type": "content_block_stop", "index": i})
				i++
			}
			stop := "end_turn"
			if len(calls) > 0 {
				stop = "tool_use"
			}
			send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 20}})
			send(map[string]any{"type": "message_stop"})
			return
		}
		var output []any
		seq := 0
		ev := func(v map[string]any) { v["sequence_number"] = seq; seq++; send(v) }
		ev(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp", "status": "in_progress", "output": []any{}}})
		if step == 1 {
			item := map[string]any{"id": "rs_1", "type": "reasoning", "summary": []any{}, "encrypted_content": "enc-step1"}
			ev(map[string]any{"type": "response.output_item.added", "output_index": len(output), "item": map[string]any{"id": "rs_1", "type": "reasoning", "summary": []any{}}})
			ev(map[string]any{"type": "response.output_item.done", "output_index": len(output), "item": item})
			output = append(output, item)
		}
		if content != "" {
			item := map[string]any{"id": "msg", "type": "message", "status": "completed", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": content, "annotations": []any{}}}}
			ev(map[string]any{"type": "response.output_item.added", "output_index": len(output), "item": map[string]any{"id": "msg", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			for _, word := range strings.SplitAfter(content, " ") {
				ev(map[string]any{"type": "response.output_text.delta", "item_id": "msg", "output_index": len(output), "content_index": 0, "delta": word})
			}
			ev(map[string]any{"type": "response.output_item.done", "output_index": len(output), "item": item})
			output = append(output, item)
		}
		for _, c := range calls {
			fn := c["function"].(map[string]any)
			args := fn["arguments"].(string)
			id := "fc_" + c["id"].(string)
			ev(map[string]any{"type": "response.output_item.added", "output_index": len(output), "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c["id"], "name": fn["name"], "arguments": ""}})
			ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": len(output), "delta": args[:len(args)/2]})
			ev(map[string]any{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": len(output), "delta": args[len(args)/2:]})
			ev(map[string]any{"type": "response.function_call_arguments.done", "item_id": id, "output_index": len(output), "arguments": args})
			item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c["id"], "name": fn["name"], "arguments": args}
			ev(map[string]any{"type": "response.output_item.done", "output_index": len(output), "item": item})
			output = append(output, item)
		}
		ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp", "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}})
	}))
	t.Cleanup(func() { m.releaseHold(); m.srv.Close() })
	return m, sentBack
}

// TestAgentRunOnEachAPI: the three-round script on the Messages and the
// Responses API: every model call made once and streamed, the thinking
// block or reasoning item sent back, each command once, the final answer.
func TestAgentRunOnEachAPI(t *testing.T) {
	for _, api := range []string{"anthropic", "responses"} {
		t.Run(api, func(t *testing.T) {
			m, sentBack := newAPIModel(t, api)
			e := newEnv(t, "LLM_BASE_URL="+m.baseURL(), "LLM_MODEL=scripted", "LLM_API="+api)
			e.startWorker()
			r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "--events", "append two lines to log.txt")
			st := requireAgentDone(t, e, m, r)
			for step := 1; step <= 4; step++ {
				require.Equal(t, 1, m.count(step), "model call %d was made once", step)
				require.Equal(t, 1, m.streams[step], "model call %d streamed", step)
			}
			require.Equal(t, 3, *sentBack, "every later call sent step 1's thinking or reasoning back")
			require.Contains(t, st.Conversation[2].Content, "run_command", "find_tools loaded the schema")
			require.Contains(t, r.stderr, "model_token")
			require.NotContains(t, r.stderr, "I need run_command", "thinking is not streamed")
		})
	}
}

// TestAgentRunOnEachAPISurvivesAKillInAModelCall: the worker killed
// during model call 2 repeats only that call; no completed call and no
// command runs again.
func TestAgentRunOnEachAPISurvivesAKillInAModelCall(t *testing.T) {
	for _, api := range []string{"anthropic", "responses"} {
		t.Run(api, func(t *testing.T) {
			m, _ := newAPIModel(t, api)
			m.hold = 2
			e := newEnv(t, "LLM_BASE_URL="+m.baseURL(), "LLM_MODEL=scripted", "LLM_API="+api)
			w := e.startWorker()
			done := e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "go")
			require.Eventually(t, func() bool { return m.count(2) == 1 }, 60*time.Second, 10*time.Millisecond, "model call 2 never started")
			w.kill(t)
			m.releaseHold()
			e.startWorker()
			requireAgentDone(t, e, m, <-done)
			require.Equal(t, 2, m.count(2), "the interrupted call ran again, once")
			for _, step := range []int{1, 3, 4} {
				require.Equal(t, 1, m.count(step), "model call %d completed and was made once", step)
			}
		})
	}
}
