package agentrun_test

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/internal/activities"
	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// agentScenario is an agent run recorded into testdata/agentrun/<name>.json:
// its first execution, and when it continued as new its last as
// <name>_last.json.
type agentScenario struct {
	name  string
	in    round.AgentInput
	reply func(in wire.ModelInput) wire.ModelOutput
	// want is the status the run ends with, over all its executions.
	want string
	// drive, when set, acts on the running run (updates, a cancel).
	drive func(t *testing.T, c tclient.Client, id string)
}

// calcTurn is a model turn with one calculate call.
func calcTurn(in wire.ModelInput) wire.ModelOutput {
	return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{
		ID: fmt.Sprintf("c%d", in.Call), Type: "function",
		Function: round.FunctionCall{Name: "calculate", Arguments: round.Arguments(fmt.Sprintf(`{"expression":"%d*2"}`, in.Call))}}}}}
}

// agentScenarios take the paths of agent-limits and agent-budget.
func agentScenarios() []agentScenario {
	// A result the budget replaced, as the model call names it.
	budgeted := func(in wire.ModelInput, msg int) []wire.BudgetedResult {
		ref := fmt.Sprintf("toolround:blob:%064d", msg)
		return []wire.BudgetedResult{{Msg: msg, Ref: ref, Content: "[calculate] 2\n[shortened to keep the conversation within its context budget: 13 bytes in all; read_result {\"ref\": \"" + ref + "\"} reads the whole]"}}
	}
	return []agentScenario{
		// G3: a chatbot's persistent run answers two chat updates, the
		// second after a round, then waits until it is cancelled.
		{name: "chatbot_persistent", want: round.AgentCancelled,
			in: round.AgentInput{SessionID: "replay-chatbot_persistent", RunID: "run", Provider: "openai", Persistent: true, Name: "helper", Chain: []string{"helper"}},
			reply: func(in wire.ModelInput) wire.ModelOutput {
				last := in.Messages[len(in.Messages)-1]
				if last.Role == "user" && strings.Contains(last.Content, "tool") {
					return calcTurn(in)
				}
				return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: fmt.Sprintf("answer %d", in.Call)}}
			},
			drive: func(t *testing.T, c tclient.Client, id string) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				for i, text := range []string{"hello", "use a tool"} {
					opID := fmt.Sprintf("op-%d", i+1)
					h, err := c.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{WorkflowID: id, UpdateID: opID, UpdateName: wire.UpdateChat,
						Args: []any{round.ChatMessage{MessageID: opID, Text: text}}, WaitForStage: tclient.WorkflowUpdateStageCompleted})
					require.NoError(t, err)
					var reply round.ChatReply
					require.NoError(t, h.Get(ctx, &reply))
					require.Equal(t, round.AgentCompleted, reply.Status)
				}
				require.NoError(t, c.CancelWorkflow(ctx, id, ""))
			}},
		// B1: max_model_tokens 100 at 40 tokens a call: the third reply is
		// past it, its calls do not run, the run ends limit_reached.
		{name: "agent_limits", want: round.AgentLimitReached,
			in: round.AgentInput{SessionID: "replay-agent_limits", RunID: "run", Task: "count", Provider: "openai",
				Limits: &round.Limits{MaxModelTokens: 100, MaxCalls: 10}},
			reply: func(in wire.ModelInput) wire.ModelOutput {
				out := calcTurn(in)
				out.Tokens = 40
				return out
			}},
		// B3: call 3 replaces round 1's result, every call reports its
		// request's size, call 5 finds the last two rounds alone past the
		// budget: context_exceeded.
		{name: "agent_budget", want: round.AgentContextExceeded,
			in: round.AgentInput{SessionID: "replay-agent_budget", RunID: "run", Task: "count", Provider: "openai"},
			reply: func(in wire.ModelInput) wire.ModelOutput {
				if in.Call == 5 {
					return wire.ModelOutput{ContextExceeded: true}
				}
				out := calcTurn(in)
				out.Request = &round.RequestSize{Bytes: 900 * in.Call, InputTokens: int64(250 * in.Call)}
				if in.Call == 3 {
					out.Budgeted = budgeted(in, 2)
				}
				return out
			}},
		// B3: the same with a history bound that makes the run continue as
		// new after the budget replaced a result: the first execution
		// refreshes the references it carries (agent-budget version 2).
		{name: "agent_budget_refresh", want: round.AgentCompleted,
			in: round.AgentInput{SessionID: "replay-agent_budget_refresh", RunID: "run", Task: "count", Provider: "openai", HistoryEvents: 50},
			reply: func(in wire.ModelInput) wire.ModelOutput {
				if in.Call >= 6 {
					return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "done"}}
				}
				out := calcTurn(in)
				out.Request = &round.RequestSize{Bytes: 900 * in.Call, InputTokens: int64(250 * in.Call)}
				if in.Call == 3 {
					out.Budgeted = budgeted(in, 2)
				}
				return out
			}},
		// L2: a history bound the next pass would pass: the run continues
		// as new before it (agent-bounds-forecast).
		{name: "agent_bounds_forecast", want: round.AgentCompleted,
			in: round.AgentInput{SessionID: "replay-agent_bounds_forecast", RunID: "run", Provider: "openai", HistoryBytes: 48 << 10,
				Task: "count, following these notes: " + strings.Repeat("a note that makes the conversation long. ", 100)},
			reply: func(in wire.ModelInput) wire.ModelOutput {
				if in.Call >= 12 {
					return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "done"}}
				}
				return calcTurn(in)
			}},
	}
}

// record runs TestRecordAgentHistories.
var record = flag.Bool("record", false, "run the agent scenarios against the Temporal server at TEMPORAL_ADDRESS and write testdata/<name>.json")

// ruleKey is the recorder's worker's rule key.
var ruleKey = []byte("0123456789abcdef0123456789abcdef")

// TestRecordAgentHistories runs every agent scenario through a real worker
// on the Temporal server, with a scripted model call and real rounds, and
// writes its first execution to testdata/<name>.json (and its
// last to <name>_last.json when it continued as new). It runs
// only with -record; recorded histories are never re-recorded:
//
//	go test ./internal/workflows/agentrun -run TestRecordAgentHistories/<name> -record
func TestRecordAgentHistories(t *testing.T) {
	if !*record {
		t.Skip("records histories only with -record")
	}
	c := testenv.TemporalClient(t, "recorder")

	reg := testtools.Registry(testtools.NewRecorder())
	cat := workflows.NewCatalog(reg, workflows.CatalogOptions{MaxConcurrent: 3, HeartbeatTimeout: 3 * time.Second, LocalMaxTimeout: 30 * time.Second})
	wf := &workflows.RoundWorkflow{Catalog: cat}
	acts := &activities.Activities{Registry: reg, Blobs: &testtools.MemBlobs{}, RuleKey: ruleKey}
	aw := &agentrun.Workflow{HeartbeatTimeout: 3 * time.Second, Limits: round.Limits{MaxCalls: 50}}
	replies := map[string]func(wire.ModelInput) wire.ModelOutput{}
	for _, sc := range agentScenarios() {
		replies[sc.in.SessionID] = sc.reply
	}
	queue := fmt.Sprintf("agent-record-%d", time.Now().UnixNano())
	w := worker.New(c, queue, worker.Options{Identity: "recorder"})
	w.RegisterWorkflowWithOptions(aw.Run, workflow.RegisterOptions{Name: names.AgentWorkflowName})
	w.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: names.WorkflowName})
	w.RegisterActivityWithOptions(func(_ context.Context, in wire.ModelInput) (wire.ModelOutput, error) {
		reply := replies[in.SessionID]
		if reply == nil {
			return wire.ModelOutput{}, fmt.Errorf("no scenario for session %s", in.SessionID)
		}
		return reply(in), nil
	}, activity.RegisterOptions{Name: wire.ActivityModelCall})
	w.RegisterActivityWithOptions(acts.ExecuteTool, activity.RegisterOptions{Name: wire.ActivityExecuteTool})
	w.RegisterActivityWithOptions(acts.PublishRound, activity.RegisterOptions{Name: wire.ActivityPublishRound})
	w.RegisterActivityWithOptions(acts.StoreContents, activity.RegisterOptions{Name: wire.ActivityStoreContents})
	w.RegisterActivityWithOptions(acts.RefreshContents, activity.RegisterOptions{Name: wire.ActivityRefreshContents})
	w.RegisterActivityWithOptions(acts.CheckFiles, activity.RegisterOptions{Name: wire.ActivityCheckFiles})
	w.RegisterActivityWithOptions(acts.VerifyRules, activity.RegisterOptions{Name: wire.ActivityVerifyRules})
	w.RegisterActivityWithOptions(acts.SignRules, activity.RegisterOptions{Name: wire.ActivitySignRules})
	w.RegisterActivityWithOptions(acts.VerifyUsage, activity.RegisterOptions{Name: wire.ActivityVerifyUsage})
	w.RegisterActivityWithOptions(acts.SignUsage, activity.RegisterOptions{Name: wire.ActivitySignUsage})
	w.RegisterActivityWithOptions(acts.Reconcile, activity.RegisterOptions{Name: wire.ActivityReconcile})
	require.NoError(t, w.Start())
	defer w.Stop()

	for _, sc := range agentScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// A round id is never used twice (R): each recording is a run
			// of its own.
			sc.in.RunID = fmt.Sprintf("run-%d", time.Now().UnixNano())
			id := names.AgentWorkflowID(sc.in.SessionID, sc.in.RunID)
			run, err := c.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: id, TaskQueue: queue,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING}, names.AgentWorkflowName, sc.in)
			require.NoError(t, err)
			if sc.drive != nil {
				sc.drive(t, c, id)
			}
			first := run.GetRunID() // Get follows continue-as-new
			var st round.AgentStatus
			require.NoError(t, run.Get(ctx, &st))
			require.Equal(t, sc.want, st.Status, st.Reason)
			testenv.WriteHistory(t, c, id, first, filepath.Join("testdata", sc.name+".json"))
			if st.Executions > 1 {
				testenv.WriteHistory(t, c, id, "", filepath.Join("testdata", sc.name+"_last.json"))
			}
		})
	}
}

// agentHistory is one recorded agent run's first execution.
type agentHistory struct {
	history *historypb.History
	// plain are the decoded payloads of its events.
	plain []string
}

func loadAgentHistory(t *testing.T, name string) agentHistory {
	t.Helper()
	p := filepath.Join("testdata", name+".json")
	b, err := os.ReadFile(p)
	require.NoError(t, err, "%s is missing: record it with go test ./internal/workflows/agentrun -run TestRecordAgentHistories/%s -record", p, name)
	h, err := tclient.HistoryFromJSON(strings.NewReader(string(b)), tclient.HistoryJSONOptions{})
	require.NoError(t, err)
	out := agentHistory{history: h}
	for _, m := range regexp.MustCompile(`"data": *"([A-Za-z0-9+/=]*)"`).FindAllSubmatch(b, -1) {
		plain, err := base64.StdEncoding.DecodeString(string(m[1]))
		require.NoError(t, err)
		out.plain = append(out.plain, string(plain))
	}
	return out
}

// versions are the change ids of its version markers, with their versions.
func (h agentHistory) versions(t *testing.T) map[string]workflow.Version {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	out := map[string]workflow.Version{}
	for _, e := range h.history.GetEvents() {
		a := e.GetMarkerRecordedEventAttributes()
		if a == nil || a.GetMarkerName() != "Version" {
			continue
		}
		var id string
		var v workflow.Version
		require.NoError(t, dc.FromPayloads(a.GetDetails()["change-id"], &id))
		require.NoError(t, dc.FromPayloads(a.GetDetails()["version"], &v))
		out[id] = v
	}
	return out
}

// result is the run's result, when the execution completed.
func (h agentHistory) result(t *testing.T) (round.AgentStatus, bool) {
	t.Helper()
	events := h.history.GetEvents()
	a := events[len(events)-1].GetWorkflowExecutionCompletedEventAttributes()
	if a == nil {
		return round.AgentStatus{}, false
	}
	var st round.AgentStatus
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &st))
	return st, true
}

func (h agentHistory) holds(s string) bool {
	for _, p := range h.plain {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}

// TestAgentRunRecordedHistoriesCoverTheLimitsAndTheBudget: the recorded
// agent runs of agent-limits and agent-budget hold their markers and what
// they did (B1, B3): past max_model_tokens the run ended limit_reached
// with its counts; the budget's replaced result went into the run state
// and the run ended context_exceeded; a run that continued as new after
// the budget replaced a result refreshed the references it carried. Their
// replay is in TestAgentRunReplaysRecordedHistories.
func TestAgentRunRecordedHistoriesCoverTheLimitsAndTheBudget(t *testing.T) {
	h := loadAgentHistory(t, "agent_limits")
	require.EqualValues(t, 1, h.versions(t)["agent-limits"])
	st, ok := h.result(t)
	require.True(t, ok)
	require.Equal(t, round.AgentLimitReached, st.Status)
	require.Contains(t, st.Reason, round.LimitModelTokens)
	require.Equal(t, 2, st.Round, "the third reply's calls did not run")
	require.NotEmpty(t, st.Limits, "the status carries the limits and counts")

	h = loadAgentHistory(t, "agent_budget")
	require.EqualValues(t, 2, h.versions(t)["agent-budget"])
	st, ok = h.result(t)
	require.True(t, ok)
	require.Equal(t, round.AgentContextExceeded, st.Status)
	require.True(t, st.Conversation[2].Budgeted)
	require.True(t, h.holds(`"result_refs":["toolround:blob:`), "a later round's state lists the replaced result")
	require.True(t, h.holds(`"last":{"bytes":`), "a later call is estimated from the one before")

	h = loadAgentHistory(t, "agent_budget_refresh")
	require.EqualValues(t, 2, h.versions(t)["agent-budget"])
	_, ok = h.result(t)
	require.False(t, ok, "the first execution continued as new")
	events := h.history.GetEvents()
	require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, events[len(events)-1].GetEventType())
	require.True(t, h.holds(wire.ActivityRefreshContents), "the references were refreshed at continue-as-new")
	require.True(t, h.holds(`"last_request":{"bytes":`), "the next execution estimates from the last request")
}

// TestAgentRunRecordedBoundsForecast (L2): the recorded run whose next
// pass would have passed its history_bytes continued as new before it,
// with the agent-bounds-forecast marker, below the bound. Its replay is
// in TestAgentRunReplaysRecordedHistories.
func TestAgentRunRecordedBoundsForecast(t *testing.T) {
	h := loadAgentHistory(t, "agent_bounds_forecast")
	require.EqualValues(t, 1, h.versions(t)["agent-bounds-forecast"])
	events := h.history.GetEvents()
	last := events[len(events)-1]
	require.NotNil(t, last.GetWorkflowExecutionContinuedAsNewEventAttributes(), "the first execution continued as new")
	var size int
	for _, e := range events {
		size += proto.Size(e)
	}
	require.Less(t, size, 48<<10, "the execution stayed below its history_bytes")
}
