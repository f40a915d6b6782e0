package workflows_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/toolround/toolround/round"
)

// TestPlacementHistories: the rounds recorded on workers with
// WORKSPACE_PLACEMENT=host (W4, W5) hold the workspace-placement marker,
// and no other recorded round does. In the placed one the workspace calls
// ran as regular activities on the host's queue, <queue>@host-a, and the
// calculation did not; in the other the host had no poller, so its
// workspace calls never started and ended workspace_unavailable naming
// the host. Their replay is in TestReplayRecordedHistories.
func TestPlacementHistories(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	found := 0
	for _, h := range loadHistories(t) {
		markers := 0
		onHost := map[string]string{}
		for _, e := range h.history.GetEvents() {
			if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
				var id string
				require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
				if id == "workspace-placement" {
					markers++
				}
			}
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				onHost[a.GetActivityId()] = a.GetTaskQueue().GetName()
			}
		}
		switch h.name {
		case "workspace_placement":
			found++
			require.Equal(t, 1, markers)
			for _, id := range []string{"e1", "r1"} {
				require.True(t, strings.HasSuffix(onHost[id], "@host-a"), "%s ran on %q, not the host's queue", id, onHost[id])
			}
			require.False(t, strings.Contains(onHost["c1"], "@"), "calculate is no workspace call")
			for _, r := range h.result.Results {
				require.Equal(t, round.StatusOK, r.Status, r.Content)
			}
		case "workspace_unavailable":
			found++
			require.Equal(t, 1, markers)
			require.Empty(t, onHost["e1"], "a call whose host is gone is never scheduled")
			for _, r := range h.result.Results[:2] {
				require.Equal(t, round.StatusError, r.Status)
				require.Equal(t, round.ErrorCodeWorkspaceUnavailable, r.ErrorCode)
				require.Contains(t, r.Content, "host host-gone")
				require.Zero(t, r.Attempts)
			}
			require.Equal(t, round.StatusOK, h.result.Results[2].Status)
		default:
			require.Zero(t, markers, "%s: a round of a shared worker asked for workspace-placement", h.name)
		}
	}
	require.Equal(t, 2, found, "testdata/workspace_placement.json or workspace_unavailable.json is missing")
}
