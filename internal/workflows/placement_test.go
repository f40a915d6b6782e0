package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
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

// placedHarness is newHarness on a worker with WORKSPACE_PLACEMENT=host:
// BindWorkspace answers host-a at generation 3, HostAlive answers alive,
// and started records each activity's task queue (local ones as
// "local").
type placedHarness struct {
	*harness
	alive   func() bool
	started map[string]string
	binds   int
}

func newPlacedHarness(t *testing.T) *placedHarness {
	h := newHarness(t, 3)
	h.wf.Catalog = workflows.NewCatalog(h.reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: time.Minute, LocalMaxTimeout: time.Minute,
		Placement: &workflows.PlacementSettings{TaskQueue: "tq", HostID: "host-b", HostTimeout: 5 * time.Second}})
	p := &placedHarness{harness: h, alive: func() bool { return true }, started: map[string]string{}}
	h.env.RegisterActivityWithOptions(func(_ context.Context, in placement.BindInput) (placement.Binding, error) {
		p.binds++
		if in.Host != "host-b" || in.Session != "s" || in.TaskQueue != "tq" {
			return placement.Binding{}, errors.New("unexpected bind")
		}
		return placement.Binding{Host: "host-a", Generation: 3}, nil
	}, activity.RegisterOptions{Name: placement.ActivityBindWorkspace})
	h.env.RegisterActivityWithOptions(func(_ context.Context, in placement.HostAliveInput) (placement.HostAliveOutput, error) {
		return placement.HostAliveOutput{Alive: in.Host == "host-a" && p.alive()}, nil
	}, activity.RegisterOptions{Name: placement.ActivityHostAlive})
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == wire.ActivityExecuteTool {
			var in wire.ExecuteInput
			_ = args.Get(&in)
			p.started[in.CallID] = info.TaskQueue
		}
	})
	h.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
		if in, ok := args[0].(wire.ExecuteInput); ok {
			p.started[in.CallID] = "local"
		}
	})
	return p
}

// W4: in a placed round the workspace calls, read-only ones included, are
// regular activities on the bound host's queue; the calculation stays a
// local activity; the round binds once; dedupe entries of workspace calls
// carry the generation.
func TestPlacedRoundRunsWorkspaceCallsOnTheHost(t *testing.T) {
	p := newPlacedHarness(t)
	p.rec.Files["a.txt"] = "hello"
	res := p.run(t, auto(input(
		call("r1", "read_files", `{"paths":["a.txt"]}`),
		call("e1", "edit_file", `{"path":"b.txt","new_text":"x"}`),
		call("c1", "calculate", `{"expression":"1+1"}`))))
	for _, r := range res.Results {
		require.NotEqual(t, round.StatusError, r.Status, r.Content)
	}
	require.Equal(t, "tq@host-a", p.started["r1"], "a read-only workspace call is a regular activity on the host's queue")
	require.Equal(t, "tq@host-a", p.started["e1"])
	require.NotEqual(t, "tq@host-a", p.started["c1"], "calculate runs anywhere")
	require.Equal(t, 1, p.binds)
	for _, e := range res.State.Dedupe {
		if e.Tool == "calculate" {
			require.Zero(t, e.Generation)
		} else {
			require.Equal(t, 3, e.Generation, e.Tool)
		}
	}
}

// W5: a dedupe entry of another generation is not served, one of the
// binding's is.
func TestPlacedRoundServesOnlyItsGeneration(t *testing.T) {
	for gen, want := range map[int]round.Status{2: round.StatusOK, 3: round.StatusDeduped} {
		p := newPlacedHarness(t)
		in := auto(input(call("c1", "find_files", `{"pattern":"*.txt"}`)))
		in.Round = 2
		in.State.Seq = 1
		in.State.Dedupe = map[string]round.DedupeEntry{
			tools.DedupeKey("find_files", []byte(`{"pattern":"*.txt"}`)): {Tool: "find_files", Content: "a.txt", Round: 1, CallID: "old", Seq: 1, Volatile: true, Generation: gen},
		}
		res := p.run(t, in)
		require.Equal(t, want, res.Results[0].Status, "generation %d: %s", gen, res.Results[0].Content)
	}
}

// W5: with the host gone a workspace call never starts and ends
// workspace_unavailable naming the host; a call whose attempt started and
// was lost ends unknown_outcome; a call that was not started in time is
// scheduled again while the host lives, and ends workspace_unavailable
// once it is gone.
func TestLostHostCalls(t *testing.T) {
	t.Run("gone", func(t *testing.T) {
		p := newPlacedHarness(t)
		p.alive = func() bool { return false }
		res := p.run(t, auto(input(call("e1", "edit_file", `{"path":"b.txt","new_text":"x"}`), call("c1", "calculate", `{"expression":"1+1"}`))))
		require.Equal(t, round.StatusError, res.Results[0].Status)
		require.Equal(t, round.ErrorCodeWorkspaceUnavailable, res.Results[0].ErrorCode)
		require.Contains(t, res.Results[0].Content, "host host-a")
		require.Contains(t, res.Results[0].Content, "tq@host-a")
		require.Zero(t, res.Results[0].Attempts)
		require.Equal(t, round.StatusOK, res.Results[1].Status)
		require.NotContains(t, p.started, "e1")
	})
	t.Run("started", func(t *testing.T) {
		p := newPlacedHarness(t)
		p.env.OnActivity(wire.ActivityExecuteTool, mock.Anything, mock.Anything).Return(
			func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error) {
				return wire.ExecuteOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, errors.New("host gone"))
			})
		res := p.run(t, auto(input(call("e1", "run_command", `{"command":"make"}`))))
		require.Equal(t, round.StatusUnknownOutcome, res.Results[0].Status, res.Results[0].Content)
	})
	t.Run("not started in time", func(t *testing.T) {
		p := newPlacedHarness(t)
		tries := 0
		p.alive = func() bool { return tries < 2 }
		p.env.OnActivity(wire.ActivityExecuteTool, mock.Anything, mock.Anything).Return(
			func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error) {
				tries++
				return wire.ExecuteOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			})
		res := p.run(t, auto(input(call("e1", "edit_file", `{"path":"b.txt","new_text":"x"}`))))
		require.Equal(t, 2, tries, "scheduled again while the host lived")
		require.Equal(t, round.StatusError, res.Results[0].Status)
		require.Equal(t, round.ErrorCodeWorkspaceUnavailable, res.Results[0].ErrorCode)
	})
}

// A round of a placed worker without a workspace call asks nothing: no
// bind, no marker.
func TestPlacedRoundWithoutWorkspaceCalls(t *testing.T) {
	p := newPlacedHarness(t)
	res := p.run(t, auto(input(call("c1", "calculate", `{"expression":"1+1"}`))))
	require.Equal(t, round.StatusOK, res.Results[0].Status)
	require.Zero(t, p.binds)
}

// W5: a host that polls but never starts the call is waited for as long
// as the call may run, then the call ends workspace_unavailable.
func TestBusyHostIsWaitedForAsLongAsTheCallMayRun(t *testing.T) {
	p := newPlacedHarness(t)
	tries := 0
	p.env.OnActivity(wire.ActivityExecuteTool, mock.Anything, mock.Anything).Return(
		func(context.Context, wire.ExecuteInput) (wire.ExecuteOutput, error) {
			tries++
			return wire.ExecuteOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		})
	res := p.run(t, auto(input(call("e1", "edit_file", `{"path":"b.txt","new_text":"x"}`))))
	require.Greater(t, tries, 1)
	require.Equal(t, round.StatusError, res.Results[0].Status)
	require.Equal(t, round.ErrorCodeWorkspaceUnavailable, res.Results[0].ErrorCode)
	require.Contains(t, res.Results[0].Content, "did not start the call within")
}
