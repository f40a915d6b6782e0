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

func storedResult(t *testing.T, e *env, session, runID string) (RunResult, bool) {
	t.Helper()
	raw, ok, err := e.st.HGet(context.Background(), resultKey(session), resultField(runID))
	require.NoError(t, err)
	if !ok {
		return RunResult{}, false
	}
	var r RunResult
	require.NoError(t, json.Unmarshal([]byte(raw), &r))
	return r, true
}

func TestWriteResult(t *testing.T) {
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			session := e.session(t)
			req := tools.Request{SessionID: session, RunID: "r1", Round: 4}

			got := e.mustCall(t, "write_result", req, `{"content":"# Answer\n42","title":"The answer"}`)
			require.Equal(t, `recorded the run's result "The answer" (markdown, 11 characters)`, got)
			r, ok := storedResult(t, e, session, "r1")
			require.True(t, ok)
			require.Equal(t, "# Answer\n42", r.Content)
			require.Equal(t, "The answer", r.Title)
			require.Equal(t, "markdown", r.Format)
			require.Equal(t, "r1", r.RunID)
			require.Equal(t, 4, r.Round)
			require.WithinDuration(t, time.Now(), r.Time, time.Minute)

			// A second call replaces the run's result; other runs keep theirs.
			e.mustCall(t, "write_result", req, `{"content":"{\"answer\":42}","format":"json"}`)
			r, _ = storedResult(t, e, session, "r1")
			require.Equal(t, `{"answer":42}`, r.Content)
			require.Equal(t, "json", r.Format)
			e.mustCall(t, "write_result", tools.Request{SessionID: session, RunID: "r2"}, `{"content":"other"}`)
			r, _ = storedResult(t, e, session, "r1")
			require.Equal(t, `{"answer":42}`, r.Content)
			r, _ = storedResult(t, e, session, "r2")
			require.Equal(t, "other", r.Content)
		})
	}
}

func TestWriteResultInRedis(t *testing.T) {
	e := redisEnv(t)
	session := e.session(t)
	e.mustCall(t, "write_result", tools.Request{SessionID: session, RunID: "run-7"}, `{"content":"done"}`)
	raw, err := e.rdb.HGet(context.Background(), "toolround:result:"+session, "run-7").Result()
	require.NoError(t, err)
	require.Contains(t, raw, `"content":"done"`)
	ttl, err := e.rdb.TTL(context.Background(), "toolround:result:"+session).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 29*24*time.Hour, "the default TTL is 30 days")
}

func TestWriteResultFailures(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.MaxResultChars = 10 })
	def, _ := e.reg.Lookup("write_result")
	for _, c := range []struct {
		req  tools.Request
		args string
		want string
	}{
		{tools.Request{SessionID: "s"}, `{"content":"   "}`, "content is empty"},
		{tools.Request{SessionID: "s"}, `{"content":"{not json","format":"json"}`, "not valid JSON"},
		{tools.Request{SessionID: "s"}, `{"content":"` + strings.Repeat("x", 11) + `"}`, "more than the limit of 10"},
		{tools.Request{SessionID: "s"}, `{"content":"x","format":"pdf"}`, "format must be one of"},
		{tools.Request{}, `{"content":"x"}`, "no session id"},
	} {
		c.req.Args = []byte(c.args)
		_, err := def.Handler(context.Background(), c.req)
		require.ErrorContains(t, err, c.want, c.args)
		require.False(t, strings.HasPrefix(err.Error(), "write_result"), "the failure text adds the name: %s", err)
	}
}

func TestAskUserHandlerExplains(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.call(t, "ask_user", tools.Request{SessionID: "s"}, `{"questions":["Which region?"]}`)
	require.Error(t, err)
	require.Empty(t, res.Content)
	require.True(t, strings.HasPrefix(err.Error(), "runs only inside a round"), err.Error())
	require.Contains(t, err.Error(), "`answer` signal")
}

func TestReasoningGuide(t *testing.T) {
	e := newEnv(t, nil)
	overview := e.mustCall(t, "reasoning_guide", tools.Request{}, `{}`)
	require.Contains(t, overview, "write_todo")
	require.Contains(t, overview, "Topics: errors, finishing, overview, planning, research, tools, verification.")
	require.NotContains(t, overview, "%!", "the topic list is filled in")

	for _, c := range []struct{ topic, want string }{
		{"errors", "write_error(tool, error, outcome=\"resolved\""},
		{"tool errors", "error_history"},
		{"Recover", "store_secret"},
		{"planning", "write_todo"},
		{"verify", "calculate"},
		{"tools", "run_tool(name, args)"},
		{"finishing", "write_result"},
	} {
		got := e.mustCall(t, "reasoning_guide", tools.Request{}, `{"topic":"`+c.topic+`"}`)
		require.Contains(t, got, c.want, c.topic)
	}
	_, err := e.call(t, "reasoning_guide", tools.Request{}, `{"topic":"astrology"}`)
	require.ErrorContains(t, err, `no topic "astrology"`)
	require.ErrorContains(t, err, "planning")
}
