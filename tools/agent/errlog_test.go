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

func storedErrors(t *testing.T, e *env, session string) []ErrorRecord {
	t.Helper()
	raw, err := e.st.List(context.Background(), errorsKey(session), 0)
	require.NoError(t, err)
	out := make([]ErrorRecord, len(raw))
	for i, r := range raw {
		require.NoError(t, json.Unmarshal([]byte(r), &out[i]))
	}
	return out
}

func TestWriteErrorAndHistory(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			session := e.session(t)
			req := func(call string) tools.Request {
				return tools.Request{SessionID: session, RunID: "run1", Round: 2, CallID: call, WorkflowID: "toolround/" + session + "/run1/2"}
			}
			before := time.Now().UTC().Add(-time.Second)

			got := e.mustCall(t, "write_error", req("c1"), `{"tool":"http_request","error":"401 Unauthorized from api.example.com","outcome":"unresolved"}`)
			require.Equal(t, "recorded unresolved error of http_request", got)
			got = e.mustCall(t, "write_error", req("c2"), `{"tool":"run_command","error":"go: command not found","outcome":"resolved","resolution":"use /usr/local/go/bin/go"}`)
			require.Equal(t, "recorded resolved error of run_command", got)
			got = e.mustCall(t, "write_error", req("c3"), `{"tool":"read_files","error":"a.txt: no such file","outcome":"resolved"}`)
			require.Contains(t, got, "add a resolution")

			// A retried attempt of the same call adds nothing.
			got = e.mustCall(t, "write_error", req("c2"), `{"tool":"run_command","error":"go: command not found","outcome":"resolved","resolution":"use /usr/local/go/bin/go"}`)
			require.Contains(t, got, "already recorded")
			// The same arguments from another call are a new record.
			e.mustCall(t, "write_error", req("c4"), `{"tool":"run_command","error":"go: command not found","outcome":"resolved","resolution":"use /usr/local/go/bin/go"}`)

			recs := storedErrors(t, e, session)
			require.Len(t, recs, 4)
			require.Equal(t, "http_request", recs[0].Tool)
			require.Equal(t, OutcomeUnresolved, recs[0].Outcome)
			require.Equal(t, "use /usr/local/go/bin/go", recs[1].Resolution)
			require.Equal(t, "run1", recs[1].RunID)
			require.Equal(t, 2, recs[1].Round)
			require.Equal(t, "c2", recs[1].CallID)
			require.NotEqual(t, recs[1].ID, recs[3].ID)
			for _, r := range recs {
				require.True(t, r.Time.After(before), "records carry the time they were written")
			}

			all := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{}`)
			require.True(t, strings.HasPrefix(all, "4 recorded errors (1 unresolved), oldest first:"), all)
			require.Less(t, strings.Index(all, "401 Unauthorized"), strings.Index(all, "a.txt"), "oldest first")
			require.Contains(t, all, "run_command: resolved (run run1 round 2)\nerror: go: command not found\nresolution: use /usr/local/go/bin/go")

			byTool := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{"tool":"RUN_COMMAND"}`)
			require.True(t, strings.HasPrefix(byTool, "2 recorded errors (0 unresolved)"), byTool)
			require.NotContains(t, byTool, "401")

			byQuery := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{"query":"unauthorized"}`)
			require.True(t, strings.HasPrefix(byQuery, "1 recorded errors (1 unresolved)"), byQuery)

			byResolution := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{"query":"local go"}`)
			require.True(t, strings.HasPrefix(byResolution, "2 recorded errors"), byResolution)

			limited := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{"limit":1}`)
			require.True(t, strings.HasPrefix(limited, "4 recorded errors (1 unresolved); the newest 1"), limited)

			none := e.mustCall(t, "error_history", tools.Request{SessionID: session}, `{"tool":"fetch_page"}`)
			require.Equal(t, "no recorded error matches (the session has 4 records)", none)

			empty := e.mustCall(t, "error_history", tools.Request{SessionID: e.session(t)}, `{}`)
			require.Equal(t, "no errors recorded in this session", empty)
		})
	}
}

func TestWriteErrorKeepsNewest(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) *env{
		"redis":  func(t *testing.T) *env { return redisEnv(t, func(c *Config) { c.MaxErrors = 3 }) },
		"memory": func(t *testing.T) *env { return newEnv(t, nil, func(c *Config) { c.MaxErrors = 3 }) },
	} {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			session := e.session(t)
			for i := range 5 {
				e.mustCall(t, "write_error", tools.Request{SessionID: session, CallID: fmt.Sprint("c", i)},
					fmt.Sprintf(`{"tool":"t","error":"error %d","outcome":"unresolved"}`, i))
			}
			recs := storedErrors(t, e, session)
			require.Len(t, recs, 3)
			require.Equal(t, "error 2", recs[0].Error)
			require.Equal(t, "error 4", recs[2].Error)
		})
	}
}

func TestWriteErrorInRedis(t *testing.T) {
	e := redisEnv(t, func(c *Config) { c.TTL = time.Hour })
	session := e.session(t)
	e.mustCall(t, "write_error", tools.Request{SessionID: session, CallID: "c1"}, `{"tool":"t","error":"boom","outcome":"unresolved"}`)
	ctx := context.Background()
	typ, err := e.rdb.Type(ctx, "toolround:errors:"+session).Result()
	require.NoError(t, err)
	require.Equal(t, "list", typ)
	ttl, err := e.rdb.TTL(ctx, "toolround:errors:"+session).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 50*time.Minute)

	// Two workers retrying the same call at once still add one record.
	def, _ := e.reg.Lookup("write_error")
	done := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := def.Handler(ctx, tools.Request{SessionID: session, CallID: "c2", Args: []byte(`{"tool":"t","error":"race","outcome":"unresolved"}`)})
			done <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
	require.Len(t, storedErrors(t, e, session), 2)
}

func TestWriteErrorFailures(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name string
		req  tools.Request
		args string
		want string
	}{
		{"blank tool", tools.Request{SessionID: "s"}, `{"tool":"  ","error":"x","outcome":"resolved"}`, "must not be blank"},
		{"no session", tools.Request{}, `{"tool":"t","error":"x","outcome":"resolved"}`, "no session id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.call(t, "write_error", tt.req, tt.args)
			require.ErrorContains(t, err, tt.want)
		})
	}
	def, _ := e.reg.Lookup("write_error")
	_, err := def.Handler(context.Background(), tools.Request{SessionID: "s", Args: []byte(`{"tool":"t","error":"x","outcome":"maybe"}`)})
	require.ErrorContains(t, err, `outcome must be "resolved" or "unresolved"`)

	_, err = e.call(t, "error_history", tools.Request{}, `{}`)
	require.ErrorContains(t, err, "no session id")
}
