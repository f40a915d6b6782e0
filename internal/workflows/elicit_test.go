package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// formSchema is the form the input_required tool asks for.
const formSchema = `{"type":"object","required":["date"],"properties":{"date":{"type":"string","format":"date"},"seats":{"type":"integer","minimum":1,"default":2}}}`

// inputTool is an MCP tool of a 2026-07-28 server that answers
// input_required until it has an answer to "when", and records every
// answer and state it was given.
type inputTool struct {
	mu     sync.Mutex
	seen   []string
	always bool
}

func (it *inputTool) def() tools.Definition {
	return tools.Definition{
		Name: "mcp_desk_book", Description: "Books a desk.", Source: tools.SourceMCP, SideEffect: tools.AtMostOnce, Timeout: time.Minute,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			it.mu.Lock()
			it.seen = append(it.seen, fmt.Sprintf("%s|%s", req.RequestState, req.InputResponses["when"]))
			it.mu.Unlock()
			raw, ok := req.InputResponses["when"]
			if !ok || it.always {
				return tools.Result{Input: &round.InputRequired{State: fmt.Sprintf("trip-%d", len(it.seen)),
					Asks: []round.ElicitRequest{{Key: "when", Seq: 1, Server: "desk", Mode: "form", Message: "Which day?", RequestedSchema: json.RawMessage(formSchema)}}}}, nil
			}
			return tools.Text("booked " + string(raw)), nil
		},
	}
}

func (it *inputTool) calls() []string {
	it.mu.Lock()
	defer it.mu.Unlock()
	return append([]string(nil), it.seen...)
}

func bookingInput() round.Input {
	in := input(call("b1", "mcp_desk_book", `{}`))
	in.State.Fetched = append(in.State.Fetched, "mcp_desk_book")
	in.AutoApprove = true
	return in
}

// answer sends the answer update (E1); its result is known after the
// round ran.
func (h *harness) answer(id string, a round.ElicitAnswer) *updateResult {
	u := &updateResult{}
	h.env.UpdateWorkflow(names.UpdateAnswer, id, &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { u.rejected = err },
		OnAccept:   func() { u.accepted = true },
		OnComplete: func(any, error) {},
	}, a)
	return u
}

func TestAnswerIsCheckedAgainstTheRequestedSchema(t *testing.T) {
	tool := &inputTool{}
	h := newHarnessWith(t, 3, tool.def())
	var seen []round.Pending
	var stale, noContent, badType, badAction, declineWithContent, ok *updateResult
	h.at(time.Second, func() {
		seen = h.pending(t)
		wait := seen[0].WaitID
		stale = h.answer("s1", round.ElicitAnswer{CallID: "b1", WaitID: "not-" + wait, Action: round.ElicitAccept, Content: map[string]any{"date": "2027-01-01"}})
		noContent = h.answer("s2", round.ElicitAnswer{CallID: "b1", WaitID: wait, Action: round.ElicitAccept})
		badType = h.answer("s3", round.ElicitAnswer{CallID: "b1", WaitID: wait, Action: round.ElicitAccept, Content: map[string]any{"date": "2027-01-01", "seats": "three"}})
		badAction = h.answer("s5", round.ElicitAnswer{CallID: "b1", WaitID: wait, Action: "maybe"})
		declineWithContent = h.answer("s6", round.ElicitAnswer{CallID: "b1", WaitID: wait, Action: round.ElicitDecline, Content: map[string]any{"date": "2027-01-01"}})
		ok = h.answer("s7", round.ElicitAnswer{CallID: "b1", WaitID: wait, Action: round.ElicitAccept, Content: map[string]any{"date": "2027-01-01"}})
	})
	res := h.run(t, bookingInput())

	require.Len(t, seen, 1)
	p := seen[0]
	require.Equal(t, round.KindElicitation, p.Kind)
	require.NotEmpty(t, p.WaitID)
	require.NotNil(t, p.Elicitation)
	require.Equal(t, "desk", p.Elicitation.Server)
	require.Equal(t, "Which day?", p.Elicitation.Message)

	require.Equal(t, string(round.CodeStaleWait), errType(stale.rejected))
	require.Equal(t, string(round.CodeInvalidAnswer), errType(noContent.rejected), "the date is required")
	require.Equal(t, string(round.CodeInvalidAnswer), errType(badType.rejected))
	require.Equal(t, string(round.CodeInvalidAnswer), errType(badAction.rejected))
	require.Equal(t, string(round.CodeInvalidAnswer), errType(declineWithContent.rejected))
	require.NoError(t, ok.rejected)
	require.True(t, ok.accepted)

	require.Equal(t, round.StatusOK, res.Results[0].Status)
	calls := tool.calls()
	require.Len(t, calls, 2, "asked once, then run again with the answer")
	require.Equal(t, "|", calls[0])
	require.Equal(t, `trip-1|{"action":"accept","content":{"date":"2027-01-01","seats":2}}`, calls[1], "the server's state back, the schema's default filled in")
	require.Contains(t, res.Messages[0].Content, `"seats":2`)
}

func TestUnansweredRequestsAreCancelledAndTheTripsEnd(t *testing.T) {
	tool := &inputTool{always: true}
	h := newHarnessWith(t, 3, tool.def())
	res := h.run(t, bookingInput())

	require.Equal(t, round.StatusError, res.Results[0].Status)
	require.Contains(t, res.Messages[0].Content, fmt.Sprintf("after %d round trips", wire.MaxInputTrips))
	calls := tool.calls()
	require.Len(t, calls, wire.MaxInputTrips+1, "the first run and one per round trip")
	for i, c := range calls[1:] {
		require.Equal(t, fmt.Sprintf(`trip-%d|{"action":"cancel"}`, i+1), c, "no answer by the deadline is cancel")
	}
}

// taskTool is an MCP tool whose server runs each call as a task (E2): the
// call returns the task, a poll asks which day, the poll with the answer
// fails once in passing and then gives the result.
type taskTool struct {
	mu      sync.Mutex
	creates int
	polls   []string
	lost    bool
}

func (tt *taskTool) def() tools.Definition {
	return tools.Definition{
		Name: "mcp_desk_book", Description: "Books a desk.", Source: tools.SourceMCP, SideEffect: tools.AtMostOnce, Timeout: time.Minute,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(_ context.Context, req tools.Request) (tools.Result, error) {
			tt.mu.Lock()
			defer tt.mu.Unlock()
			if req.Task == nil {
				tt.creates++
				return tools.Result{Task: &round.MCPTask{Server: "desk", ID: "task-1", Protocol: "2026-07-28", PollMS: 10}}, nil
			}
			tt.polls = append(tt.polls, fmt.Sprintf("%s|%s", req.Task.ID, req.InputResponses["when"]))
			if tt.lost {
				return tools.Result{}, fmt.Errorf("%w: the stdio server that ran it is gone", tools.ErrOutcomeLost)
			}
			raw, ok := req.InputResponses["when"]
			switch {
			case !ok:
				return tools.Result{Input: &round.InputRequired{Asks: []round.ElicitRequest{{Key: "when", Seq: 1, Server: "desk", Mode: "form",
					Message: "Which day?", RequestedSchema: json.RawMessage(formSchema)}}}}, nil
			case len(tt.polls) == 2:
				return tools.Result{}, tools.Transient(fmt.Errorf("the server did not answer"))
			}
			return tools.Text("booked " + string(raw)), nil
		},
	}
}

// TestTaskIsCreatedOnceAndPolledWithRetries: the call that creates the task
// runs once; its input request waits as an elicitation, and the poll that
// carries the answer is retried after a passing failure, though the tool
// has side effects, since polling has none.
func TestTaskIsCreatedOnceAndPolledWithRetries(t *testing.T) {
	tool := &taskTool{}
	h := newHarnessWith(t, 3, tool.def())
	var seen []round.Pending
	h.at(time.Second, func() {
		seen = h.pending(t)
		h.answer("a1", round.ElicitAnswer{CallID: "b1", WaitID: seen[0].WaitID, Action: round.ElicitAccept, Content: map[string]any{"date": "2027-03-04"}})
	})
	res := h.run(t, bookingInput())

	require.Len(t, seen, 1)
	require.Equal(t, round.KindElicitation, seen[0].Kind)
	require.Equal(t, "Which day?", seen[0].Elicitation.Message)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Messages[0].Content)
	require.Contains(t, res.Messages[0].Content, `booked {"action":"accept","content":{"date":"2027-03-04","seats":2}}`)
	tool.mu.Lock()
	defer tool.mu.Unlock()
	require.Equal(t, 1, tool.creates, "the task is created once")
	want := `task-1|{"action":"accept","content":{"date":"2027-03-04","seats":2}}`
	require.Equal(t, []string{"task-1|", want, want}, tool.polls, "asked, failed in passing, retried")
}

// TestLostTaskIsUnknownOutcome: a poll that finds the task lost ends the
// call unknown_outcome, saying why, and is not retried.
func TestLostTaskIsUnknownOutcome(t *testing.T) {
	tool := &taskTool{lost: true}
	h := newHarnessWith(t, 3, tool.def())
	res := h.run(t, bookingInput())

	require.Equal(t, round.StatusUnknownOutcome, res.Results[0].Status)
	require.Contains(t, res.Messages[0].Content, "the stdio server that ran it is gone")
	tool.mu.Lock()
	defer tool.mu.Unlock()
	require.Equal(t, 1, tool.creates)
	require.Len(t, tool.polls, 1, "a lost task is not polled again")
}
