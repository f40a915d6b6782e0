package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// stopTurn is one scripted Messages API answer: its text, an optional
// run_command call and its stop_reason.
type stopTurn struct {
	text    string
	command string
	stop    string
}

// newStopsModel answers the n-th request with turns[n] (the last one
// again past the end) and records each request's messages.
func newStopsModel(t *testing.T, turns ...stopTurn) (*httptest.Server, func() [][]json.RawMessage) {
	t.Helper()
	var mu sync.Mutex
	var reqs [][]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if r.URL.Path != "/v1/messages" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs = append(reqs, req.Messages)
		turn := turns[min(len(reqs), len(turns))-1]
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		}
		send(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg", "type": "message", "role": "assistant", "content": []any{}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
		i := 0
		if turn.text != "" {
			send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": turn.text}})
			send(map[string]any{"type": "content_block_stop", "index": i})
			i++
		}
		if turn.command != "" {
			args, _ := json.Marshal(map[string]any{"name": "run_command", "args": map[string]any{"command": turn.command}})
			send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "run_tool", "input": map[string]any{}}})
			send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
			send(map[string]any{"type": "content_block_stop", "index": i})
		}
		send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": turn.stop}, "usage": map[string]any{"output_tokens": 20}})
		send(map[string]any{"type": "message_stop"})
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return append([][]json.RawMessage(nil), reqs...)
	}
}

// TestAgentRunStopsOnTheMessagesAPI (F4) through the binaries: a turn cut
// off at max_tokens ends the run truncated and its call does not run; a
// refusal ends it refused; both exit 1 with a one-line reason. A
// pause_turn goes back to the model as it is and the run goes on.
func TestAgentRunStopsOnTheMessagesAPI(t *testing.T) {
	for _, tc := range []struct {
		name   string
		turn   stopTurn
		status string
		reason string
	}{
		{"max_tokens", stopTurn{text: "I will write", command: "echo cut >> log.txt", stop: "max_tokens"}, round.AgentTruncated, "cut off (max_tokens)"},
		{"refusal", stopTurn{stop: "refusal"}, round.AgentRefused, "refused (refusal)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, reqs := newStopsModel(t, tc.turn, stopTurn{text: "never asked", stop: "end_turn"})
			e := newEnv(t, "LLM_BASE_URL="+srv.URL+"/v1", "LLM_MODEL=scripted", "LLM_API=anthropic")
			e.startWorker()
			r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "write to log.txt")
			require.Equal(t, 1, r.code, r.stderr)
			require.Empty(t, r.stdout)
			line := strings.TrimSpace(r.stderr)
			require.NotContains(t, line, "\n", "one line: %s", r.stderr)
			require.Contains(t, line, "(status "+tc.status+")")
			require.Contains(t, line, tc.reason)
			require.Len(t, reqs(), 1, "the run asked the model once")
			st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
			require.Equal(t, tc.status, st.Status)
			require.Equal(t, 0, st.Round, "no round ran")
			_, err := os.Stat(filepath.Join(e.workdir, "log.txt"))
			require.True(t, os.IsNotExist(err), "the cut-off call did not run")
		})
	}
	t.Run("pause_turn", func(t *testing.T) {
		srv, reqs := newStopsModel(t, stopTurn{text: "Searching first.", stop: "pause_turn"}, stopTurn{text: "done", stop: "end_turn"})
		e := newEnv(t, "LLM_BASE_URL="+srv.URL+"/v1", "LLM_MODEL=scripted", "LLM_API=anthropic")
		e.startWorker()
		r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "look it up")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "done\n", r.stdout)
		got := reqs()
		require.Len(t, got, 2, "the paused turn was continued once")
		last := got[1][len(got[1])-1]
		require.Contains(t, string(last), `"role":"assistant"`, "the paused turn goes back as the last message")
		require.Contains(t, string(last), "Searching first.")
		st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
		require.Equal(t, round.AgentCompleted, st.Status)
	})
}
