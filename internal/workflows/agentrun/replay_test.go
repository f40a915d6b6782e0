package agentrun_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round/names"
)

// TestAgentRunReplaysRecordedHistories replays recorded agent runs (under
// testdata/agentrun/, recorded from the integration tests' real runs with
// `temporal workflow show -o json`): the run of three rounds whose worker
// was killed during a model call, and the three rounds on the Messages API
// (TestAgentRunOnEachAPI/anthropic, change agent-apis); and, recorded with
// TestRecordAgentHistories, the runs of agent-limits and agent-budget
// (limit_reached, context_exceeded, the references refreshed at
// continue-as-new and the execution after it) replay without a
// nondeterminism error.
func TestAgentRunReplaysRecordedHistories(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			h := testenv.ReadHistory(t, p)
			r := worker.NewWorkflowReplayer()
			aw := &agentrun.Workflow{}
			r.RegisterWorkflowWithOptions(aw.Run, workflow.RegisterOptions{Name: names.AgentWorkflowName})
			logger := testenv.QuietLogger()
			require.NoError(t, r.ReplayWorkflowHistory(logger, h))
		})
	}
}

// TestAgentRunRecordedHistoriesCoverTheAPIs: some recorded agent run took
// the path of change agent-apis on the Messages API (F4), its turns in
// format anthropic, so that its replay covers that path.
func TestAgentRunRecordedHistoriesCoverTheAPIs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	data := regexp.MustCompile(`"data": *"([A-Za-z0-9+/=]*)"`)
	covered := false
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		marker, anthropic := false, false
		for _, m := range data.FindAllSubmatch(b, -1) {
			plain, err := base64.StdEncoding.DecodeString(string(m[1]))
			require.NoError(t, err)
			marker = marker || strings.Contains(string(plain), `"agent-apis`)
			anthropic = anthropic || strings.Contains(string(plain), `"format":"anthropic"`)
		}
		covered = covered || marker && anthropic
	}
	require.True(t, covered, "no recorded agent run took the agent-apis path in format anthropic")
}
