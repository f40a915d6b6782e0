package activities

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// W1: a call acts in the workspace of the session its input names; a
// change check that cannot tell its session (no round's workflow id)
// counts every file as changed, so nothing stale is served.
func TestCallsActInTheirSessionsWorkspace(t *testing.T) {
	w, err := tools.OpenWorkspaces(t.TempDir(), tools.WorkspaceSession)
	require.NoError(t, err)
	defer w.Close()
	defs, stop, err := tools.PerSession(w, func(wd *tools.Workdir) ([]tools.Definition, func(), error) {
		return []tools.Definition{{Name: "where", SideEffect: tools.ReadOnly,
			Handler: func(context.Context, tools.Request) (tools.Result, error) { return tools.Text(wd.SessionID()), nil },
			Changed: func(context.Context, map[string]tools.FileState) []string { return nil },
			Reconcile: func(context.Context, tools.Request) (tools.Reconciliation, error) {
				return tools.Reconciliation{Verdict: tools.VerdictApplied, Content: wd.SessionID()}, nil
			}}}, nil, nil
	})
	require.NoError(t, err)
	defer stop()
	reg := tools.NewRegistry()
	reg.MustRegister(defs...)
	a := &Activities{Registry: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	env.RegisterActivityWithOptions(a.CheckFiles, activity.RegisterOptions{Name: wire.ActivityCheckFiles})
	env.RegisterActivityWithOptions(a.Reconcile, activity.RegisterOptions{Name: wire.ActivityReconcile})
	for _, session := range []string{"a", "b"} {
		v, err := env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: "c1", Tool: "where", Args: `{}`, SessionID: session, RunID: "r", Round: 1, WorkflowID: names.WorkflowID(session, "r", 1)})
		require.NoError(t, err)
		var out wire.ExecuteOutput
		require.NoError(t, v.Get(&out))
		require.Equal(t, session, out.Content)
	}
	v, err := env.ExecuteActivity(wire.ActivityReconcile, wire.ReconcileInput{Call: wire.ExecuteInput{CallID: "c1", Tool: "where", Args: `{}`, SessionID: "b", RunID: "r", Round: 1}})
	require.NoError(t, err)
	var rec wire.ReconcileOutput
	require.NoError(t, v.Get(&rec))
	require.Equal(t, "b", rec.Content)

	v, err = env.ExecuteActivity(wire.ActivityCheckFiles, wire.CheckFilesInput{Checks: []wire.FileCheck{{Key: "k", Tool: "where", Files: map[string]round.FileState{"x": {Size: 1}}}}})
	require.NoError(t, err)
	var chk wire.CheckFilesOutput
	require.NoError(t, v.Get(&chk))
	require.Equal(t, []string{"k"}, chk.Changed)
}
