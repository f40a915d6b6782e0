package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// requireNotInHistory checks every event of each workflow's history, and
// the payloads in it, for the value in any encoding.
func requireNotInHistory(t *testing.T, secret string, wids ...string) {
	t.Helper()
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	forms := secretstest.Encodings(secret)
	check := func(where, text string) {
		t.Helper()
		for name, enc := range forms {
			require.NotContains(t, text, enc, "%s holds the secret (%s)", where, name)
		}
	}
	data := regexp.MustCompile(`"data":"([A-Za-z0-9+/=]*)"`)
	for _, wid := range wids {
		it := tc.GetWorkflowHistory(context.Background(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			events++
			b, err := protojson.Marshal(ev)
			require.NoError(t, err)
			check(wid+" history", string(b))
			for _, m := range data.FindAllStringSubmatch(string(b), -1) {
				plain, err := base64.StdEncoding.DecodeString(m[1])
				require.NoError(t, err)
				check(wid+" history payload", string(plain))
			}
		}
		require.Greater(t, events, 3, wid)
	}
}

// TestThoughtsHoldingASecretStaySealed (F2): a round's thinking block and
// an agent run's thinking block that hold a store_secret value, of their
// own turn or stored by an earlier one, are in no history event and no
// published event; the caller's result and the model's next request get
// the block back with its signature.
func TestThoughtsHoldingASecretStaySealed(t *testing.T) {
	const secret = "sk-thought-5b1e9d44c0"
	t.Run("round", func(t *testing.T) {
		e := newEnv(t)
		e.startWorker()
		in := round.Input{SessionID: e.session, RunID: "run-1", Round: 1, Provider: "claude-code",
			State: &round.RunState{Fetched: []string{"store_secret"}}, Format: round.FormatAnthropic,
			Turn: json.RawMessage(`{"role":"assistant","content":[
				{"type":"thinking","thinking":"The key is ` + secret + `; store it.","signature":"sig-round"},
				{"type":"tool_use","id":"toolu_s","name":"store_secret","input":{"name":"api","value":"` + secret + `"}}]}`)}
		res := e.round(in)
		require.Len(t, res.Results, 1)
		require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
		h, err := json.Marshal(res.History)
		require.NoError(t, err)
		require.Contains(t, string(h), `"thinking":"The key is `+secret+`; store it."`, "the caller gets the block to send back")
		require.Contains(t, string(h), `"signature":"sig-round"`)
		requireNotInHistory(t, secret, names.WorkflowID(e.session, "run-1", 1))

		// A later turn stores nothing; its thought holds the value stored
		// before, and is sealed too.
		in2 := round.Input{SessionID: e.session, RunID: "run-1", Round: 2, Provider: "claude-code", State: res.State, Format: round.FormatAnthropic,
			Turn: json.RawMessage(`{"role":"assistant","content":[
				{"type":"thinking","thinking":"Stored ` + secret + ` already; now the sum.","signature":"sig-round2"},
				{"type":"tool_use","id":"toolu_c","name":"run_tool","input":{"name":"calculate","args":{"expression":"6*7"}}}]}`)}
		res2 := e.round(in2)
		require.Len(t, res2.Results, 1)
		h, err = json.Marshal(res2.History)
		require.NoError(t, err)
		require.Contains(t, string(h), `"thinking":"Stored `+secret+` already; now the sum."`, "the caller gets the block to send back")
		require.Contains(t, string(h), `"signature":"sig-round2"`)
		requireNotInHistory(t, secret, names.WorkflowID(e.session, "run-1", 2))
	})
	t.Run("agent run", func(t *testing.T) {
		var mu sync.Mutex
		var sentBack []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Messages []json.RawMessage `json:"messages"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			// Step 0 loads store_secret, step 1 stores the value (its
			// thought holds it), step 2 answers (its thought holds the
			// value step 1 stored).
			all, _ := json.Marshal(req.Messages)
			step := strings.Count(string(all), `"tool_result"`)
			if step == 2 {
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
			stop := "tool_use"
			switch step {
			case 0:
				send(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_f", "name": "find_tools", "input": map[string]any{}}})
				send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": `{"query":"select:store_secret"}`}})
				send(map[string]any{"type": "content_block_stop", "index": 0})
			case 1:
				args, _ := json.Marshal(map[string]any{"name": "store_secret", "args": map[string]any{"name": "api", "value": secret}})
				send(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
				send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": "The key is " + secret + "; store it."}})
				send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "sig-agent"}})
				send(map[string]any{"type": "content_block_stop", "index": 0})
				send(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_s", "name": "run_tool", "input": map[string]any{}}})
				send(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
				send(map[string]any{"type": "content_block_stop", "index": 1})
			default:
				// The answer's thought holds the value the turn before stored.
				send(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": ""}})
				send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": "Stored " + secret + "."}})
				send(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "sig-agent2"}})
				send(map[string]any{"type": "content_block_stop", "index": 0})
				send(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "text", "text": ""}})
				send(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "text_delta", "text": "stored"}})
				send(map[string]any{"type": "content_block_stop", "index": 1})
				stop = "end_turn"
			}
			send(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 20}})
			send(map[string]any{"type": "message_stop"})
		}))
		defer srv.Close()
		e := newEnv(t, "LLM_BASE_URL="+srv.URL+"/v1", "LLM_MODEL=scripted", "LLM_API=anthropic")
		e.startWorker()
		r := <-e.startAgent("--session", e.session, "--run", "run-1", "--auto-approve", "--events", "store my key")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "stored\n", r.stdout)
		status := e.starter(context.Background(), "", "agent-status", names.AgentWorkflowID(e.session, "run-1"))
		require.Contains(t, status.stdout, `[store_secret] stored secret api`, "the value was stored in step 1")
		mu.Lock()
		require.Len(t, sentBack, 1)
		require.Contains(t, sentBack[0], "The key is "+secret, "the model gets its thinking back as it wrote it")
		require.Contains(t, sentBack[0], `"signature":"sig-agent"`)
		mu.Unlock()
		for name, enc := range secretstest.Encodings(secret) {
			require.NotContains(t, r.stdout+r.stderr, enc, "the starter's output and events hold the secret (%s)", name)
		}
		require.NotContains(t, status.stdout, secret)
		requireNotInHistory(t, secret, names.AgentWorkflowID(e.session, "run-1"), names.WorkflowID(e.session, "run-1", 1), names.WorkflowID(e.session, "run-1", 2))
	})
}
