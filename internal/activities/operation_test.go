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
	"github.com/toolround/toolround/tools"
)

// The handler sees the call's operation id, built from the execution that
// scheduled the activity.
func TestExecuteToolPassesOperationID(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Definition{Name: "op", SideEffect: tools.AtMostOnce,
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			return tools.Text(req.OperationID), nil
		}})
	a := &Activities{Registry: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	v, err := env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: "c9", Tool: "op", Args: `{}`, WorkflowID: "wf"})
	require.NoError(t, err)
	var out wire.ExecuteOutput
	require.NoError(t, v.Get(&out))
	require.Regexp(t, `^[^/]+/[^/]+/c9$`, out.Content, "<workflow id>/<run id>/<call id>")
}
