package decision

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm"
)

// turnModel is a Messages or Responses API server that streams the given
// events, as those APIs document them (an event line, a data line, a blank
// line), and keeps the last request's body and headers.
type turnModel struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body map[string]any
	hdr  http.Header
}

func newTurnModel(t *testing.T, path string, evs ...string) *turnModel {
	m := &turnModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.body, m.hdr = body, r.Header.Clone()
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range evs {
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal([]byte(e), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, e)
		}
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// anthropicText streams a Messages API answer of text that ends with stop.
func anthropicText(text, stop string) []string {
	q, _ := json.Marshal(text)
	return []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(q) + `}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":12}}`,
		`{"type":"message_stop"}`,
	}
}

// responsesText streams a Responses API answer of text.
func responsesText(text string) []string {
	q, _ := json.Marshal(text)
	item := `{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + string(q) + `,"annotations":[]}]}`
	return []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":` + string(q) + `}`,
		`{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":` + item + `}`,
		`{"type":"response.completed","sequence_number":4,"response":{"id":"resp_1","object":"response","status":"completed","output":[` + item + `],"usage":{"input_tokens":40,"output_tokens":12,"total_tokens":52}}}`,
	}
}

// TestDecisionModelOnTheMessagesAPI: with DECISION_API=anthropic the filter
// posts to /messages with the API's own fields (top-level system,
// max_tokens, x-api-key and anthropic-version) and reads its stream.
func TestDecisionModelOnTheMessagesAPI(t *testing.T) {
	const kept = "Pricing: the Pro plan costs 20 dollars a month."
	m := newTurnModel(t, "/v1/messages", anthropicText(kept, "end_turn")...)
	var logs logBuffer
	f := newChat(t, m.srv.URL, &logs, func(c *Config) { c.API = llm.APIAnthropic })

	got, err := f.Filter(context.Background(), "pricing", page(60, map[int]string{10: kept}))
	require.NoError(t, err)
	require.Equal(t, "[filtered for \"pricing\" by the decision model]\n\n"+kept, got)
	require.Empty(t, logs.String(), "no fallback")

	m.mu.Lock()
	defer m.mu.Unlock()
	require.Equal(t, "sk-test", m.hdr.Get("x-api-key"))
	require.Equal(t, llm.AnthropicVersion, m.hdr.Get("anthropic-version"))
	require.Empty(t, m.hdr.Get("Authorization"))
	require.Equal(t, "small-model", m.body["model"])
	require.EqualValues(t, 333, m.body["max_tokens"], "the filter's own bound, which the Messages API requires")
	require.Contains(t, m.body["system"], "relevant to the query")
	msgs := m.body["messages"].([]any)
	require.Len(t, msgs, 1, "the instructions are the top-level system, not a message")
	require.Equal(t, "user", msgs[0].(map[string]any)["role"])
	require.True(t, strings.HasPrefix(msgs[0].(map[string]any)["content"].(string), "Query: pricing\n\nDocument:\n"))
}

// TestDecisionModelOnTheResponsesAPI: with DECISION_API=responses the
// filter posts to /responses with instructions and store false, and reads
// the output text of its stream.
func TestDecisionModelOnTheResponsesAPI(t *testing.T) {
	const kept = "Pricing: the Pro plan costs 20 dollars a month."
	m := newTurnModel(t, "/v1/responses", responsesText(kept)...)
	var logs logBuffer
	f := newChat(t, m.srv.URL, &logs, func(c *Config) { c.API = llm.APIResponses })

	got, err := f.Filter(context.Background(), "", page(60, map[int]string{10: kept}))
	require.NoError(t, err)
	require.Equal(t, "[condensed by the decision model]\n\n"+kept, got)
	require.Empty(t, logs.String(), "no fallback")

	m.mu.Lock()
	defer m.mu.Unlock()
	require.Equal(t, "Bearer sk-test", m.hdr.Get("Authorization"))
	require.Equal(t, false, m.body["store"])
	require.Contains(t, m.body["instructions"], "condense")
	input := m.body["input"].([]any)
	require.Len(t, input, 1)
	require.Equal(t, "user", input[0].(map[string]any)["role"])
}

// TestDecisionModelRefusalFallsBack: a refusal on the Messages API, like
// any failure of the model, gives the extractive filter's answer.
func TestDecisionModelRefusalFallsBack(t *testing.T) {
	m := newTurnModel(t, "/v1/messages", anthropicText("I cannot help with that.", "refusal")...)
	var logs logBuffer
	f := newChat(t, m.srv.URL, &logs, func(c *Config) { c.API = llm.APIAnthropic })

	got, err := f.Filter(context.Background(), "pricing", page(60, map[int]string{10: "Pricing: the Pro plan costs 20 dollars a month."}))
	require.NoError(t, err)
	require.NotContains(t, got, "cannot help")
	require.Contains(t, got, "Pro plan costs 20 dollars")
	require.Contains(t, logs.String(), "refused")
}

func TestConfigFromEnvReadsTheAPI(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, api := range []string{llm.APIAnthropic, llm.APIResponses} {
		c, err := ConfigFromEnv(env(map[string]string{EnvBaseURL: "http://127.0.0.1:1/v1", EnvModel: "m", EnvAPI: " " + strings.ToUpper(api)}))
		require.NoError(t, err)
		require.Equal(t, api, c.API)
	}
	c, err := ConfigFromEnv(env(map[string]string{EnvAPI: "chat"}))
	require.NoError(t, err)
	require.Empty(t, c.API)
	_, err = ConfigFromEnv(env(map[string]string{EnvAPI: "gemini"}))
	require.ErrorContains(t, err, "DECISION_API")
}
