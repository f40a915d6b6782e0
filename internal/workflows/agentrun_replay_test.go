package workflows_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// TestAgentRunReplaysRecordedHistories replays recorded agent runs (under
// testdata/agentrun/, recorded from the integration tests' real runs with
// `temporal workflow show -o json`): the run of three rounds whose worker
// was killed during a model call replays without a nondeterminism error.
func TestAgentRunReplaysRecordedHistories(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "agentrun", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			h, err := tclient.HistoryFromJSON(f, tclient.HistoryJSONOptions{})
			require.NoError(t, err)
			r := worker.NewWorkflowReplayer()
			aw := &workflows.AgentWorkflow{}
			r.RegisterWorkflowWithOptions(aw.Run, workflow.RegisterOptions{Name: round.AgentWorkflowName})
			logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, r.ReplayWorkflowHistory(logger, h))
		})
	}
}
