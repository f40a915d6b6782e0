package tests

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/toolworker"
)

// secretEcho is secret_echo in Go; testdata/usertools/secret.py and the
// TypeScript tool worker serve the same tool.
func secretEcho() toolworker.Tool {
	return toolworker.New("secret_echo", func(_ context.Context, _ toolworker.Call, a struct {
		Token string `json:"token"`
		Note  string `json:"note"`
	}) (any, error) {
		switch a.Note {
		case "fail":
			return nil, &toolworker.ToolError{Message: "the server refused token " + a.Token}
		case "raise":
			return nil, errors.New("the connection dropped while sending " + a.Token)
		}
		sum := sha256.Sum256([]byte(a.Token))
		return map[string]any{"echo": a.Token, "b64": base64.StdEncoding.EncodeToString([]byte(a.Token)),
			"hex": hex.EncodeToString([]byte(a.Token)), "sha256": hex.EncodeToString(sum[:]), "note": a.Note}, nil
	}, toolworker.Description("Echo a token back in several encodings."))
}

// A user tool's call that sends {{secret:NAME}} (Y3, T9), in Go, Python
// and TypeScript: it asks even with auto_approve; the function gets the
// stored value (its sha256 proves it) while the activity input holds it
// sealed; what the tool answers (a result that echoes it raw, in base64
// and hex; a ToolError that names it; an exception that names it) reaches
// the round's result redacted, and the value appears nowhere in workflow
// history in any of those forms. The Python and TypeScript tool workers
// hold only their queue's key, from `starter tool-key`.
func TestUserToolSecretsY3(t *testing.T) {
	const value = "tok-9f3a71c2e8d4b605"
	sum := sha256.Sum256([]byte(value))
	forms := []string{value, base64.StdEncoding.EncodeToString([]byte(value)), hex.EncodeToString([]byte(value)),
		base64.StdEncoding.EncodeToString([]byte("Bearer " + value))}
	langs := []struct {
		name  string
		serve func(e *env, queue string)
	}{
		{"go", func(e *env, queue string) { e.serveTools(queue, []toolworker.Tool{secretEcho()}) }},
		{"python", func(e *env, queue string) {
			e.extra = append(e.extra, "TOOLROUND_TOOL_KEY="+e.toolKey(queue))
			e.servePythonFile("testdata/usertools/secret.py", queue, e.t.TempDir())
		}},
		{"typescript", func(e *env, queue string) {
			e.extra = append(e.extra, "TOOLROUND_TOOL_KEY="+e.toolKey(queue))
			e.startTypeScriptToolWorker(queue)
		}},
	}
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			e := newEnv(t)
			queue := e.startWorkerForTools("secret-"+l.name+"-", true)
			l.serve(e, queue)
			e.waitForTools(queue, "secret_echo")

			in1 := e.input(1, "claude-code", &round.RunState{Fetched: []string{"store_secret"}},
				call("s", "store_secret", map[string]any{"name": "api_key", "value": value}))
			in1.AutoApprove = true
			res1 := e.round(in1)
			require.Equal(t, round.StatusOK, byID(res1)["s"].Status, byID(res1)["s"].Content)

			st := res1.State
			st.Fetched = append(st.Fetched, "secret_echo")
			in := e.input(2, "claude-code", st,
				call("a", "secret_echo", map[string]any{"token": "{{secret:api_key}}", "note": "ok"}),
				call("b", "secret_echo", map[string]any{"token": "Bearer {{ secret:api_key }}", "note": "fail"}),
				call("c", "secret_echo", map[string]any{"token": "{{secret:api_key}}", "note": "raise"}),
				call("d", "secret_echo", map[string]any{"token": "{{secret:nope_missing}}", "note": "ok"}))
			in.AutoApprove = true // does not approve a call that sends a secret
			done := e.startRound(in)
			pending := e.waitPending(in.WorkflowID(), "a", "b", "c", "d")
			require.Contains(t, strings.Join(pending[0].Reasons, "; "), "sends secret api_key to secret_echo")
			var outputs []string
			r := e.approveAll(in.WorkflowID(), done, &outputs)
			require.Equal(t, 0, r.code, r.stderr)
			res := decodeResult(t, r)
			requireEveryCallOnce(t, in, res)
			got := byID(res)

			require.Equal(t, round.StatusOK, got["a"].Status, got["a"].Content)
			var echo map[string]string
			require.NoError(t, json.Unmarshal([]byte(got["a"].Content), &echo), got["a"].Content)
			require.Equal(t, hex.EncodeToString(sum[:]), echo["sha256"], "the function got the stored value")
			for _, k := range []string{"echo", "b64", "hex"} {
				require.Equal(t, "[secret:api_key]", echo[k], "%s is redacted", k)
			}
			require.Equal(t, round.StatusError, got["b"].Status)
			require.Contains(t, got["b"].Content, "the server refused token Bearer [secret:api_key]")
			require.Equal(t, round.StatusUnknownOutcome, got["c"].Status, got["c"].Content)
			require.Equal(t, round.StatusError, got["d"].Status)
			require.Contains(t, got["d"].Content, "secret nope_missing is missing")

			seen := rawHistory(t, e.goClient(), in.WorkflowID()) + r.stdout + r.stderr + strings.Join(outputs, "")
			require.Contains(t, seen, "sealed:v1:", "the values went sealed")
			for _, f := range forms {
				require.NotContains(t, seen, f, "a form of the value is in history or the starter's output")
			}
		})
	}
}

// toolKey is what `starter tool-key QUEUE` prints.
func (e *env) toolKey(queue string) string {
	e.t.Helper()
	r := e.mustStarter("tool-key", queue)
	key := strings.TrimSpace(r.stdout)
	b, err := base64.StdEncoding.DecodeString(key)
	require.NoError(e.t, err, fmt.Sprintf("starter tool-key printed %q", key))
	require.Len(e.t, b, 32)
	return key
}
