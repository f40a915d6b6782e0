package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func TestStreamAssemblesContentAndToolCalls(t *testing.T) {
	var got Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/chat/completions", r.URL.Path)
		require.Equal(t, "Bearer k", r.Header.Get("Authorization"))
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		sse(w,
			`{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}`,
			`{"choices":[{"delta":{"content":"lo"}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"calc","arguments":"{\"x\""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read_files","arguments":""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		)
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k"}, EnvModel)
	require.NoError(t, err)
	var streamed []string
	resp, err := c.Stream(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, func(s string) { streamed = append(streamed, s) })
	require.NoError(t, err)
	require.True(t, got.Stream)
	require.Equal(t, "m", got.Model)
	require.Equal(t, []string{"Hel", "lo"}, streamed, "only content is streamed, never tool-call arguments")
	require.Equal(t, "Hello", resp.Content)
	require.Equal(t, "tool_calls", resp.FinishReason)
	require.Equal(t, []ToolCall{
		{ID: "a", Type: "function", Function: Function{Name: "read_files", Arguments: "{}"}},
		{ID: "b", Type: "function", Function: Function{Name: "calc", Arguments: `{"x":1}`}},
	}, resp.ToolCalls)
}

func TestStreamAcceptsAWholeAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}`)
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, Model: "m"}, EnvModel)
	require.NoError(t, err)
	var streamed string
	resp, err := c.Stream(context.Background(), Request{}, func(s string) { streamed += s })
	require.NoError(t, err)
	require.Equal(t, "done", resp.Content)
	require.Equal(t, "done", streamed)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, want string
		retry      bool
		reply      func(w http.ResponseWriter)
	}{
		{"status", "model overloaded", true, func(w http.ResponseWriter) {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, `{"error":{"message":"model overloaded"}}`)
		}},
		{"rejected", "bad key", false, func(w http.ResponseWriter) {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":{"message":"bad key"}}`)
		}},
		{"cut stream", "ended before the answer did", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		}},
		{"stream error", "the stream reported an error: boom", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"error\":{\"message\":\"boom\"}}\n\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.reply(w) }))
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL, Model: "m"}, EnvModel)
			require.NoError(t, err)
			_, err = c.Stream(context.Background(), Request{}, nil)
			require.ErrorContains(t, err, tt.want)
			var se *StatusError
			if strings.HasPrefix(tt.name, "status") || tt.name == "rejected" {
				require.ErrorAs(t, err, &se)
				require.Equal(t, tt.retry, se.Retryable())
			}
		})
	}
}

func TestNewAndConfigFromEnv(t *testing.T) {
	_, err := New(Config{BaseURL: "ftp://x", Model: "m"}, EnvModel)
	require.ErrorContains(t, err, "absolute http or https URL")
	_, err = New(Config{BaseURL: "http://x"}, EnvModel)
	require.ErrorContains(t, err, "set LLM_MODEL")
	env := map[string]string{EnvBaseURL: " http://h/v1 ", EnvModel: "m", EnvTimeout: "2m"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "http://h/v1", cfg.BaseURL)
	env[EnvTimeout] = "x"
	_, err = ConfigFromEnv(func(k string) string { return env[k] })
	require.ErrorContains(t, err, EnvTimeout)
}

// TestUsageIsReportedAsTokens (B1): a completion's usage, and a stream's
// last chunk's, are the call's tokens, cache reads and writes included
// where the API reports them apart; the input tokens apart (B3's estimate).
func TestUsageIsReportedAsTokens(t *testing.T) {
	r, err := parseCompletion([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`))
	require.NoError(t, err)
	require.Equal(t, int64(120), r.Tokens)
	require.Equal(t, int64(100), r.InputTokens)
	r, err = parseCompletion([]byte(`{"choices":[{"message":{"content":"hi"}}],"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":300,"cache_creation_input_tokens":7}}`))
	require.NoError(t, err)
	require.Equal(t, int64(322), r.Tokens)
	require.Equal(t, int64(317), r.InputTokens)
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"h\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	r, err = readStream(strings.NewReader(stream), nil)
	require.NoError(t, err)
	require.Equal(t, int64(42), r.Tokens)
	require.Equal(t, int64(40), r.InputTokens)
}
