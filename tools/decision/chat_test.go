package decision

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeModel is an OpenAI-compatible chat-completions server.
type fakeModel struct {
	t       *testing.T
	srv     *httptest.Server
	calls   atomic.Int32
	mu      sync.Mutex
	last    chatRequest
	lastHdr http.Header
	reply   func(w http.ResponseWriter, r *http.Request)
}

func newFakeModel(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *fakeModel {
	f := &fakeModel{t: t, reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.last, f.lastHdr = req, r.Header.Clone()
		f.mu.Unlock()
		f.reply(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func completion(content string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newChat(t *testing.T, base string, logs io.Writer, mod func(*Config)) Filter {
	t.Helper()
	cfg := Config{
		BaseURL: base + "/v1", Model: "small-model", APIKey: "sk-test",
		MaxChars: 1000, PassThroughChars: 200, Timeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	f, err := New(cfg)
	require.NoError(t, err)
	require.IsType(t, &Chat{}, f)
	return f
}

func TestChatFilterSendsOpenAIRequest(t *testing.T) {
	m := newFakeModel(t, completion("Pricing: the Pro plan costs 20 dollars a month."))
	var logs logBuffer
	f := newChat(t, m.srv.URL, &logs, nil)
	doc := page(60, map[int]string{10: "Pricing: the Pro plan costs 20 dollars a month."})

	got, err := f.Filter(context.Background(), "pricing", doc)
	require.NoError(t, err)
	require.Equal(t, "[filtered for \"pricing\" by the decision model]\n\nPricing: the Pro plan costs 20 dollars a month.", got)
	require.Empty(t, logs.String())

	m.mu.Lock()
	defer m.mu.Unlock()
	require.Equal(t, "small-model", m.last.Model)
	require.Equal(t, "Bearer sk-test", m.lastHdr.Get("Authorization"))
	require.Equal(t, "application/json", m.lastHdr.Get("Content-Type"))
	require.NotNil(t, m.last.Temperature)
	require.Zero(t, *m.last.Temperature)
	require.Equal(t, 333, m.last.MaxTokens)
	require.Len(t, m.last.Messages, 2)
	require.Equal(t, "system", m.last.Messages[0].Role)
	require.Contains(t, m.last.Messages[0].Content, "relevant to the query")
	require.Equal(t, "user", m.last.Messages[1].Role)
	require.True(t, strings.HasPrefix(m.last.Messages[1].Content, "Query: pricing\n\nDocument:\n"))
	require.Contains(t, m.last.Messages[1].Content, "Filler paragraph 59")
}

func TestChatFilterWithoutQueryCondenses(t *testing.T) {
	m := newFakeModel(t, completion("the gist"))
	f := newChat(t, m.srv.URL, io.Discard, nil)
	got, err := f.Filter(context.Background(), "", page(60, nil))
	require.NoError(t, err)
	require.Equal(t, "[condensed by the decision model]\n\nthe gist", got)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Contains(t, m.last.Messages[0].Content, "condense")
	require.True(t, strings.HasPrefix(m.last.Messages[1].Content, "Document:\n"))
}

func TestChatFilterSkipsModelForShortContent(t *testing.T) {
	m := newFakeModel(t, completion("should not be used"))
	f := newChat(t, m.srv.URL, io.Discard, nil)
	for _, tc := range []struct{ query, content string }{
		{"pricing", "short page"},                 // below PassThroughChars
		{"", strings.Repeat("medium words ", 50)}, // no query and within MaxChars
	} {
		got, err := f.Filter(context.Background(), tc.query, tc.content)
		require.NoError(t, err)
		require.Equal(t, strings.TrimSpace(tc.content), got)
	}
	require.Zero(t, m.calls.Load())
}

func TestChatFilterBoundsReplyAndInput(t *testing.T) {
	m := newFakeModel(t, completion(strings.Repeat("relevant words ", 500)))
	f := newChat(t, m.srv.URL, io.Discard, func(c *Config) { c.MaxInputChars = 3000; c.MaxTokens = -1 })
	got, err := f.Filter(context.Background(), "pricing", page(200, map[int]string{150: "Pricing is 20 dollars."}))
	require.NoError(t, err)
	require.LessOrEqual(t, len(got), 1000)
	require.Contains(t, got, "more characters not shown]")

	m.mu.Lock()
	defer m.mu.Unlock()
	require.Zero(t, m.last.MaxTokens, "MaxTokens -1 omits the field")
	sent := m.last.Messages[1].Content
	require.LessOrEqual(t, len(sent), 3000+len("Query: pricing\n\nDocument:\n"))
	require.Contains(t, sent, "Pricing is 20 dollars.", "the input is reduced to the relevant passages")
}

func TestChatFilterFallsBack(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	tests := []struct {
		name    string
		reply   func(w http.ResponseWriter, r *http.Request)
		wantLog string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":"model overloaded"}}`)
		}, "model overloaded"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-block:
			}
		}, "no answer within 150ms"},
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"choices": [`)
		}, "not a chat completion"},
		{"no choices", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"choices": []}`)
		}, "no choices[0].message.content"},
		{"empty content", completion("   "), "reply is empty"},
	}
	doc := page(60, map[int]string{10: "Pricing: the Pro plan costs 20 dollars a month."})
	want, _ := Extractive{MaxChars: 1000, PassThroughChars: 200}.Filter(context.Background(), "pricing", doc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel(t, tt.reply)
			var logs logBuffer
			f := newChat(t, m.srv.URL, &logs, func(c *Config) { c.Timeout = 150 * time.Millisecond })
			got, err := f.Filter(context.Background(), "pricing", doc)
			require.NoError(t, err, "a model that is down never fails the tool")
			require.Equal(t, want, got)
			require.Contains(t, logs.String(), "model filter failed; using the extractive filter")
			require.Contains(t, logs.String(), tt.wantLog)
			require.EqualValues(t, 1, m.calls.Load())
		})
	}
}

func TestChatFilterFallsBackWhenUnreachable(t *testing.T) {
	m := newFakeModel(t, completion("x"))
	base := m.srv.URL
	m.srv.Close()
	var logs logBuffer
	f := newChat(t, base, &logs, nil)
	got, err := f.Filter(context.Background(), "pricing", page(60, map[int]string{3: "pricing here"}))
	require.NoError(t, err)
	require.Contains(t, got, "pricing here")
	require.Contains(t, logs.String(), "model filter failed")
}

func TestNew(t *testing.T) {
	f, err := New(Config{})
	require.NoError(t, err)
	require.Equal(t, Extractive{MaxChars: defaultMaxChars, PassThroughChars: defaultPassThroughChars}, f)

	_, err = New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	require.ErrorContains(t, err, "no model is: set DECISION_MODEL")

	for _, bad := range []string{"127.0.0.1:8080", "ftp://x/v1", "http://"} {
		_, err = New(Config{BaseURL: bad, Model: "m"})
		require.ErrorContains(t, err, "want an absolute http or https URL", bad)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(map[string]string{
		EnvBaseURL: " http://127.0.0.1:11434/v1 ", EnvModel: "qwen", EnvAPIKey: "k",
		EnvTimeout: "5s", EnvMaxChars: "4000",
	}))
	require.NoError(t, err)
	require.Equal(t, Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen", APIKey: "k", Timeout: 5 * time.Second, MaxChars: 4000}, c)

	c, err = ConfigFromEnv(env(nil))
	require.NoError(t, err)
	require.Equal(t, Config{}, c)

	_, err = ConfigFromEnv(env(map[string]string{EnvTimeout: "soon"}))
	require.ErrorContains(t, err, "DECISION_TIMEOUT")
	_, err = ConfigFromEnv(env(map[string]string{EnvMaxChars: "-3"}))
	require.ErrorContains(t, err, "DECISION_MAX_CHARS")
}
