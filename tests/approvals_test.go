package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

var allToolsFetched = []string{"edit_file", "run_command", "http_request", "read_files", "calculate"}

// waitPending polls `starter pending` until exactly these calls wait, and
// returns them.
func (e *env) waitPending(wfID string, ids ...string) []round.Pending {
	e.t.Helper()
	var pending []round.Pending
	require.Eventually(e.t, func() bool {
		r := e.starter(context.Background(), "", "pending", wfID)
		pending = nil
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &pending) != nil || len(pending) != len(ids) {
			return false
		}
		for i, p := range pending {
			if p.CallID != ids[i] {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "pending %v; last %+v", ids, pending)
	return pending
}

// waitingEdit starts a worker and round 1 with one edit_file call, e1,
// that writes text to path; it returns the round's end, its workflow id
// and e1's wait for a person.
func (e *env) waitingEdit(path, text string) (done <-chan result, wfID string, p round.Pending) {
	e.t.Helper()
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("e1", "edit_file", map[string]any{"path": path, "new_text": text}))
	done = e.startRound(in)
	return done, in.WorkflowID(), e.waitPending(in.WorkflowID(), "e1")[0]
}

// rememberRule runs round 1 with one run_command call, id, of command,
// which waits until the starter approves it with --remember --pattern
// pattern, and returns the round's result.
func (e *env) rememberRule(id, command, pattern string) round.Result {
	e.t.Helper()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched}, call(id, "run_command", map[string]any{"command": command}))
	done := e.startRound(in)
	e.waitPending(in.WorkflowID(), id)
	e.mustStarter("approve", in.WorkflowID(), id, "--remember", "--pattern", pattern)
	return decodeResult(e.t, <-done)
}

func (e *env) mustStarter(args ...string) result {
	e.t.Helper()
	r := e.starter(context.Background(), "", args...)
	require.Equal(e.t, 0, r.code, "starter %v: %s", args, r.stderr)
	return r
}

// TestApprovalRulesDoNotOverMatch: `approve --remember --pattern 'git *'`
// no longer approves `git status; touch X` or `git $(touch X)` in the next
// round; a plain --remember of `ls *.txt` approves that command only, not
// `ls ; touch X #.txt`; rules of a forged state or of another run are
// ignored, and a call nobody decides expires (T1, T3, T4).
func TestApprovalRulesDoNotOverMatch(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	st := &round.RunState{Fetched: allToolsFetched}
	in1 := e.input(1, "claude-code", st,
		call("g1", "run_command", map[string]any{"command": "git --version"}),
		call("l1", "run_command", map[string]any{"command": "ls *.txt"}))
	done := e.startRound(in1)
	wf1 := in1.WorkflowID()
	e.waitPending(wf1, "g1", "l1")
	// A pattern that cannot be a rule is refused, and nothing is decided.
	bad := e.starter(context.Background(), "", "approve", wf1, "g1", "--remember", "--pattern", "bash")
	require.Equal(t, 1, bad.code, bad.stderr)
	lines := strings.Split(strings.TrimSpace(bad.stderr), "\n")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "starter: --pattern for call g1"), bad.stderr)
	require.Contains(t, bad.stderr, `invalid pattern "bash" for run_command`)
	e.mustStarter("approve", wf1, "g1", "--remember", "--pattern", "git *")
	e.mustStarter("approve", wf1, "l1", "--remember")
	res1 := decodeResult(t, <-done)
	require.Len(t, res1.State.Allow, 2)
	for _, rule := range res1.State.Allow {
		require.NotEmpty(t, rule.MAC, "remembered rules are signed")
	}

	in2 := e.input(2, "claude-code", res1.State,
		call("a", "run_command", map[string]any{"command": "git status; touch X"}),
		call("b", "run_command", map[string]any{"command": "git $(touch X)"}),
		call("c", "run_command", map[string]any{"command": "ls ; touch X #.txt"}),
		call("d", "run_command", map[string]any{"command": "git --version"}),
		call("f", "run_command", map[string]any{"command": "ls *.txt"}))
	done = e.startRound(in2)
	wf2 := in2.WorkflowID()
	e.waitPending(wf2, "a", "b", "c")
	for _, id := range []string{"a", "b", "c"} {
		e.mustStarter("deny", wf2, id, "--reason", "no")
	}
	res2 := decodeResult(t, <-done)
	r := byID(res2)
	for _, id := range []string{"a", "b", "c"} {
		require.Equal(t, round.StatusSkipped, r[id].Status, id)
		require.Equal(t, round.DecisionDenied, r[id].Approval.Decision)
	}
	require.Equal(t, round.DecisionRule, r["d"].Approval.Decision, r["d"].Content)
	require.Equal(t, "run_command git *", r["d"].Approval.Rule)
	require.Equal(t, round.DecisionRule, r["f"].Approval.Decision, "the exact rule approves the exact command")
	require.NoFileExists(t, filepath.Join(e.workdir, "X"))

	// A state whose rules were written by hand, or copied from another run.
	forged := &round.RunState{Fetched: allToolsFetched, Allow: append([]round.AllowRule{
		{Tool: "run_command", Pattern: "*"},
		{Tool: "run_command", Pattern: "*", MAC: res1.State.Allow[0].MAC},
	}, res1.State.Allow...)}
	in3 := e.input(1, "claude-code", forged, call("t", "run_command", map[string]any{"command": "git --version"}))
	in3.RunID = "run-2"
	in3.ConfirmTimeoutSeconds = 2
	res3 := e.round(in3)
	require.Equal(t, round.StatusExpired, res3.Results[0].Status, "rules of a forged state or another run are ignored; no decision expires")
	require.Contains(t, res3.Results[0].Content, "did not run")
	require.Equal(t, round.DecisionExpired, res3.Results[0].Approval.Decision)
}

// TestApproveIsBoundToTheArgumentsAndSaysWho: `starter approve WID nosuch`
// exits non-zero; --args that fail the schema are refused and the call
// keeps waiting; accepted --args are what runs, recorded with who approved
// (--as) and how (cli); the arguments approved are shown on stderr (T1, T2).
func TestApproveIsBoundToTheArgumentsAndSaysWho(t *testing.T) {
	e := newEnv(t)
	done, wfID, _ := e.waitingEdit("a.txt", "from the model\n")

	ctx := context.Background()
	r := e.starter(ctx, "", "approve", wfID, "nosuch")
	require.NotEqual(t, 0, r.code, "approving a call that does not wait fails")
	require.Contains(t, r.stderr, "does not wait")
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)

	r = e.starter(ctx, "", "approve", wfID, "e1", "--args", `{"path":"a.txt"}`)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "new_text")
	e.waitPending(wfID, "e1")

	r = e.starter(ctx, "", "approve", wfID, "e1", "--as", "alice", "--args", `{"path":"a.txt","new_text":"edited\n"}`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, `approving e1 edit_file {"new_text":"from the model\n","path":"a.txt"} -> edited: {"path":"a.txt","new_text":"edited\n"}`)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	got, err := os.ReadFile(filepath.Join(e.workdir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "edited\n", string(got), "the edited arguments ran")
	a := res.Results[0].Approval
	require.Equal(t, round.DecisionApproved, a.Decision)
	require.Equal(t, "alice", a.By)
	require.Equal(t, "cli", a.Via)
	require.True(t, a.Edited)
	require.JSONEq(t, `{"path":"a.txt","new_text":"from the model\n"}`, a.OriginalArgs)

	r = e.starter(ctx, "", "approve", wfID, "e1")
	require.NotEqual(t, 0, r.code, "a decided call does not wait any more")
}

// TestTemporalCLIApprovesWithTheApprovalID: the official Temporal CLI
// approves by signalling confirm with the approval_id from pending; a
// signal with another id is ignored and recorded, and the call keeps
// waiting (T1).
func TestTemporalCLIApprovesWithTheApprovalID(t *testing.T) {
	cli := os.Getenv("TEMPORAL_CLI")
	if cli == "" {
		cli = "temporal"
	}
	if _, err := exec.LookPath(cli); err != nil {
		t.Skip("no temporal CLI (set TEMPORAL_CLI)")
	}
	e := newEnv(t)
	done, wfID, p := e.waitingEdit("b.txt", "yes\n")
	require.Len(t, p.ApprovalID, 64)
	require.NotEmpty(t, p.Reasons)
	require.True(t, p.Deadline.After(p.Since))

	signal := func(payload string) {
		out, err := exec.Command(cli, "workflow", "signal", "--address", temporalAddress(), "--workflow-id", wfID,
			"--name", names.SignalConfirm, "--input", payload).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	signal(`{"call_id":"e1","approve":true,"approval_id":"0000"}`)
	// The round takes the signal in its next workflow task; a query after
	// the signal is answered after that task.
	e.waitPending(wfID, "e1")
	signal(`{"call_id":"e1","approve":true,"approval_id":"` + p.ApprovalID + `","by":"ops"}`)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Equal(t, "ops", res.Results[0].Approval.By)
	require.Equal(t, "signal", res.Results[0].Approval.Via)
	var ignored []string
	for _, ev := range res.Events {
		if ev.Type == round.EventSignalIgnored {
			ignored = append(ignored, ev.Detail)
		}
	}
	require.Len(t, ignored, 1)
	require.Contains(t, ignored[0], "stale approval_id")
}

// TestSafeHTTPMethodsDoNotAsk: GET, HEAD and OPTIONS never ask, as the
// security page (docs/security.md) says; POST does (T5).
func TestSafeHTTPMethodsDoNotAsk(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hi")) }))
	defer srv.Close()
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("g", "http_request", map[string]any{"url": srv.URL, "method": "GET"}),
		call("h", "http_request", map[string]any{"url": srv.URL, "method": "HEAD"}),
		call("o", "http_request", map[string]any{"url": srv.URL, "method": "options"}),
		call("p", "http_request", map[string]any{"url": srv.URL, "method": "POST", "body": "x"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	e.waitPending(wfID, "p")
	e.mustStarter("deny", wfID, "p")
	res := decodeResult(t, <-done)
	r := byID(res)
	for _, id := range []string{"g", "h", "o"} {
		require.Equal(t, round.StatusOK, r[id].Status, "%s: %s", id, r[id].Content)
		require.Equal(t, round.DecisionNotNeeded, r[id].Approval.Decision)
	}
	require.Equal(t, round.StatusSkipped, r["p"].Status)
}

// TestExtendMovesTheDeadline: `starter extend WID CALL DURATION` moves a
// waiting call's deadline (T3).
func TestExtendMovesTheDeadline(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("e1", "edit_file", map[string]any{"path": "c.txt", "new_text": "x"}))
	in.ConfirmTimeoutSeconds = 20
	done := e.startRound(in)
	wfID := in.WorkflowID()
	before := e.waitPending(wfID, "e1")[0]
	r := e.mustStarter("extend", wfID, "e1", "1h")
	require.Contains(t, r.stderr, "call e1: added 1h0m0s; it waits until ")
	require.Eventually(t, func() bool {
		r := e.starter(context.Background(), "", "pending", wfID)
		var p []round.Pending
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &p) == nil && len(p) == 1 && p[0].Deadline.Sub(before.Deadline) == time.Hour
	}, 10*time.Second, 100*time.Millisecond)
	// The 7-day cap: extend says what it added, not what was asked (T3).
	r = e.mustStarter("extend", wfID, "e1", "168h")
	require.Contains(t, r.stderr, "not the 168h0m0s asked (a call waits at most 7 days)")
	r = e.mustStarter("extend", wfID, "e1", "1h")
	require.Contains(t, r.stderr, "call e1: nothing added")
	r = e.starter(context.Background(), "", "extend", wfID, "e1", "0s")
	require.Equal(t, 2, r.code, r.stderr)
	// A call that does not wait moves nothing, and says so (exit 1): the
	// extension is the validated update, not a signal the round ignores.
	r = e.starter(context.Background(), "", "extend", wfID, "nosuch", "1h")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "does not wait")
	e.mustStarter("deny", wfID, "e1")
	r = e.starter(context.Background(), "", "extend", wfID, "e1", "1h")
	require.Equal(t, 1, r.code, "a decided call no longer waits: %s", r.stderr)
	res := decodeResult(t, <-done)
	require.Equal(t, round.StatusSkipped, res.Results[0].Status)
	for _, ev := range res.Events {
		require.NotEqual(t, round.EventSignalIgnored, ev.Type, "a refused extension records nothing: %+v", ev)
	}
}

// TestMCPReadOnlyHintDoesNotSkipApproval: a tool whose MCP server declares
// readOnlyHint still asks, unless the operator marked the server
// trust_read_only_hints in MCP_CONFIG (T5).
func TestMCPReadOnlyHintDoesNotSkipApproval(t *testing.T) {
	dir := t.TempDir()
	server := buildMCPServer(t, dir, "testserver", "mcp-fixture")
	mcpConfig := writeMCPConfig(t, dir, map[string]any{"fix": map[string]any{"command": server},
		"trusted": map[string]any{"command": server, "trust_read_only_hints": true}})
	e := newEnv(t, "MCP_CONFIG="+mcpConfig)
	e.startWorker()
	in := e.input(1, "claude-code", &round.RunState{Fetched: []string{"mcp_fix_echo", "mcp_trusted_echo"}},
		call("m1", "mcp_fix_echo", map[string]any{"text": "untrusted"}),
		call("m2", "mcp_trusted_echo", map[string]any{"text": "trusted"}))
	done := e.startRound(in)
	wfID := in.WorkflowID()
	p := e.waitPending(wfID, "m1")[0]
	require.Contains(t, strings.Join(p.Reasons, " "), "trust_read_only_hints")
	e.mustStarter("deny", wfID, "m1")
	res := decodeResult(t, <-done)
	r := byID(res)
	require.Equal(t, round.StatusSkipped, r["m1"].Status)
	require.Equal(t, round.StatusOK, r["m2"].Status, r["m2"].Content)
	require.Equal(t, round.DecisionNotNeeded, r["m2"].Approval.Decision)
}

// TestConfirmTimeoutOutOfRangeIsAnInputError: 18446744074 seconds used to
// overflow into 290 ms; it is refused before anything runs (T3).
func TestConfirmTimeoutOutOfRangeIsAnInputError(t *testing.T) {
	e := newEnv(t)
	in := e.input(1, "claude-code", nil, call("c1", "calculate", map[string]any{"expression": "1"}))
	body := strings.Replace(mustJSON(t, in), `"session_id"`, `"confirm_timeout_seconds":18446744074,"session_id"`, 1)
	r := e.starter(context.Background(), body, "round", "-")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "confirm_timeout_seconds")
}

// TestGitRuleRunsNoProgramAConfigNames: with `git *` remembered, a `git
// status`, `git diff` and `git log -p` in a repository whose config names an
// fsmonitor program, an external diff, a textconv and a clean filter (which
// its .gitattributes names) run without them (T4, T12), and the bare-repository attack (a config written
// through cat-file, then `git -C gd fetch`) asks instead of running (T4).
func TestGitRuleRunsNoProgramAConfigNames(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	marker := filepath.Join(e.workdir, "PWNED")
	setup := exec.Command("sh", "-c", `set -e; export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git init -q r && cd r && echo a > a && git add a && git -c user.name=t -c user.email=t@e commit -qm a && echo b > a
git config core.fsmonitor 'touch `+marker+`; false'
git config diff.external 'touch `+marker+`; false' && git config diff.t.textconv 'touch `+marker+`; cat'
git config filter.f.clean 'touch `+marker+`; cat' && echo 'a diff=t filter=f' > .gitattributes`)
	setup.Dir = e.workdir
	out, err := setup.CombinedOutput()
	require.NoError(t, err, string(out))

	res1 := e.rememberRule("g1", "git --version", "git *")

	in2 := e.input(2, "claude-code", res1.State,
		call("s", "run_command", map[string]any{"command": "git -C r status --short"}),
		call("d", "run_command", map[string]any{"command": "git -C r diff"}),
		call("l", "run_command", map[string]any{"command": "git -C r log -p -1"}),
		call("c", "run_command", map[string]any{"command": "git init -q --bare gd && git cat-file -p HEAD:a > gd/config && git -C gd fetch"}))
	done := e.startRound(in2)
	e.waitPending(in2.WorkflowID(), "c")
	e.mustStarter("deny", in2.WorkflowID(), "c", "--reason", "no")
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.DecisionRule, r["s"].Approval.Decision, r["s"].Content)
	require.Equal(t, round.StatusOK, r["s"].Status, r["s"].Content)
	require.Contains(t, r["s"].Content, "M a")
	for id, want := range map[string]string{"d": "+b", "l": "+a"} {
		require.Equal(t, round.DecisionRule, r[id].Approval.Decision, r[id].Content)
		require.Equal(t, round.StatusOK, r[id].Status, r[id].Content)
		require.Contains(t, r[id].Content, want)
	}
	require.NoFileExists(t, marker, "a rule-approved git ran a program the repository's config names")
	require.Equal(t, round.DecisionDenied, r["c"].Approval.Decision)
}

// TestRuleScopesContainCommands (T12): through the real worker and the
// starter, a rule remembered for a read-only form is read-only and its
// commands say so; a write rule's sed changes a file of the workspace but
// not a .gitattributes of the protected set, which the sandbox binds
// read-only.
func TestRuleScopesContainCommands(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker()
	if strings.Contains(w.logs.String(), "no sandbox: rules for commands are off") {
		t.Skip("the worker has no sandbox here; TestSandboxModeAtStart checks what it says")
	}
	for _, f := range []string{"a.txt", "sub/.gitattributes"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.workdir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.workdir, f), []byte("original\n"), 0o644))
	}
	in1 := e.input(1, "claude-code", &round.RunState{Fetched: allToolsFetched},
		call("c1", "run_command", map[string]any{"command": "cat a.txt"}),
		call("s1", "run_command", map[string]any{"command": "sed -i s/original/first/ a.txt"}))
	done := e.startRound(in1)
	e.waitPending(in1.WorkflowID(), "c1", "s1")
	e.mustStarter("approve", in1.WorkflowID(), "c1", "--remember", "--pattern", "cat *")
	e.mustStarter("approve", in1.WorkflowID(), "s1", "--remember", "--pattern", "sed *", "--scope", "write")
	res1 := decodeResult(t, <-done)
	scopes := map[string]string{}
	for _, r := range res1.State.Allow {
		scopes[r.Pattern] = r.Scope
	}
	require.Equal(t, map[string]string{"cat *": "read-only", "sed *": "write"}, scopes)

	in2 := e.input(2, "claude-code", res1.State,
		call("c2", "run_command", map[string]any{"command": "cat a.txt"}),
		call("s2", "run_command", map[string]any{"command": "sed -i s/first/second/ a.txt"}),
		call("p2", "run_command", map[string]any{"command": "sed -i s/original/planted/ sub/.gitattributes"}))
	r := byID(decodeResult(t, <-e.startRound(in2)))
	for _, id := range []string{"c2", "s2", "p2"} {
		require.Equal(t, round.DecisionRule, r[id].Approval.Decision, "%s: %s", id, r[id].Content)
	}
	require.Equal(t, "read-only", r["c2"].Approval.Scope)
	require.Contains(t, r["c2"].Content, "[sandbox: bwrap, network none, scope read-only]")
	require.Equal(t, round.StatusOK, r["s2"].Status, r["s2"].Content)
	require.Contains(t, r["s2"].Content, "[sandbox: bwrap, network none, scope write]")
	require.NotEqual(t, round.StatusOK, r["p2"].Status, "a write rule's sed changed .gitattributes: %s", r["p2"].Content)
	got, err := os.ReadFile(filepath.Join(e.workdir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "second\n", string(got))
	got, err = os.ReadFile(filepath.Join(e.workdir, "sub", ".gitattributes"))
	require.NoError(t, err)
	require.Equal(t, "original\n", string(got))
}

// TestNoSandboxNoCommandRules (T12): on a worker with SANDBOX=none a
// remembered command rule approves nothing: the next matching command asks
// with the reason that says why, and the worker's start line says so too.
func TestNoSandboxNoCommandRules(t *testing.T) {
	e := newEnv(t)
	w := e.startWorkerBin(workerBin, "SANDBOX=none")
	require.Contains(t, w.logs.String(), "no sandbox: rules for commands are off")
	res1 := e.rememberRule("g1", "git --version", "git *")
	require.Len(t, res1.State.Allow, 1)

	in2 := e.input(2, "claude-code", res1.State,
		call("g2", "run_command", map[string]any{"command": "git status"}))
	done := e.startRound(in2)
	p := e.waitPending(in2.WorkflowID(), "g2")
	require.Contains(t, p[0].Reasons, "no sandbox: rules for commands are off")
	e.mustStarter("deny", in2.WorkflowID(), "g2", "--reason", "no")
	r := byID(decodeResult(t, <-done))
	require.Equal(t, round.DecisionDenied, r["g2"].Approval.Decision)
}
