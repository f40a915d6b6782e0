package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestWriteTodo(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			req := tools.Request{SessionID: e.session(t)}

			got := e.mustCall(t, "write_todo", req, `{"items":[{"text":"read the spec","done":true},{"text":"  write   the tests ","done":false},{"text":"ship","done":false}]}`)
			require.Equal(t, "todo list (1/3 done):\n- [x] read the spec\n- [ ] write the tests\n- [ ] ship", got)

			// The list is replaced, not merged.
			got = e.mustCall(t, "write_todo", req, `{"items":[{"text":"ship","done":true}]}`)
			require.Equal(t, "todo list (1/1 done):\n- [x] ship", got)
			stored := storedTodo(t, e, req.SessionID)
			require.Equal(t, []TodoItem{{Text: "ship", Done: true}}, stored)

			// Running the same call again leaves the same state (idempotent).
			again := e.mustCall(t, "write_todo", req, `{"items":[{"text":"ship","done":true}]}`)
			require.Equal(t, got, again)
			require.Equal(t, stored, storedTodo(t, e, req.SessionID))

			// Sessions do not share lists.
			other := tools.Request{SessionID: e.session(t)}
			e.mustCall(t, "write_todo", other, `{"items":[{"text":"other","done":false}]}`)
			require.Equal(t, stored, storedTodo(t, e, req.SessionID))

			require.Equal(t, "todo list cleared", e.mustCall(t, "write_todo", req, `{"items":[]}`))
			require.Empty(t, storedTodo(t, e, req.SessionID))
		})
	}
}

func TestWriteTodoInRedis(t *testing.T) {
	e := redisEnv(t, func(c *Config) { c.TTL = time.Hour })
	session := e.session(t)
	e.mustCall(t, "write_todo", tools.Request{SessionID: session}, `{"items":[{"text":"a","done":false}]}`)

	raw, err := e.rdb.Get(context.Background(), "toolround:todo:"+session).Result()
	require.NoError(t, err)
	require.JSONEq(t, `[{"text":"a","done":false}]`, raw)
	ttl, err := e.rdb.TTL(context.Background(), "toolround:todo:"+session).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 50*time.Minute)
	require.LessOrEqual(t, ttl, time.Hour)
}

func TestWriteTodoFailures(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.MaxTodoItems = 2 })
	session := e.session(t)
	tests := []struct {
		name string
		req  tools.Request
		args string
		want string
	}{
		{"blank text", tools.Request{SessionID: session}, `{"items":[{"text":"   ","done":false}]}`, "item 1 has no text"},
		{"no session", tools.Request{}, `{"items":[]}`, "no session id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.call(t, "write_todo", tt.req, tt.args)
			require.ErrorContains(t, err, tt.want)
		})
	}
	// More items than the limit: refused by the schema, and by the handler
	// if it is called directly.
	def, _ := e.reg.Lookup("write_todo")
	args := `{"items":[{"text":"a","done":false},{"text":"b","done":false},{"text":"c","done":false}]}`
	require.NotEmpty(t, tools.Validate(def.Parameters, []byte(args)))
	_, err := def.Handler(context.Background(), tools.Request{SessionID: session, Args: []byte(args)})
	require.ErrorContains(t, err, "more than the limit of 2")
}

func TestStorageDownIsTransient(t *testing.T) {
	e := newEnv(t, downRedis(t))
	req := tools.Request{SessionID: "s", RunID: "r", CallID: "c"}
	for _, c := range []struct{ tool, args string }{
		{"write_todo", `{"items":[]}`},
		{"write_error", `{"tool":"x","error":"y","outcome":"unresolved"}`},
		{"error_history", `{}`},
		{"chat_history", `{}`},
		{"write_result", `{"content":"done"}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			_, err := e.call(t, c.tool, req, c.args)
			require.Error(t, err)
			require.False(t, strings.HasPrefix(err.Error(), c.tool), "the failure text adds the name: %v", err)
			require.True(t, tools.IsTransient(err), "a Redis that cannot be reached is worth a retry: %v", err)
		})
	}
}

func storedTodo(t *testing.T, e *env, session string) []TodoItem {
	t.Helper()
	text, ok, err := e.st.GetString(context.Background(), todoKey(session))
	require.NoError(t, err)
	if !ok {
		return nil
	}
	var items []TodoItem
	require.NoError(t, json.Unmarshal([]byte(text), &items))
	return items
}
