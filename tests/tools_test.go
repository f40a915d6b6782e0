package tests

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets"
)

// TestWebToolsThroughAWorker runs the HTTP tools in a round against a local
// server: a refused credential gets the store_secret hint (P3.2), a stored
// secret reaches the server without ever appearing in a result or in the
// round's workflow history, and fetch_page returns readable text.
func TestWebToolsThroughAWorker(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/private":
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer s3cr3t-value" {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(`{"ok":true}`))
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<html><head><title>Garden</title><script>var x=1;</script></head><body><article><h1>Tomatoes</h1><p>Tomatoes need sun and water every day.</p></article></body></html>`))
		}
	}))
	defer srv.Close()
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+testKey)
	e.startWorker()
	state := &round.RunState{Fetched: []string{"http_request", "fetch_page", "store_secret", "search_web"}}

	in1 := e.input(1, "claude-code", state,
		call("h1", "http_request", map[string]any{"url": srv.URL + "/private"}),
		call("p1", "fetch_page", map[string]any{"url": srv.URL + "/page", "query": "tomatoes"}),
		call("w1", "search_web", map[string]any{"query": "tomatoes"}),
	)
	res1 := e.round(in1)
	r := byID(res1)
	require.Equal(t, round.StatusError, r["h1"].Status)
	require.Contains(t, r["h1"].Content, "401")
	require.Contains(t, r["h1"].Content, "next: a credential is missing or was refused: store it with store_secret", "P3.2")
	require.Equal(t, round.StatusOK, r["p1"].Status, r["p1"].Content)
	require.Contains(t, r["p1"].Content, "Tomatoes need sun and water")
	require.NotContains(t, r["p1"].Content, "var x=1", "scripts are not text")
	require.Equal(t, round.StatusError, r["w1"].Status)
	require.Contains(t, r["w1"].Content, "SEARCH_URL", "search_web says how to configure a backend")

	in2 := e.input(2, "claude-code", res1.State,
		call("s1", "store_secret", map[string]any{"name": "api_token", "value": "s3cr3t-value"}))
	res2 := e.round(in2)
	require.Equal(t, round.StatusOK, res2.Results[0].Status, res2.Results[0].Content)

	in3 := e.input(3, "claude-code", res2.State,
		call("h2", "http_request", map[string]any{"url": srv.URL + "/private", "headers": map[string]string{"Authorization": "Bearer {{secret:api_token}}"}}))
	done := e.startRound(in3)
	e.waitPending(in3.WorkflowID(), "h2") // a call that sends a secret asks, GET or not (T5)
	e.mustStarter("approve", in3.WorkflowID(), "h2")
	res3 := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res3.Results[0].Status, res3.Results[0].Content)
	mu.Lock()
	require.Equal(t, "Bearer s3cr3t-value", auth[len(auth)-1], "the secret reached the server")
	mu.Unlock()

	for i, res := range []round.Result{res1, res2, res3} {
		b, _ := json.Marshal(res)
		require.NotContains(t, string(b), "s3cr3t-value", "round %d's result", i+1)
	}
	for n := 1; n <= 3; n++ {
		history := e.history(names.WorkflowID(e.session, "run-1", n))
		require.NotContains(t, history, "s3cr3t-value", "workflow history of round %d", n)
	}
}

// testKey seals secrets in the tests (32 bytes, base64).
const testKey = "dGVzdGtleS10ZXN0a2V5LXRlc3RrZXktdGVzdGtleTA="

// history is a round's workflow history as the Temporal CLI prints it.
func (e *env) history(workflowID string) string {
	e.t.Helper()
	return e.workflowCLI("show", workflowID)
}

// workflowCLI is what `temporal workflow <verb> -w workflowID --output
// json` prints, with TEMPORAL_CLI or temporal from PATH.
func (e *env) workflowCLI(verb, workflowID string) string {
	e.t.Helper()
	cli := os.Getenv("TEMPORAL_CLI")
	if cli == "" {
		cli = "temporal"
	}
	out, err := exec.Command(cli, "workflow", verb, "--address", temporalAddress(), "-w", workflowID, "--output", "json").CombinedOutput()
	require.NoError(e.t, err, string(out))
	return string(out)
}

// TestExtensionToolsThroughAWorker registers a real MCP server's tools
// (MCP_CONFIG) and a script_* tool (TOOLS_CONFIG) and runs them in a round.
func TestExtensionToolsThroughAWorker(t *testing.T) {
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "testserver", "mcp-fixture")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"fix": map[string]any{"command": server}})
	toolsConfig := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(toolsConfig, []byte(`{"tools":[{"name":"script_shout","description":"Shout the text.",
		"parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
		"read_only":true,"concurrent":true,"command":["sh","-c","tr a-z A-Z"]},
		{"name":"script_env","description":"Print the environment.","parameters":{"type":"object"},
		"read_only":true,"command":["sh","-c","env"]}]}`), 0o600))

	// The worker holds its keys in its environment; a script must see none
	// of them, nor the worker's connections.
	ruleKey, secretKey := randomKey(t), randomKey(t)
	e := newEnv(t, "MCP_CONFIG="+mcpConfig, "TOOLS_CONFIG="+toolsConfig,
		"TOOLROUND_RULE_KEY="+ruleKey, "TOOLROUND_SECRET_KEY="+secretKey, "DECISION_API_KEY=leak-decision-key")
	e.startWorker()
	listed := e.starter(context.Background(), "", "tools", "--provider", "claude-code")
	require.Equal(t, 0, listed.code, listed.stderr)
	require.Contains(t, listed.stdout, `"mcp_fix_echo"`)
	require.Contains(t, listed.stdout, `"script_shout"`)

	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_fix_echo", "mcp_fix_fail", "script_shout", "script_env"}},
		call("m1", "mcp_fix_echo", map[string]any{"text": "hello mcp"}),
		call("m2", "mcp_fix_fail", map[string]any{"message": "broken on purpose"}),
		call("x1", "script_shout", map[string]any{"text": "quiet words"}),
		call("x2", "script_env", map[string]any{}),
	)
	in.AutoApprove = true
	res := e.round(in)
	r := byID(res)
	require.Equal(t, round.StatusOK, r["m1"].Status, r["m1"].Content)
	require.Contains(t, r["m1"].Content, "hello mcp")
	require.Equal(t, round.StatusError, r["m2"].Status)
	require.Contains(t, r["m2"].Content, "broken on purpose")
	require.Equal(t, round.StatusOK, r["x1"].Status, r["x1"].Content)
	require.Contains(t, r["x1"].Content, "QUIET WORDS")
	require.Equal(t, round.StatusOK, r["x2"].Status, r["x2"].Content)
	require.Contains(t, r["x2"].Content, "TOOLROUND_OPERATION_ID="+in.WorkflowID()+"/")
	for _, leak := range []string{ruleKey, secretKey, "leak-decision-key", "TOOLROUND_RULE_KEY=", "TOOLROUND_SECRET_KEY=",
		"DECISION_API_KEY=", "REDIS_URL=", "TEMPORAL_ADDRESS=", "TASK_QUEUE=", "MCP_CONFIG=", "TOOLS_CONFIG="} {
		require.NotContains(t, r["x2"].Content, leak, "a script_* process sees the worker's environment")
	}
}

// randomKey is a fresh key as TOOLROUND_SECRET_KEY and TOOLROUND_RULE_KEY
// take it.
func randomKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return secrets.EncodeKey(k)
}

// TestAskUserThroughStarter answers an ask_user call with `starter answer`.
func TestAskUserThroughStarter(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "openai", nil, call("q1", "ask_user", map[string]any{"questions": []string{"Which branch?"}}))
	done := e.startRound(in)
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", in.WorkflowID())
		return r.code == 0 && strings.Contains(r.stdout, `"answer"`)
	}, 30*time.Second, 100*time.Millisecond)
	a := e.starter(context.Background(), "", "answer", in.WorkflowID(), "q1", "main, please")
	require.Equal(t, 0, a.code, a.stderr)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, "Q: Which branch?\nA: main, please", res.Results[0].Content)
}
