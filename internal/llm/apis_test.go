package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// events writes named server-sent events as the Messages and Responses
// APIs do: an event line, a data line, a blank line.
func events(w http.ResponseWriter, evs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range evs {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &head)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, e)
		w.(http.Flusher).Flush()
	}
}

func turnServer(t *testing.T, path string, got *map[string]any, hdr *http.Header, evs ...string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, path, r.URL.Path)
		if hdr != nil {
			*hdr = r.Header.Clone()
		}
		if got != nil {
			require.NoError(t, json.NewDecoder(r.Body).Decode(got))
		}
		events(w, evs...)
	}))
	t.Cleanup(srv.Close)
	api := APIAnthropic
	if path == "/v1/responses" {
		api = APIResponses
	}
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k", API: api, ThinkingBudget: 1024}, EnvModel)
	require.NoError(t, err)
	return c
}

const (
	aStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":1}}}`
	aPing  = `{"type": "ping"}`
	aStop  = `{"type":"message_stop"}`
)

func aDelta(reason string, out int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, out)
}

func TestAnthropicTextOnly(t *testing.T) {
	var got map[string]any
	var hdr http.Header
	c := turnServer(t, "/v1/messages", &got, &hdr, aStart, aPing,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}`,
		`{"type":"content_block_stop","index":0}`,
		aDelta("end_turn", 15), aStop)
	var streamed []string
	turn, err := c.StreamTurn(context.Background(), TurnRequest{System: "sys", Input: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)}}, func(s string) { streamed = append(streamed, s) })
	require.NoError(t, err)
	require.Equal(t, "k", hdr.Get("x-api-key"))
	require.Equal(t, "2023-06-01", hdr.Get("anthropic-version"))
	require.Empty(t, hdr.Get("Authorization"))
	require.Equal(t, "sys", got["system"])
	require.EqualValues(t, 8192, got["max_tokens"])
	require.Equal(t, true, got["stream"])
	require.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(1024)}, got["thinking"])
	require.Equal(t, "Hello!", turn.Text)
	require.Equal(t, []string{"Hello", "!"}, streamed)
	require.Equal(t, StopAnswer, turn.Stop)
	require.Equal(t, "end_turn", turn.StopReason)
	require.EqualValues(t, 25+15+3+4, turn.Tokens)
	require.EqualValues(t, 25+3+4, turn.InputTokens, "cache reads and writes are input")
	require.JSONEq(t, `{"role":"assistant","content":[{"type":"text","text":"Hello!"}]}`, string(turn.Raw))
}

func TestAnthropicThinkingAndToolCalls(t *testing.T) {
	c := turnServer(t, "/v1/messages", nil, nil, aStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"read it."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading."}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"read_files","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"paths\": [\"a"}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":".txt\"]}"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02","name":"list_dir","input":{}}}`,
		`{"type":"content_block_stop","index":3}`,
		aDelta("tool_use", 89), aStop)
	var streamed strings.Builder
	turn, err := c.StreamTurn(context.Background(), TurnRequest{}, func(s string) { streamed.WriteString(s) })
	require.NoError(t, err)
	require.Equal(t, "Reading.", streamed.String(), "thinking deltas are not streamed")
	require.Equal(t, StopTools, turn.Stop)
	require.Len(t, turn.Calls, 2)
	require.Equal(t, "toolu_01", turn.Calls[0].ID)
	require.Equal(t, "read_files", turn.Calls[0].Function.Name)
	require.JSONEq(t, `{"paths":["a.txt"]}`, turn.Calls[0].Function.Arguments)
	require.JSONEq(t, `{}`, turn.Calls[1].Function.Arguments)
	require.JSONEq(t, `{"role":"assistant","content":[
		{"type":"thinking","thinking":"Let me read it.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
		{"type":"text","text":"Reading."},
		{"type":"tool_use","id":"toolu_01","name":"read_files","input":{"paths":["a.txt"]}},
		{"type":"tool_use","id":"toolu_02","name":"list_dir","input":{}}]}`, string(turn.Raw))
}

func TestAnthropicStopReasons(t *testing.T) {
	for reason, want := range map[string]Stop{
		"end_turn": StopAnswer, "stop_sequence": StopAnswer, "pause_turn": StopPause, "max_tokens": StopTruncated,
		"model_context_window_exceeded": StopTruncated, "refusal": StopRefused,
	} {
		c := turnServer(t, "/v1/messages", nil, nil, aStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
			`{"type":"content_block_stop","index":0}`, aDelta(reason, 2), aStop)
		turn, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
		require.NoError(t, err, reason)
		require.Equal(t, want, turn.Stop, reason)
		require.Equal(t, reason, turn.StopReason)
	}
}

func TestAnthropicOverloadedEventIsRetryable(t *testing.T) {
	c := turnServer(t, "/v1/messages", nil, nil, aStart,
		`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`)
	_, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
	var se *StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, 529, se.Code)
	require.True(t, se.Retryable())
	require.Contains(t, err.Error(), "Overloaded")
}

func TestAnthropicCutStreamIsAnError(t *testing.T) {
	c := turnServer(t, "/v1/messages", nil, nil, aStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	_, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.ErrorContains(t, err, "no message_stop")
}

func TestRateLimitCarriesRetryAfter(t *testing.T) {
	for _, code := range []int{429, 529, 503} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
		}))
		for _, api := range []string{APIAnthropic, APIResponses, APIChat} {
			c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", API: api}, EnvModel)
			require.NoError(t, err)
			if api == APIChat {
				_, err = c.Stream(context.Background(), Request{}, nil)
			} else {
				_, err = c.StreamTurn(context.Background(), TurnRequest{}, nil)
			}
			var se *StatusError
			require.True(t, errors.As(err, &se), "%s: %v", api, err)
			require.Equal(t, code, se.Code)
			require.True(t, se.Retryable())
			require.Equal(t, 7*time.Second, se.RetryAfter)
			require.Contains(t, se.Message, "slow down")
		}
		srv.Close()
	}
}

const (
	rCreated = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`
)

func TestResponsesTextOnly(t *testing.T) {
	var got map[string]any
	var hdr http.Header
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}`
	c := turnServer(t, "/v1/responses", &got, &hdr, rCreated,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}`,
		`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" there"}`,
		`{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":`+msg+`}`,
		`{"type":"response.completed","sequence_number":5,"response":{"id":"resp_1","status":"completed","output":[`+msg+`],"usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":123}}}`)
	var streamed []string
	turn, err := c.StreamTurn(context.Background(), TurnRequest{System: "sys"}, func(s string) { streamed = append(streamed, s) })
	require.NoError(t, err)
	require.Equal(t, "Bearer k", hdr.Get("Authorization"))
	require.Equal(t, false, got["store"])
	require.Equal(t, []any{"reasoning.encrypted_content"}, got["include"])
	require.Equal(t, "sys", got["instructions"])
	require.Equal(t, true, got["stream"])
	require.Equal(t, []string{"Hi", " there"}, streamed)
	require.Equal(t, "Hi there", turn.Text)
	require.Equal(t, StopAnswer, turn.Stop)
	require.EqualValues(t, 123, turn.Tokens)
	require.EqualValues(t, 36, turn.InputTokens)
	require.JSONEq(t, `[`+msg+`]`, string(turn.Raw))
}

func TestResponsesReasoningAndToolCalls(t *testing.T) {
	reasoning := `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAAB..."}`
	fc1 := `{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"paths\":[\"a.txt\"]}","call_id":"call_1","name":"read_files"}`
	fc2 := `{"id":"fc_2","type":"function_call","status":"completed","arguments":"{}","call_id":"call_2","name":"list_dir"}`
	c := turnServer(t, "/v1/responses", nil, nil, rCreated,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":`+reasoning+`}`,
		`{"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"read_files"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_1","output_index":1,"delta":"{\"paths\":"}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_1","output_index":1,"delta":"[\"a.txt\"]}"}`,
		`{"type":"response.function_call_arguments.done","sequence_number":6,"item_id":"fc_1","output_index":1,"arguments":"{\"paths\":[\"a.txt\"]}"}`,
		`{"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":`+fc1+`}`,
		`{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_2","name":"list_dir"}}`,
		`{"type":"response.output_item.done","sequence_number":9,"output_index":2,"item":`+fc2+`}`,
		`{"type":"response.completed","sequence_number":10,"response":{"id":"resp_1","status":"completed","output":[`+reasoning+`,`+fc1+`,`+fc2+`],"usage":{"input_tokens":10,"output_tokens":20,"total_tokens":30}}}`)
	turn, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.NoError(t, err)
	require.Equal(t, StopTools, turn.Stop)
	require.Len(t, turn.Calls, 2)
	require.Equal(t, "call_1", turn.Calls[0].ID)
	require.Equal(t, `{"paths":["a.txt"]}`, turn.Calls[0].Function.Arguments)
	require.Equal(t, "list_dir", turn.Calls[1].Function.Name)
	require.JSONEq(t, `[`+reasoning+`,`+fc1+`,`+fc2+`]`, string(turn.Raw), "reasoning items go back as given")
}

func TestResponsesIncompleteAndFailed(t *testing.T) {
	c := turnServer(t, "/v1/responses", nil, nil, rCreated,
		`{"type":"response.incomplete","sequence_number":1,"response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":{"input_tokens":1,"output_tokens":2}}}`)
	turn, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.NoError(t, err)
	require.Equal(t, StopTruncated, turn.Stop)
	require.Equal(t, "response.incomplete max_output_tokens", turn.StopReason)

	c = turnServer(t, "/v1/responses", nil, nil, rCreated,
		`{"type":"response.incomplete","sequence_number":1,"response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}}`)
	turn, err = c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.NoError(t, err)
	require.Equal(t, StopRefused, turn.Stop)

	c = turnServer(t, "/v1/responses", nil, nil, rCreated,
		`{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model failed"},"output":[]}}`)
	_, err = c.StreamTurn(context.Background(), TurnRequest{}, nil)
	var se *StatusError
	require.True(t, errors.As(err, &se))
	require.True(t, se.Retryable())

	c = turnServer(t, "/v1/responses", nil, nil,
		`{"type":"error","sequence_number":0,"code":"invalid_request_error","message":"bad input","param":null}`)
	_, err = c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.True(t, errors.As(err, &se))
	require.False(t, se.Retryable())
	require.Contains(t, err.Error(), "bad input")
}

func TestResponsesRefusal(t *testing.T) {
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}`
	c := turnServer(t, "/v1/responses", nil, nil, rCreated,
		`{"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","status":"completed","output":[`+msg+`]}}`)
	turn, err := c.StreamTurn(context.Background(), TurnRequest{}, nil)
	require.NoError(t, err)
	require.Equal(t, StopRefused, turn.Stop)
}

func TestChatStop(t *testing.T) {
	require.Equal(t, StopAnswer, ChatStop("stop", false))
	require.Equal(t, StopTools, ChatStop("tool_calls", true))
	require.Equal(t, StopTruncated, ChatStop("length", false))
	require.Equal(t, StopRefused, ChatStop("content_filter", false))
}

func TestConfigFromEnvAPI(t *testing.T) {
	env := map[string]string{"LLM_API": "anthropic", "LLM_MAX_TOKENS": "4096", "LLM_THINKING_BUDGET": "2048"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, APIAnthropic, c.API)
	require.Equal(t, 4096, c.MaxTokens)
	require.Equal(t, 2048, c.ThinkingBudget)
	env["LLM_API"] = "anthropics"
	_, err = ConfigFromEnv(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "want chat, anthropic or responses")
	env["LLM_API"], env["LLM_THINKING_BUDGET"] = "", "9000"
	_, err = ConfigFromEnv(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "must be below")
	env = map[string]string{}
	c, err = ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, APIChat, c.API)
	for api, path := range map[string]string{APIChat: "/chat/completions", APIAnthropic: "/messages", APIResponses: "/responses"} {
		cl, err := New(Config{BaseURL: "https://x/v1", Model: "m", API: api}, EnvModel)
		require.NoError(t, err)
		require.Equal(t, "https://x/v1"+path, cl.Endpoint())
	}
}
