package agentrun

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// model is step 4: the model call (activities.Model), whose answer is in
// history once it completed, so a crash never repeats it (A2). The
// results its request shortened join the conversation in their place
// (B3), then its answer; its tokens count against the run's limits (B1).
func (a *agent) model(ctx workflow.Context) (wire.ModelOutput, next, error) {
	crashpoint.Step(ctx, "agent.model.before")
	out, err := a.callModel(ctx, a.hb, a.timeout)
	crashpoint.Step(ctx, "agent.model.after")
	if err != nil {
		n, err := a.stopOn(ctx, err)
		return out, n, err
	}
	a.calls++
	if a.budget && a.takeBudget(out) {
		return out, nextEnd, nil
	}
	if out.Request != nil {
		a.last = out.Request
	}
	a.conv = append(a.conv, out.Message)
	a.countTokens(out.Tokens)
	return out, nextStep, nil
}

// callModel runs the run's next model call, model/<n>, over the
// conversation.
func (a *agent) callModel(ctx workflow.Context, hb, timeout time.Duration) (wire.ModelOutput, error) {
	n := a.calls + 1
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          fmt.Sprintf("model/%d", n),
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 8,
			NonRetryableErrorTypes: []string{"ModelRejected", "NoModel"},
		},
		Summary: fmt.Sprintf("model call %d", n),
	})
	in := wire.ModelInput{
		SessionID: a.in.SessionID, RunID: a.in.RunID, WorkflowID: a.scope.WorkflowID, Call: n, Round: a.round + 1,
		Provider: a.in.Provider, ClientTools: a.in.ClientTools, Messages: a.conv, Budget: a.budget, Last: a.last,
		SystemPrompt: a.in.SystemPrompt, Exclude: a.exclude(), // a subagent's (G1), a chatbot's and its sender's (G3)
		Model:  a.in.Model,  // a chatbot's (G3)
		Script: a.in.Script, // a scripted model's turns (docs/scripted-model.md)
	}
	var out wire.ModelOutput
	err := workflow.ExecuteActivity(actx, wire.ActivityModelCall, in).Get(actx, &out)
	return out, err
}

// takeBudget puts the tool results the call's budget shortened into the
// conversation, and their references into the run state, the only ones
// read_result reads (B3). It reports whether the run ends
// context_exceeded.
func (a *agent) takeBudget(out wire.ModelOutput) bool {
	for _, b := range out.Budgeted {
		if b.Msg < 0 || b.Msg >= len(a.conv) || b.Ref == "" {
			continue
		}
		m := &a.conv[b.Msg]
		m.Content, m.ContentRef, m.Budgeted = b.Content, b.Ref, true
		if a.state == nil || !slices.Contains(a.state.ResultRefs, b.Ref) {
			st := a.state.Clone() // a new state: the old one may be a round's input still
			st.ResultRefs = append(st.ResultRefs, b.Ref)
			a.state = st
		}
	}
	if !out.ContextExceeded {
		return false
	}
	a.status = round.AgentContextExceeded
	a.reason = "the system message, the user messages and the last two rounds alone pass the context budget (LLM_CONTEXT_TOKENS)"
	return true
}
