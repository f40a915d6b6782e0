package agentrun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows/agentrun"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// agentHarness runs AgentRun with a scripted model activity and a fake
// child round that answers each call with "did <call id>" and counts rounds
// in the run state.
type agentHarness struct {
	env *testsuite.TestWorkflowEnvironment
	// reply gives the model's answer to call n.
	reply func(in wire.ModelInput) wire.ModelOutput
	// fail, when set, is the model call's error for call n (nil: none).
	fail func(in wire.ModelInput) error

	mu      sync.Mutex
	inputs  []wire.ModelInput
	rounds  []round.Input
	roundFn func(ctx workflow.Context, in round.Input) (round.Output, error)
	stored  int
	// refreshed are the refs of each RefreshContents call.
	refreshed [][]string
}

func newAgentHarness(t *testing.T) *agentHarness {
	return newAgentHarnessOf(t, &agentrun.Workflow{HeartbeatTimeout: time.Second})
}

// newAgentHarnessOf is newAgentHarness with the agent workflow aw.
func newAgentHarnessOf(t *testing.T, aw *agentrun.Workflow) *agentHarness {
	h := &agentHarness{}
	var ts testsuite.WorkflowTestSuite
	h.env = ts.NewTestWorkflowEnvironment()
	h.env.RegisterWorkflowWithOptions(aw.Run, workflow.RegisterOptions{Name: names.AgentWorkflowName})
	h.env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in round.Input) (round.Output, error) {
		h.mu.Lock()
		h.rounds = append(h.rounds, in)
		h.mu.Unlock()
		if h.roundFn != nil {
			return h.roundFn(ctx, in)
		}
		return fakeRound(in, round.StatusOK), nil
	}, workflow.RegisterOptions{Name: names.WorkflowName})
	h.env.RegisterActivityWithOptions(func(_ context.Context, in wire.ModelInput) (wire.ModelOutput, error) {
		h.mu.Lock()
		h.inputs = append(h.inputs, in)
		h.mu.Unlock()
		if h.fail != nil {
			if err := h.fail(in); err != nil {
				return wire.ModelOutput{}, err
			}
		}
		return h.reply(in), nil
	}, activity.RegisterOptions{Name: wire.ActivityModelCall})
	h.env.RegisterActivityWithOptions(func(context.Context, wire.PublishInput) error { return nil },
		activity.RegisterOptions{Name: wire.ActivityPublishRound})
	h.env.RegisterActivityWithOptions(func(_ context.Context, in wire.StoreContentsInput) (wire.StoreContentsOutput, error) {
		out := wire.StoreContentsOutput{}
		for _, c := range in.Contents {
			h.mu.Lock()
			h.stored++
			ref := fmt.Sprintf("toolround:blob:%d", h.stored)
			h.mu.Unlock()
			out.Stored = append(out.Stored, wire.StoredContent{Ref: ref, Content: round.StoredPreview(c, ref, in.Preview)})
		}
		return out, nil
	}, activity.RegisterOptions{Name: wire.ActivityStoreContents})
	h.env.RegisterActivityWithOptions(func(_ context.Context, in wire.RefreshContentsInput) (wire.RefreshContentsOutput, error) {
		h.mu.Lock()
		h.refreshed = append(h.refreshed, in.Refs)
		h.mu.Unlock()
		return wire.RefreshContentsOutput{Refreshed: len(in.Refs)}, nil
	}, activity.RegisterOptions{Name: wire.ActivityRefreshContents})
	return h
}

func fakeRound(in round.Input, status round.Status) round.Output {
	st := in.State.Clone()
	st.Seq++
	out := round.Output{WorkflowID: in.WorkflowID(), SessionID: in.SessionID, RunID: in.RunID, Round: in.Round, Assistant: in.Assistant, State: st}
	for _, c := range in.Assistant.ToolCalls {
		out.Results = append(out.Results, round.CallResult{CallID: c.ID, Tool: c.Function.Name, Status: status, Content: "did " + c.ID})
	}
	return out
}

// toolsFor answers every call with one calculate call until call n, then
// with the final answer.
func toolsUntil(n int) func(in wire.ModelInput) wire.ModelOutput {
	return func(in wire.ModelInput) wire.ModelOutput {
		if in.Call >= n {
			return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "the answer is 42"}}
		}
		return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{
			ID: fmt.Sprintf("c%d", in.Call), Type: "function",
			Function: round.FunctionCall{Name: "calculate", Arguments: `{"expression":"6*7"}`}}}}}
	}
}

// execute runs the agent workflow on in under its own workflow id, to its
// end; the caller reads how it ended.
func (h *agentHarness) execute(t *testing.T, in round.AgentInput) {
	t.Helper()
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: names.AgentWorkflowID(in.SessionID, in.RunID)})
	h.env.ExecuteWorkflow(names.AgentWorkflowName, in)
	require.True(t, h.env.IsWorkflowCompleted())
}

func (h *agentHarness) run(t *testing.T, in round.AgentInput) round.AgentStatus {
	t.Helper()
	h.execute(t, in)
	require.NoError(t, h.env.GetWorkflowError())
	var st round.AgentStatus
	require.NoError(t, h.env.GetWorkflowResult(&st))
	return st
}

func agentInput() round.AgentInput {
	return round.AgentInput{SessionID: "s1", RunID: "r1", Task: "compute", Provider: "openai"}
}

func roles(conv []round.AgentMessage) string {
	var b []string
	for _, m := range conv {
		b = append(b, m.Role)
	}
	return strings.Join(b, ",")
}

func TestAgentRunLoopsUntilTheFinalAnswer(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(4)
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, "the answer is 42", st.Final)
	require.Equal(t, 3, st.Round)
	require.Equal(t, 4, st.ModelCalls)
	require.Equal(t, "user,assistant,tool,assistant,tool,assistant,tool,assistant", roles(st.Conversation))
	require.Equal(t, "[calculate] did c2", st.Conversation[4].Content)
	require.Len(t, h.rounds, 3)
	for i, in := range h.rounds {
		require.Equal(t, i+1, in.Round)
		require.Equal(t, fmt.Sprintf("toolround/s1/r1/%d", i+1), in.WorkflowID())
		if i > 0 {
			require.EqualValues(t, i, in.State.Seq, "round %d gets the state round %d returned", i+1, i)
		}
	}
	// Each model call sees the conversation so far, its own number and the round it would start.
	require.Len(t, h.inputs[3].Messages, 7)
	require.Equal(t, 4, h.inputs[3].Call)
	require.Equal(t, "agentrun/s1/r1", h.inputs[3].WorkflowID)
}

func TestAgentRunStopsAtMaxRounds(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(1000)
	in := agentInput()
	in.MaxRounds = 2
	st := h.run(t, in)
	require.Equal(t, round.AgentRoundLimit, st.Status)
	require.Equal(t, 2, st.Round)
	require.Len(t, h.rounds, 2, "the third round never starts")
	require.Equal(t, 3, st.ModelCalls)
}

func TestAgentRunDefaultMaxRounds(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(1000)
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentRoundLimit, st.Status)
	require.Equal(t, round.DefaultMaxRounds, st.Round)
}

func TestAgentRunTakesUserMessagesBeforeTheNextModelCall(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(3)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return round.Output{}, err
		}
		return fakeRound(in, round.StatusOK), nil
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(names.SignalUserMessage, round.UserMessage{Text: "use integers only"})
	}, 30*time.Second)
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	second := h.inputs[1].Messages
	require.Equal(t, "user,assistant,tool,user", roles(second), "the message joins after the round's results, before the next model call")
	require.Equal(t, "use integers only", second[3].Content)
	require.Len(t, h.inputs[0].Messages, 1)
}

func TestAgentRunCancelGivesEveryCallAResult(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(1000)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		err := workflow.Sleep(ctx, time.Hour)
		if err == nil {
			return fakeRound(in, round.StatusOK), nil
		}
		// The real round commits every call as cancelled.
		return fakeRound(in, round.StatusCancelled), nil
	}
	h.env.RegisterDelayedCallback(h.env.CancelWorkflow, time.Minute)
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCancelled, st.Status)
	require.Equal(t, 1, st.Round)
	require.Equal(t, "user,assistant,tool", roles(st.Conversation), "the cancelled round's call has its result")
	require.Equal(t, "[calculate] did c1", st.Conversation[2].Content)
	require.Equal(t, 1, st.ModelCalls, "no model call after the cancel")
}

func TestAgentRunStatusQuery(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(3)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		_ = workflow.Sleep(ctx, time.Minute)
		return fakeRound(in, round.StatusOK), nil
	}
	var mid round.AgentStatus
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(names.QueryAgentStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&mid))
	}, 90*time.Second)
	h.run(t, agentInput())
	require.Equal(t, round.AgentRunning, mid.Status)
	require.Equal(t, 2, mid.Round)
	require.Equal(t, "user,assistant,tool,assistant", roles(mid.Conversation))
}

func TestAgentRunContinuesAsNewCarryingItsState(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(5)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		if in.Round == 2 {
			h.env.SetCurrentHistoryLength(5000)
		}
		return fakeRound(in, round.StatusOK), nil
	}
	in := agentInput()
	in.MaxRounds = 10
	h.env.ExecuteWorkflow(names.AgentWorkflowName, in)
	err := h.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	require.Equal(t, names.AgentWorkflowName, can.WorkflowType.Name)
	var next round.AgentInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.Carry)
	require.Equal(t, 2, next.Carry.Round)
	require.Equal(t, 2, next.Carry.ModelCalls)
	require.EqualValues(t, 2, next.Carry.State.Seq)
	require.Equal(t, "user,assistant,tool,assistant,tool", roles(next.Carry.Conversation))
	require.Equal(t, 10, next.MaxRounds)

	// The next execution goes on where this one stopped: round 3, call 3.
	h2 := newAgentHarness(t)
	h2.reply = toolsUntil(5)
	st := h2.run(t, next)
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, 4, st.Round)
	require.Equal(t, 5, st.ModelCalls)
	require.Equal(t, 2, st.Executions)
	require.Equal(t, 3, h2.rounds[0].Round, "no round runs twice across continue-as-new")
	require.EqualValues(t, 2, h2.rounds[0].State.Seq)
	require.Equal(t, 3, h2.inputs[0].Call)
	require.Len(t, st.Conversation, 10)
}

func TestAgentRunKeepsLargeContentsByReference(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(3)
	big := strings.Repeat("x", agentrun.InlineContent+1)
	h.roundFn = func(ctx workflow.Context, in round.Input) (round.Output, error) {
		out := fakeRound(in, round.StatusOK)
		out.Results[0].Content = big
		return out, nil
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	for _, i := range []int{2, 4} {
		require.NotEmpty(t, st.Conversation[i].ContentRef)
		require.Less(t, len(st.Conversation[i].Content), 2<<10)
	}
	require.NotEmpty(t, h.inputs[1].Messages[2].ContentRef, "the model call gets the reference, not the content")
}

func TestAgentRunRejectsBadInput(t *testing.T) {
	h := newAgentHarness(t)
	in := agentInput()
	in.RunID = "a/b"
	h.env.ExecuteWorkflow(names.AgentWorkflowName, in)
	require.ErrorContains(t, h.env.GetWorkflowError(), "invalid agent input")
}

func TestAgentRunKeepsLargeArgumentsByReference(t *testing.T) {
	h := newAgentHarness(t)
	big := `{"path":"a.txt","new_text":"` + strings.Repeat("y", agentrun.InlineContent) + `"}`
	h.reply = func(in wire.ModelInput) wire.ModelOutput {
		if in.Call >= 2 {
			return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", Content: "written"}}
		}
		return wire.ModelOutput{Message: round.AgentMessage{Role: "assistant", ToolCalls: []round.ToolCall{{
			ID: "c1", Type: "function", Function: round.FunctionCall{Name: "edit_file", Arguments: round.Arguments(big)}}}}}
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, big, string(h.rounds[0].Assistant.ToolCalls[0].Function.Arguments), "the round runs the whole arguments")
	sent := h.inputs[1].Messages[1]
	require.Len(t, sent.ArgRefs, 1)
	require.NotEmpty(t, sent.ArgRefs[0], "the next model call gets a reference, not the arguments")
	require.Less(t, len(sent.ToolCalls[0].Function.Arguments), 2<<10)
	require.Equal(t, "c1", sent.ToolCalls[0].ID)
}

// TestAgentRunSaysWhatARepeatRepeats: a repeated result reaches the model
// with the note a round's tool message has (U3), and keeps it when its
// content is stored and loaded back.
func TestAgentRunSaysWhatARepeatRepeats(t *testing.T) {
	h := newAgentHarness(t)
	h.reply = toolsUntil(3)
	h.roundFn = func(_ workflow.Context, in round.Input) (round.Output, error) {
		out := fakeRound(in, round.StatusOK)
		if in.Round == 2 {
			out.Results[0].Status = round.StatusDeduped
			out.Results[0].Content = "did c1"
			out.Results[0].Repeat = &round.Repeat{Round: 1, CallID: "c1"}
		}
		return out, nil
	}
	st := h.run(t, agentInput())
	require.Equal(t, round.AgentCompleted, st.Status)
	require.Equal(t, "[calculate] did c1", st.Conversation[2].Content)
	require.Empty(t, st.Conversation[2].Note)
	want := round.Output{Results: []round.CallResult{{CallID: "c2", Tool: "calculate", Content: "did c1", Repeat: &round.Repeat{Round: 1, CallID: "c1"}}}}.Result().Messages[0].Content
	require.Equal(t, want, st.Conversation[4].Content, "the same message a round's result holds")
	require.Equal(t, "[calculate] (repeats the result of round 1 of this run)\ndid c1", st.Conversation[4].Content)
	require.Equal(t, "(repeats the result of round 1 of this run)", st.Conversation[4].Note)
}
