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
	"github.com/toolround/toolround/tools"
)

// TestCheckFilesAsksTheToolThatMadeTheEntry: CheckFiles reports the entries
// whose tool finds a changed file, and those it cannot check at all (a
// tool gone, or one without Changed); the file states reach the tool as
// they were recorded, and ExecuteTool hands a result's states on.
func TestCheckFilesAsksTheToolThatMadeTheEntry(t *testing.T) {
	disk := map[string]tools.FileState{"a.txt": {Size: 1, ModTime: 10, SHA256: "aa"}, "b.txt": {Size: 2, ModTime: 20, SHA256: "bb"}}
	var seen []map[string]tools.FileState
	reg := tools.NewRegistry()
	reg.MustRegister(
		tools.Definition{Name: "look", SideEffect: tools.ReadOnly,
			Handler: func(context.Context, tools.Request) (tools.Result, error) {
				return tools.Result{Content: "looked", Files: map[string]tools.FileState{"a.txt": disk["a.txt"]}}, nil
			},
			Changed: func(_ context.Context, files map[string]tools.FileState) []string {
				seen = append(seen, files)
				var out []string
				for p, s := range files {
					if disk[p] != s {
						out = append(out, p)
					}
				}
				return out
			}},
		tools.Definition{Name: "plain", SideEffect: tools.ReadOnly,
			Handler: func(context.Context, tools.Request) (tools.Result, error) { return tools.Text("plain"), nil }},
	)
	a := &Activities{Registry: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.CheckFiles, activity.RegisterOptions{Name: wire.ActivityCheckFiles})
	env.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})

	v, err := env.ExecuteActivity(wire.ActivityExecuteTool, wire.ExecuteInput{CallID: "c1", Tool: "look", Args: `{}`, SessionID: "s", RunID: "r", Round: 1, WorkflowID: "wf"})
	require.NoError(t, err)
	var ex wire.ExecuteOutput
	require.NoError(t, v.Get(&ex))
	require.Equal(t, "looked", ex.Content)
	require.Equal(t, map[string]round.FileState{"a.txt": {Size: 1, ModTime: 10, SHA256: "aa"}}, ex.Files)

	in := wire.CheckFilesInput{Checks: []wire.FileCheck{
		{Key: "same", Tool: "look", Files: map[string]round.FileState{"a.txt": {Size: 1, ModTime: 10, SHA256: "aa"}}},
		{Key: "digest", Tool: "look", Files: map[string]round.FileState{"a.txt": {Size: 1, ModTime: 10, SHA256: "aa"}, "b.txt": {Size: 2, ModTime: 20, SHA256: "b0"}}},
		{Key: "no-hook", Tool: "plain", Files: map[string]round.FileState{"a.txt": {Size: 1}}},
		{Key: "gone", Tool: "removed_tool", Files: map[string]round.FileState{"a.txt": {Size: 1}}},
	}}
	v, err = env.ExecuteActivity(wire.ActivityCheckFiles, in)
	require.NoError(t, err)
	var out wire.CheckFilesOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, []string{"digest", "no-hook", "gone"}, out.Changed)
	require.Len(t, seen, 2)
	require.Equal(t, map[string]tools.FileState{"a.txt": {Size: 1, ModTime: 10, SHA256: "aa"}}, seen[0])
}
