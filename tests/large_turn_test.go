package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// TestLargeTurnGoesToTheBlobStore (F4): an agent run's turn above
// LARGE_RESULT_BYTES, a long thinking block, is in no event of the run's or
// its round's history; its call runs, and the next model call gets the
// whole turn back, thinking and signature as the model wrote them.
func TestLargeTurnGoesToTheBlobStore(t *testing.T) {
	const marker = "zebra-thought-6c1f"
	long := strings.Repeat("a long line of thought about "+marker+". ", 300) // about 14 KB
	var mu sync.Mutex
	var sentBack []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		all, _ := json.Marshal(req.Messages)
		step := strings.Count(string(all), `"tool_result"`)
		if step == 1 {
			mu.Lock()
			sentBack = append(sentBack, string(req.Messages[len(req.Messages)-2]))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		}
		send(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg", "type": "message", "role": "assistant", "content": []any{}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
		stop := "end_turn"
		if step == 0 {
			send(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
			send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": long}})
			send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "sig-long"}})
			send(map[string]any{"type": "content_block_stop", "index": 0})
			send(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_f", "name": "find_tools", "input": map[string]any{}}})
			send(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": `{"query":"select:calculate"}`}})
			send(map[string]any{"type": "content_block_stop", "index": 1})
			stop = "tool_use"
		} else {
			send(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "loaded"}})
			send(map[string]any{"type": "content_block_stop", "index": 0})
		}
		send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 20}})
		send(map[string]any{"type": "message_stop"})
	}))
	defer srv.Close()
	e := newEnv(t, "LLM_BASE_URL="+srv.URL+"/v1", "LLM_MODEL=scripted", "LLM_API=anthropic", "LARGE_RESULT_BYTES=4096")
	e.startWorker()
	r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "load the calculator")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "loaded\n", r.stdout)
	mu.Lock()
	require.Len(t, sentBack, 1)
	require.Contains(t, sentBack[0], long, "the model gets the whole turn back")
	require.Contains(t, sentBack[0], `"signature":"sig-long"`)
	mu.Unlock()
	var st round.AgentStatus
	status := e.starter(t.Context(), "", "agent-status", names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, 0, status.code, status.stderr)
	require.NoError(t, json.Unmarshal([]byte(status.stdout), &st))
	require.NotEmpty(t, st.Conversation[1].RawRef, "the turn is kept by reference")
	require.Contains(t, st.Conversation[2].Content, "calculate", "its call ran")
	requireNotInHistory(t, marker, names.AgentWorkflowID(e.session, "run-1"), names.WorkflowID(e.session, "run-1", 1))
}
