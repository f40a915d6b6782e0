package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

func scopedCall(ctx context.Context, h tools.Handler, scope, args string) (tools.Result, error) {
	return h(ctx, tools.Request{CallID: "call_1", Args: json.RawMessage(args), RuleApproved: true, RuleScope: scope})
}

// TestRuleScopedCommandsRunContained (T12): a command a read-only rule
// approved changes nothing in the workspace; one a write rule approved
// changes the workspace but not .git/config or .env; each result says the
// scope it ran with, and a command a person approved runs as before.
func TestRuleScopedCommandsRunContained(t *testing.T) {
	tl, wd := newSandboxed(t, sandbox.Config{})
	dir := wd.Dir()
	for _, f := range []string{".git/config", ".env", "a.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("original\n"), 0o644))
	}
	run := tools.Typed(tl.runCommand)
	ctx := context.Background()

	res, err := scopedCall(ctx, run, sandbox.ScopeReadOnly, `{"command":"cat a.txt"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "original")
	require.Contains(t, res.Content, "\n[sandbox: bwrap, network none, scope read-only]\n")
	_, err = scopedCall(ctx, run, sandbox.ScopeReadOnly, `{"command":"echo changed > a.txt"}`)
	require.Error(t, err, "a read-only rule's command wrote the workspace")
	require.ErrorContains(t, err, "scope read-only")
	_, err = scopedCall(ctx, run, sandbox.ScopeReadOnly, `{"command":"echo new > new.txt"}`)
	require.Error(t, err)
	require.NoFileExists(t, filepath.Join(dir, "new.txt"))

	res, err = scopedCall(ctx, run, sandbox.ScopeWrite, `{"command":"echo changed > a.txt"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "\n[sandbox: bwrap, network none, scope write]\n")
	for _, f := range []string{".git/config", ".env"} {
		_, err = scopedCall(ctx, run, sandbox.ScopeWrite, `{"command":"echo planted > `+f+`"}`)
		require.Error(t, err, "a write rule's command wrote %s", f)
		got, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Equal(t, "original\n", string(got), f)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "changed\n", string(got))

	res, err = tools.Typed(tl.backgroundCommand)(ctx, tools.Request{CallID: "bg", RuleApproved: true, RuleScope: sandbox.ScopeReadOnly,
		Args: json.RawMessage(`{"command":"echo x > b.txt","wait_seconds":10}`)})
	require.NoError(t, err)
	require.Contains(t, res.Content, "[sandbox: bwrap, network none, scope read-only]\n")
	require.NoFileExists(t, filepath.Join(dir, "b.txt"))

	// A person's approval: the workspace and the protected set as before.
	res, err = call(ctx, run, `{"command":"echo person > .env && cat .env"}`)
	require.NoError(t, err)
	require.Contains(t, res.Content, "\n[sandbox: bwrap, network none]\n")
}
