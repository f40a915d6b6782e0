package tests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/toolworker"
)

// A Python tool worker's functions that misbehave, in one round through the
// real worker (Y1a, Y3, Y4): one that raises (read-only: retried, then an
// error naming the exception; side-effecting: unknown_outcome, run once),
// one that returns what is not JSON (bad_result), one that returns 10 MiB
// (result_too_large, naming the size and the limit), one whose result is
// more than history keeps (the blob store holds it, as a built-in's), one
// that never returns (its timeout ends it). The round completes, and the
// tool worker serves the next round.
func TestPythonToolBadResultsY1a(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("bad-", true)
	marks := t.TempDir()
	tw := e.servePythonFile("testdata/usertools/bad.py", queue, marks)
	names := []string{"bad_raises", "bad_raises_once", "bad_not_json", "bad_huge", "bad_large", "bad_forever"}
	e.waitForTools(queue, names...)
	state := &round.RunState{Fetched: names}

	in := e.input(1, "claude-code", state,
		call("raises", "bad_raises", map[string]any{"why": "no disk"}),
		call("once", "bad_raises_once", map[string]any{"why": "no disk"}),
		call("notjson", "bad_not_json", map[string]any{"n": 1}),
		call("huge", "bad_huge", map[string]any{"mib": 10}),
		call("large", "bad_large", map[string]any{"kib": 200}),
		call("forever", "bad_forever", map[string]any{"n": 1}),
	)
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	got := byID(res)

	raises := got["raises"]
	require.Equal(t, round.StatusError, raises.Status, raises.Content)
	require.Contains(t, raises.Content, "the lookup broke: no disk", "the error names the exception's message")
	require.Greater(t, len(markLines(t, filepath.Join(marks, "raises"))), 1, "a read-only tool that raised is retried as a transient failure")

	once := got["once"]
	require.Equal(t, round.StatusUnknownOutcome, once.Status, once.Content)
	require.Len(t, markLines(t, filepath.Join(marks, "raises_once")), 1, "a side-effecting tool that raised is not run again")

	notJSON := got["notjson"]
	require.Equal(t, round.StatusError, notJSON.Status, notJSON.Content)
	require.Equal(t, "bad_result", notJSON.ErrorCode)
	require.Contains(t, notJSON.Content, "set", "the error names the type that is not JSON")

	huge := got["huge"]
	require.Equal(t, round.StatusError, huge.Status, "%.300s", huge.Content)
	require.Equal(t, "result_too_large", huge.ErrorCode)
	require.Contains(t, huge.Content, "bad_huge")
	require.Contains(t, huge.Content, "more than the limit of 1048576 bytes", "the error names the limit")
	require.Less(t, len(huge.Content), 1000)

	large := got["large"]
	require.Equal(t, round.StatusOK, large.Status, "%.300s", large.Content)
	require.True(t, strings.HasPrefix(large.ContentRef, cache.BlobPrefix), "a result above LARGE_RESULT_BYTES is kept in the blob store: %q", large.ContentRef)
	require.Equal(t, ("large-" + strings.Repeat("large-", 200<<10))[:200<<10], large.Content, "`starter round` resolves it whole")
	h := workflowHistory(t, in.WorkflowID())
	copies := float64(strings.Count(string(h.raw), "large-")) / float64((200<<10)/len("large-"))
	require.Less(t, copies, 1.5, "history holds the tool worker's answer once; the round's result keeps a reference")

	forever := got["forever"]
	require.Equal(t, round.StatusError, forever.Status, forever.Content)
	require.Contains(t, strings.ToLower(forever.Content), "timeout", forever.Content)
	require.NotEmpty(t, markLines(t, filepath.Join(marks, "forever")))

	require.True(t, tw.alive(), "the tool worker survived every call")
	again := e.input(2, "claude-code", res.State, call("small", "bad_large", map[string]any{"kib": 1}))
	res = e.round(again)
	require.Equal(t, round.StatusOK, byID(res)["small"].Status, byID(res)["small"].Content)
	require.Empty(t, byID(res)["small"].ContentRef)
}

// Bad declarations are refused when a tool worker starts, each in one clear
// line, and it exits 2 (Y1, Y2): a name a built-in has (refused by the
// catalog, through the real worker), a schema keyword the validator does
// not enforce (refused by the package before it announces, and by the
// catalog when another program announces it anyway, naming the keyword).
func TestPythonToolRefusedAtStartY1(t *testing.T) {
	e := newEnv(t)
	queue := e.startWorkerForTools("refused-", false)

	taken := e.servePythonFile("testdata/usertools/taken.py", queue, t.TempDir())
	require.Equal(t, 2, taken.exitCode(t, time.Minute), taken.logs.String())
	require.Equal(t, []string{"toolround.tools: tool edit_file refused: the name is taken by a tool of the worker (builtin)"},
		strings.Split(strings.TrimSpace(taken.logs.String()), "\n"))

	tuple := e.servePythonFile("testdata/usertools/tuple.py", queue, t.TempDir())
	require.Equal(t, 2, tuple.exitCode(t, time.Minute), tuple.logs.String())
	lines := strings.Split(strings.TrimSpace(tuple.logs.String()), "\n")
	require.Len(t, lines, 1, tuple.logs.String())
	require.Contains(t, lines[0], "point_lookup")
	require.Contains(t, lines[0], "prefixItems")

	// The catalog refuses the same schema from a program that skips the
	// package's check, naming the keyword and where it is.
	c, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer c.Close()
	schema := json.RawMessage(`{"type":"object","properties":{"point":{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}]}},"required":["point"]}`)
	hash, err := toolworker.SchemaHash(schema)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := c.NewWithStartWorkflowOperation(tclient.StartWorkflowOptions{
		ID: toolworker.CatalogIDPrefix + queue, TaskQueue: e.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, toolworker.CatalogWorkflowType, toolworker.Catalog{Queue: queue})
	h, err := c.UpdateWithStartWorkflow(ctx, tclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: tclient.UpdateWorkflowOptions{
			UpdateName: toolworker.AnnounceUpdate, WaitForStage: tclient.WorkflowUpdateStageCompleted,
			Args: []any{toolworker.Announcement{V: toolworker.WireVersion, Queue: queue, Tools: []toolworker.Decl{
				{Name: "point_lookup", Parameters: schema, Effect: toolworker.EffectReadOnly, SchemaHash: hash},
			}}},
		},
	})
	require.NoError(t, err)
	var res toolworker.AnnounceResult
	require.NoError(t, h.Get(ctx, &res))
	require.Empty(t, res.Accepted)
	require.Len(t, res.Refused, 1)
	require.Equal(t, "point_lookup", res.Refused[0].Name)
	require.Contains(t, res.Refused[0].Reason, `"prefixItems"`)
	require.Contains(t, res.Refused[0].Reason, "#/properties/point")
}
