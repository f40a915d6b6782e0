package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) *timestamppb.Timestamp {
	return timestamppb.New(t0.Add(time.Duration(ms) * time.Millisecond))
}

func payloads(data string) *commonpb.Payloads {
	return &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(data)}}}
}

func laMarkerEvent(id int64, ms int, activity string, doneMS int) *historypb.HistoryEvent {
	data := fmt.Sprintf(`{"ActivityID":"1","ActivityType":%q,"ReplayTime":%q,"Attempt":1}`,
		activity, t0.Add(time.Duration(doneMS)*time.Millisecond).Format(time.RFC3339Nano))
	return &historypb.HistoryEvent{EventId: id, EventTime: at(ms), EventType: enumspb.EVENT_TYPE_MARKER_RECORDED,
		Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
			MarkerName: "LocalActivity", Details: map[string]*commonpb.Payloads{"data": payloads(data)},
		}}}
}

// localRound is the history of a round whose two tools ran as local
// activities in its only workflow task.
func localRound() []*historypb.HistoryEvent {
	return []*historypb.HistoryEvent{
		{EventId: 1, EventTime: at(0), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
				Input: payloads(`{"session_id":"s"}`),
			}}},
		{EventId: 2, EventTime: at(0), EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED},
		{EventId: 3, EventTime: at(5), EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
			Attributes: &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{ScheduledEventId: 2}}},
		{EventId: 4, EventTime: at(20), EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
			Attributes: &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{StartedEventId: 3}}},
		{EventId: 5, EventTime: at(20), EventType: enumspb.EVENT_TYPE_MARKER_RECORDED,
			Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{MarkerName: "SideEffect"}}},
		laMarkerEvent(6, 20, "ExecuteTool", 7),
		laMarkerEvent(7, 20, "ExecuteTool", 9),
		laMarkerEvent(8, 20, "PublishRound", 12),
		{EventId: 9, EventTime: at(20), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionCompletedEventAttributes{WorkflowExecutionCompletedEventAttributes: &historypb.WorkflowExecutionCompletedEventAttributes{
				Result: payloads(`{"workflow_id":"w","events":[1,2,3]}`),
			}}},
	}
}

func TestTraceOfALocalActivityRound(t *testing.T) {
	events := localRound()
	tr := traceOf(events)
	size := 0
	for _, e := range events {
		size += proto.Size(e)
	}
	require.Equal(t, 9, tr.Events)
	require.Equal(t, size, tr.Bytes)
	require.Equal(t, 1, tr.WorkflowTasks)
	require.Equal(t, 4, tr.Markers)
	require.Zero(t, tr.Activities)
	require.Equal(t, len(`{"session_id":"s"}`), tr.InputBytes)
	require.Equal(t, len(`{"workflow_id":"w","events":[1,2,3]}`), tr.ResultBytes)
	require.Equal(t, map[string]int{"workflow_id": 3, "events": 7}, tr.ResultFields)
	require.Equal(t, 5*time.Millisecond, tr.TaskWait)
	require.Equal(t, 15*time.Millisecond, tr.TaskWork)
	require.Equal(t, 4*time.Millisecond, tr.Pass2, "task start at 5 ms, last tool done at 9 ms")
	require.Equal(t, 3*time.Millisecond, tr.Publish, "last tool at 9 ms, publish done at 12 ms")
	require.Equal(t, 8*time.Millisecond, tr.Finish, "publish done at 12 ms, task completed at 20 ms")
	require.Equal(t, 3, tr.CountByKind["MarkerRecorded/LocalActivity"])
	require.Equal(t, 1, tr.CountByKind["MarkerRecorded/SideEffect"])
}

func TestTraceOfActivitiesCountsTheirDispatchWait(t *testing.T) {
	events := []*historypb.HistoryEvent{
		{EventId: 1, EventTime: at(0), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED},
		{EventId: 5, EventTime: at(10), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED},
		{EventId: 6, EventTime: at(40), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
			Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: 5}}},
		{EventId: 7, EventTime: at(41), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED},
		{EventId: 8, EventTime: at(50), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED},
	}
	tr := traceOf(events)
	require.Equal(t, 1, tr.Activities)
	require.Equal(t, 30*time.Millisecond, tr.ActivityWait)
	require.Equal(t, 31*time.Millisecond, tr.Pass2, "scheduled at 10 ms, completed at 41 ms")
	require.Empty(t, tr.ResultFields)
}

func TestSlowRoundSaysWhereTheTimeWent(t *testing.T) {
	events := append(localRound()[:4:4],
		&historypb.HistoryEvent{EventId: 5, EventTime: at(20), EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT},
		&historypb.HistoryEvent{EventId: 6, EventTime: at(10020), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED},
	)
	smp := sample{WorkflowID: "w", Start: t0.Add(-3 * time.Millisecond), End: t0.Add(10030 * time.Millisecond)}
	r := slowRound(traceOf(events), smp)
	require.Equal(t, "w", r.WorkflowID)
	require.Equal(t, 10033.0, r.LatencyMS)
	require.Equal(t, 1, r.Timeouts)
	require.Equal(t, 3.0, r.Phases.Submit)
	require.Equal(t, 10.0, r.Phases.Result)
	require.Equal(t, 10020.0, r.Phases.Server)
	require.Equal(t, 10000.0, r.Phases.Waiting, "server time outside the task wait and work")
}

func TestSummarizeTraces(t *testing.T) {
	a, b, c := traceOf(localRound()), traceOf(localRound()), traceOf(localRound())
	c.WorkflowTasks = 3
	smp := sample{Start: t0.Add(-2 * time.Millisecond), End: t0.Add(26 * time.Millisecond)}
	hs := summarizeTraces([]*trace{a, b, c}, []sample{smp, smp, smp})
	require.Equal(t, 3, hs.Samples)
	require.Equal(t, 1.0, hs.WorkflowTasks, "the median")
	require.Equal(t, 3, hs.WorkflowTasksMax)
	require.Equal(t, 2.0, hs.Phases.Submit)
	require.Equal(t, 6.0, hs.Phases.Result)
	require.Equal(t, 20.0, hs.Phases.Server)
	require.Equal(t, 0.0, hs.Phases.Waiting)
	require.Equal(t, 3.0, hs.ResultFields["workflow_id"])
	require.NotEmpty(t, hs.Kinds)
	for i := 1; i < len(hs.Kinds); i++ {
		require.GreaterOrEqual(t, hs.Kinds[i-1].Bytes, hs.Kinds[i].Bytes, "kinds are sorted by size")
	}
	require.Equal(t, HistoryStats{}, summarizeTraces(nil, nil))
}

func TestParseSetup(t *testing.T) {
	tests := []struct {
		in      string
		want    SetupSpec
		wantErr string
	}{
		{in: "regular:LOCAL_ACTIVITY_MAX=0", want: SetupSpec{Name: "regular", Env: []string{"LOCAL_ACTIVITY_MAX=0"}}},
		{in: " two:A=1, B=x=y ,", want: SetupSpec{Name: "two", Env: []string{"A=1", "B=x=y"}}},
		{in: "plain", want: SetupSpec{Name: "plain"}},
		{in: ":A=1", wantErr: "want name:KEY=VALUE"},
		{in: "bad name:A=1", wantErr: "want name:KEY=VALUE"},
		{in: "x:NOEQUALS", wantErr: "is not KEY=VALUE"},
		{in: "x:=1", wantErr: "is not KEY=VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSetup(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseOptions(t *testing.T) {
	t.Setenv("BENCH_COMPARE", "a:X=1;b:Y=2")
	o, err := parseOptions([]string{"-iterations", "5", "-cases", "noop10", "-compare", "c:Z=3"})
	require.NoError(t, err)
	require.Equal(t, 5, o.Iterations)
	require.Equal(t, []string{"noop10"}, o.Cases)
	require.Equal(t, []string{"a", "b", "c"}, []string{o.Compare[0].Name, o.Compare[1].Name, o.Compare[2].Name})

	for _, args := range [][]string{
		{"-iterations", "0"},
		{"-cases", "nope"},
		{"-label", "a"},
		{"-label", "bad label"},
		{"-throughput-case", "nope"},
	} {
		_, err := parseOptions(args)
		require.Error(t, err, "%v", args)
	}
}

func TestParseReady(t *testing.T) {
	r := parseReady(readyPrefix + " pid=12 bound=4 local_max=30s task_queue=q")
	require.Equal(t, readyLine{bound: 4, localMax: "30s"}, r)
}

func TestReadMemoryOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	m := readMemory(os.Getpid())
	require.True(t, m.Available)
	require.Greater(t, m.PeakMiB, 1.0)
	require.GreaterOrEqual(t, m.PeakMiB, m.ResidMiB)
	require.False(t, readMemory(-1).Available)
}
