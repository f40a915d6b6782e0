package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// pushHistory appends records the way the engine does.
func pushHistory(t *testing.T, e *env, session string, recs ...tools.HistoryRecord) {
	t.Helper()
	for _, r := range recs {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, e.rdb.RPush(context.Background(), tools.HistoryKey(session), b).Err())
	}
}

func TestChatHistory(t *testing.T) {
	e := redisEnv(t, func(c *Config) { c.HistoryMessageChars = 60 })
	session := e.session(t)
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	pushHistory(t, e, session,
		tools.HistoryRecord{RunID: "r1", Round: 1, Role: "user", Content: "What is the weather in Berlin?", Time: at},
		tools.HistoryRecord{RunID: "r1", Round: 1, Role: "assistant", Content: "Let me check.", Time: at.Add(time.Second),
			ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"http_request","arguments":"{}"}}]`)},
		tools.HistoryRecord{RunID: "r1", Round: 1, Role: "tool", ToolCallID: "call_1", Content: "Berlin: 12°C, light rain", Time: at.Add(2 * time.Second)},
		tools.HistoryRecord{RunID: "r2", Round: 1, Role: "user", Content: "And in Paris? " + strings.Repeat("long ", 40), Time: at.Add(time.Hour)},
	)
	require.NoError(t, e.rdb.RPush(context.Background(), tools.HistoryKey(session), "not json").Err())
	req := tools.Request{SessionID: session}

	t.Run("everything, oldest first", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{}`)
		require.True(t, strings.HasPrefix(got, "4 matching messages, oldest first:"), got)
		iUser := strings.Index(got, "weather in Berlin")
		iTool := strings.Index(got, "light rain")
		iParis := strings.Index(got, "And in Paris")
		require.True(t, iUser >= 0 && iUser < iTool && iTool < iParis, got)
		require.Contains(t, got, "[run r1 round 1 2025-03-01T12:00:01Z] assistant called http_request:\nLet me check.")
		require.Contains(t, got, "tool (call call_1)")
		require.Contains(t, got, "more bytes cut]", "long messages are capped")
		require.Contains(t, got, "1 stored entries were not readable")
	})
	t.Run("phrase query", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"query":"LIGHT RAIN"}`)
		require.True(t, strings.HasPrefix(got, "1 matching messages"), got)
		require.Contains(t, got, "Berlin: 12°C")
	})
	t.Run("words in any order", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"query":"berlin weather"}`)
		require.True(t, strings.HasPrefix(got, "1 matching messages"), got)
		require.Contains(t, got, "What is the weather in Berlin?")
	})
	t.Run("tool names match", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"query":"http_request"}`)
		require.Contains(t, got, "Let me check.")
	})
	t.Run("run filter", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"run_id":"r2"}`)
		require.True(t, strings.HasPrefix(got, "1 matching messages"), got)
		require.Contains(t, got, "And in Paris")
		require.NotContains(t, got, "Berlin")
	})
	t.Run("limit keeps the newest", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"limit":2}`)
		require.True(t, strings.HasPrefix(got, "4 matching messages; the newest 2, oldest first:"), got)
		require.Contains(t, got, "light rain")
		require.Contains(t, got, "And in Paris")
		require.NotContains(t, got, "Let me check")
	})
	t.Run("no match", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", req, `{"query":"tokyo"}`)
		require.Equal(t, "no message matches (searched the newest 5 messages)\n\n(1 stored entries were not readable and were skipped)", got)
	})
	t.Run("empty session", func(t *testing.T) {
		got := e.mustCall(t, "chat_history", tools.Request{SessionID: e.session(t)}, `{}`)
		require.Equal(t, "no messages in this session's history yet", got)
	})
}

func TestChatHistoryDefaultLimitAndScan(t *testing.T) {
	e := redisEnv(t, func(c *Config) { c.HistoryScan = 30 })
	session := e.session(t)
	for i := range 40 {
		pushHistory(t, e, session, tools.HistoryRecord{RunID: "r", Round: i, Role: "user", Content: fmt.Sprintf("message %02d", i)})
	}
	got := e.mustCall(t, "chat_history", tools.Request{SessionID: session}, `{}`)
	require.True(t, strings.HasPrefix(got, "30 matching messages; the newest 20"), got)
	require.Contains(t, got, "message 39")
	require.Contains(t, got, "message 20")
	require.NotContains(t, got, "message 19")

	got = e.mustCall(t, "chat_history", tools.Request{SessionID: session}, `{"query":"message 05"}`)
	require.True(t, strings.HasPrefix(got, "no message matches (searched the newest 30 messages)"), got)
}

func TestChatHistoryFailures(t *testing.T) {
	mem := newEnv(t, nil)
	_, err := mem.call(t, "chat_history", tools.Request{SessionID: "s"}, `{}`)
	require.ErrorContains(t, err, "without Redis")

	_, err = mem.call(t, "chat_history", tools.Request{}, `{}`)
	require.ErrorContains(t, err, "no session id")
}
