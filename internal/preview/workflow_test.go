package preview

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
)

var record = flag.Bool("record", false, "record testdata/preview.json against TEMPORAL_ADDRESS")

// TestWorkflowRunsThePreviewOnTheHostsQueue: the workflow schedules
// PreviewFile on the queue it is given, once, and returns the sealed
// answer unchanged.
func TestWorkflowRunsThePreviewOnTheHostsQueue(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	env.RegisterActivityWithOptions(func(context.Context, Input) (Output, error) {
		calls++
		return Output{}, fmt.Errorf("the host is away")
	}, activity.RegisterOptions{Name: ActivityName})
	var queue string
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		queue = info.TaskQueue
	})
	env.ExecuteWorkflow(Workflow, Request{TaskQueue: "q@host-a", Input: Input{Session: "s", Path: "a.txt"}})
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "the host is away")
	require.Equal(t, 1, calls, "a preview is tried once")
	require.Equal(t, "q@host-a", queue)
}

// TestReplayRecordedPreview replays a recorded preview workflow with
// today's code.
func TestReplayRecordedPreview(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "preview.json")))
}

// TestRecordPreviewHistory records testdata/preview.json (with -record).
func TestRecordPreviewHistory(t *testing.T) {
	if !*record {
		t.Skip("records only with -record")
	}
	addr := os.Getenv("TEMPORAL_ADDRESS")
	if addr == "" {
		addr = "127.0.0.1:7233"
	}
	c, err := tclient.Dial(tclient.Options{HostPort: addr})
	if err != nil {
		testenv.Unavailable(t, "temporal at %s: %v", addr, err)
	}
	defer c.Close()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	wd, err := tools.OpenWorkspaces(dir, tools.WorkspaceShared)
	require.NoError(t, err)
	defer wd.Close()
	q := fmt.Sprintf("preview-record-%d", time.Now().UnixNano())
	w := worker.New(c, q, worker.Options{})
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions((&Activities{Workdir: wd}).PreviewFile, activity.RegisterOptions{Name: ActivityName})
	require.NoError(t, w.Start())
	defer w.Stop()
	k := key(t)
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: WorkflowIDPrefix + "record", TaskQueue: q},
		WorkflowName, Request{TaskQueue: q, Input: Input{Path: "a.txt", PublicKey: k.PublicKey().Bytes()}})
	require.NoError(t, err)
	var out Output
	require.NoError(t, run.Get(ctx, &out))
	p, err := Open(k, out)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two"}, p.Lines)
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&h)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("testdata", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "preview.json"), raw, 0o644))
}
