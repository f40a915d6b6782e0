package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/toolround/toolround/internal/wire"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// trace is what one round's workflow history says about it.
type trace struct {
	Events        int
	Bytes         int
	WorkflowTasks int
	Activities    int
	Markers       int
	InputBytes    int
	ResultBytes   int
	Started       time.Time
	Completed     time.Time
	// TaskWait is the time workflow tasks waited for a worker to pick them
	// up; TaskWork the time workers held them (local activities run inside).
	TaskWait     time.Duration
	TaskWork     time.Duration
	ActivityWait time.Duration
	// Pass2 is the span of the tool calls: from the first activity's
	// scheduling, or the start of the workflow task that ran the first
	// ExecuteTool local activity, to the last call's completion. Publish is
	// the PublishRound local activity and pass 3 before it; Finish runs from
	// its completion to the server's record of the completed task. Local
	// activity times come from their markers, which hold the workflow time
	// at which each one completed (the task's start on the server clock plus
	// the worker's own elapsed time, so they leave out the task's delivery).
	Pass2        time.Duration
	Publish      time.Duration
	Finish       time.Duration
	BytesByKind  map[string]int
	CountByKind  map[string]int
	ResultFields map[string]int
	// Timeouts counts timed-out and failed workflow and activity tasks: each
	// one costs a retry.
	Timeouts int
}

// laMarker is the part of a local activity marker's data that is read here.
type laMarker struct {
	ActivityType string
	ReplayTime   time.Time
}

// fetchTrace reads a closed workflow's history.
func fetchTrace(ctx context.Context, tc tclient.Client, workflowID string) (*trace, error) {
	it := tc.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		events = append(events, e)
	}
	return traceOf(events), nil
}

// traceOf sums a history: sizes are proto sizes of the events as the server
// stores and sends them.
func traceOf(events []*historypb.HistoryEvent) *trace {
	t := &trace{BytesByKind: map[string]int{}, CountByKind: map[string]int{}, ResultFields: map[string]int{}}
	var taskStart, taskDone, lastMark, pass2Start, pass2End time.Time
	pass2 := func(start, end time.Time) {
		if pass2Start.IsZero() || start.Before(pass2Start) {
			pass2Start = start
		}
		if end.After(pass2End) {
			pass2End = end
		}
	}
	wftScheduled := map[int64]time.Time{}
	wftStarted := map[int64]time.Time{}
	actScheduled := map[int64]time.Time{}
	for _, e := range events {
		size := proto.Size(e)
		at := e.GetEventTime().AsTime()
		kind := eventKind(e)
		t.Events++
		t.Bytes += size
		t.BytesByKind[kind] += size
		t.CountByKind[kind]++
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			t.Started = at
			t.InputBytes = payloadsSize(e.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads())
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			t.Completed = at
			ps := e.GetWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
			t.ResultBytes = payloadsSize(ps)
			if len(ps) == 1 {
				t.ResultFields = jsonFieldSizes(ps[0].GetData())
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			wftScheduled[e.GetEventId()] = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			id := e.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()
			wftStarted[e.GetEventId()] = at
			taskStart, lastMark = at, at
			if s, ok := wftScheduled[id]; ok {
				t.TaskWait += at.Sub(s)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			t.WorkflowTasks++
			if s, ok := wftStarted[e.GetWorkflowTaskCompletedEventAttributes().GetStartedEventId()]; ok {
				t.TaskWork += at.Sub(s)
			}
			taskDone = at
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			t.Activities++
			actScheduled[e.GetEventId()] = at
			pass2(at, at)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			pass2(at, at)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if s, ok := actScheduled[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]; ok {
				t.ActivityWait += at.Sub(s)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
			enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			t.Timeouts++
			if e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT && e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
				pass2(at, at)
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			t.Markers++
			m, ok := localActivityMarker(e)
			if !ok {
				continue
			}
			switch m.ActivityType {
			case wire.ActivityExecuteTool:
				pass2(taskStart, m.ReplayTime)
			case wire.ActivityPublishRound:
				t.Publish = m.ReplayTime.Sub(lastMark)
				t.Finish = taskDone.Sub(m.ReplayTime)
			}
			lastMark = m.ReplayTime
		}
	}
	t.Pass2 = pass2End.Sub(pass2Start)
	return t
}

// eventKind is the event type, with the marker name for markers
// (MarkerRecorded/LocalActivity, MarkerRecorded/SideEffect).
func eventKind(e *historypb.HistoryEvent) string {
	kind := e.GetEventType().String()
	if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED {
		kind += "/" + e.GetMarkerRecordedEventAttributes().GetMarkerName()
	}
	return kind
}

// localActivityMarker decodes a local activity marker's data.
func localActivityMarker(e *historypb.HistoryEvent) (laMarker, bool) {
	var m laMarker
	a := e.GetMarkerRecordedEventAttributes()
	if a.GetMarkerName() != "LocalActivity" {
		return m, false
	}
	ps := a.GetDetails()["data"].GetPayloads()
	if len(ps) == 0 || json.Unmarshal(ps[0].GetData(), &m) != nil || m.ReplayTime.IsZero() {
		return m, false
	}
	return m, true
}

// jsonFieldSizes is the size of each top-level field of a JSON object.
func jsonFieldSizes(data []byte) map[string]int {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return map[string]int{}
	}
	out := make(map[string]int, len(fields))
	for k, v := range fields {
		out[k] = len(v)
	}
	return out
}

type sizer interface{ GetData() []byte }

func payloadsSize[P sizer](ps []P) int {
	n := 0
	for _, p := range ps {
		n += len(p.GetData())
	}
	return n
}

// HistoryStats describes the histories of a case's sampled rounds: medians
// over the samples, and the mean events and bytes by kind.
type HistoryStats struct {
	Samples       int     `json:"samples"`
	Events        float64 `json:"events"`
	Bytes         float64 `json:"bytes"`
	WorkflowTasks float64 `json:"workflow_tasks"`
	// WorkflowTasksMax shows rounds that needed more tasks than the median.
	WorkflowTasksMax int     `json:"workflow_tasks_max"`
	Activities       float64 `json:"activities"`
	Markers          float64 `json:"markers"`
	InputBytes       float64 `json:"input_bytes"`
	ResultBytes      float64 `json:"result_bytes"`
	Phases           Phases  `json:"phases_ms"`
	Kinds            []Kind  `json:"by_kind"`
	// ResultFields is the mean size of each top-level field of the round's
	// result (the JSON payload of the completed event).
	ResultFields map[string]float64 `json:"result_fields_bytes,omitempty"`
	// Slowest are the case's slowest measured rounds, to find where a tail
	// went (`temporal workflow show -w <id>` shows the rest).
	Slowest []SlowRound `json:"slowest,omitempty"`
}

// SlowRound is one round and where its time went.
type SlowRound struct {
	WorkflowID    string  `json:"workflow_id"`
	LatencyMS     float64 `json:"latency_ms"`
	Phases        Phases  `json:"phases_ms"`
	WorkflowTasks int     `json:"workflow_tasks"`
	Timeouts      int     `json:"timeouts_and_failures"`
}

func slowRound(t *trace, smp sample) SlowRound {
	ms := func(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }
	server := t.Completed.Sub(t.Started)
	return SlowRound{
		WorkflowID: smp.WorkflowID, LatencyMS: ms(smp.End.Sub(smp.Start)), WorkflowTasks: t.WorkflowTasks, Timeouts: t.Timeouts,
		Phases: Phases{
			Submit: ms(t.Started.Sub(smp.Start)), TaskWait: ms(t.TaskWait), TaskWork: ms(t.TaskWork), Pass2: ms(t.Pass2),
			Publish: ms(t.Publish), Finish: ms(t.Finish), ActivityWait: ms(t.ActivityWait),
			Waiting: ms(server - t.TaskWait - t.TaskWork), Server: ms(server), Result: ms(smp.End.Sub(t.Completed)),
		},
	}
}

// Phases split a round's latency (medians in ms, so they need not add up):
// Submit from the start call until the server recorded the start; TaskWait
// and TaskWork of the workflow tasks; Waiting on the server otherwise (for
// regular activities); Result from completion until the client had it.
type Phases struct {
	Submit       float64 `json:"submit"`
	TaskWait     float64 `json:"task_wait"`
	TaskWork     float64 `json:"task_work"`
	Pass2        float64 `json:"pass2"`
	Publish      float64 `json:"publish"`
	Finish       float64 `json:"finish"`
	ActivityWait float64 `json:"activity_wait"`
	Waiting      float64 `json:"waiting"`
	Server       float64 `json:"server"`
	Result       float64 `json:"result"`
}

// Kind is the mean count and size of one kind of event per round.
type Kind struct {
	Kind  string  `json:"kind"`
	Count float64 `json:"count"`
	Bytes float64 `json:"bytes"`
}

// sample is one measured round: its workflow and when the client started
// and finished waiting for it.
type sample struct {
	WorkflowID string
	Start, End time.Time
}

func summarizeTraces(ts []*trace, samples []sample) HistoryStats {
	hs := HistoryStats{Samples: len(ts)}
	if len(ts) == 0 {
		return hs
	}
	col := func(f func(*trace) float64) float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = f(t)
		}
		return round2(Median(v))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	hs.Events = col(func(t *trace) float64 { return float64(t.Events) })
	hs.Bytes = col(func(t *trace) float64 { return float64(t.Bytes) })
	hs.WorkflowTasks = col(func(t *trace) float64 { return float64(t.WorkflowTasks) })
	hs.Activities = col(func(t *trace) float64 { return float64(t.Activities) })
	hs.Markers = col(func(t *trace) float64 { return float64(t.Markers) })
	hs.InputBytes = col(func(t *trace) float64 { return float64(t.InputBytes) })
	hs.ResultBytes = col(func(t *trace) float64 { return float64(t.ResultBytes) })
	for _, t := range ts {
		hs.WorkflowTasksMax = max(hs.WorkflowTasksMax, t.WorkflowTasks)
	}
	server := func(t *trace) time.Duration { return t.Completed.Sub(t.Started) }
	hs.Phases = Phases{
		TaskWait:     col(func(t *trace) float64 { return ms(t.TaskWait) }),
		TaskWork:     col(func(t *trace) float64 { return ms(t.TaskWork) }),
		Pass2:        col(func(t *trace) float64 { return ms(t.Pass2) }),
		Publish:      col(func(t *trace) float64 { return ms(t.Publish) }),
		Finish:       col(func(t *trace) float64 { return ms(t.Finish) }),
		ActivityWait: col(func(t *trace) float64 { return ms(t.ActivityWait) }),
		Waiting:      col(func(t *trace) float64 { return ms(server(t) - t.TaskWait - t.TaskWork) }),
		Server:       col(func(t *trace) float64 { return ms(server(t)) }),
	}
	if len(samples) == len(ts) {
		submit := make([]float64, len(ts))
		result := make([]float64, len(ts))
		for i, t := range ts {
			submit[i] = ms(t.Started.Sub(samples[i].Start))
			result[i] = ms(samples[i].End.Sub(t.Completed))
		}
		hs.Phases.Submit, hs.Phases.Result = round2(Median(submit)), round2(Median(result))
	}
	hs.Kinds = meanKinds(ts)
	fields := map[string]float64{}
	for _, t := range ts {
		for k, n := range t.ResultFields {
			fields[k] += float64(n) / float64(len(ts))
		}
	}
	if len(fields) > 0 {
		hs.ResultFields = map[string]float64{}
		for k, v := range fields {
			hs.ResultFields[k] = math.Round(v)
		}
	}
	return hs
}

// meanKinds lists the kinds of events by mean bytes per round, largest first.
func meanKinds(ts []*trace) []Kind {
	bytes, count := map[string]int{}, map[string]int{}
	for _, t := range ts {
		for k, b := range t.BytesByKind {
			bytes[k] += b
			count[k] += t.CountByKind[k]
		}
	}
	n := float64(len(ts))
	out := make([]Kind, 0, len(bytes))
	for k, b := range bytes {
		out = append(out, Kind{Kind: k, Count: round2(float64(count[k]) / n), Bytes: math.Round(float64(b) / n)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
