package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// Subagents (G1). A subagents call runs its task as a child agent run,
// agentrun/<session>/sub-<hash of the call's operation id>, in the round's
// session and workspace: the child's model calls and rounds are in its own
// history, so a worker that dies while it runs repeats none of them, and
// its rounds wait for people in the inbox as any round does. A child never
// has more than the run that starts it:
//
//   - auto_approve only when the round has it and the worker allows it;
//   - the round's tools less exclude_tools and the round's own exclusions,
//     and no client tools; no tool that starts runs (round.RecursiveTools)
//     at the deepest depth SUBAGENT_DEPTH allows;
//   - none of the round's remembered rules (it starts with no run state);
//   - of each limit of the run, 1/n of what is left, for the n subagents
//     the round starts; what the child did joins the round's counts when it
//     returns (countUsage). Since changeFloorShares (T15) that is
//     floor((left - the round's own calls)/n) of each limit the round has,
//     its own or WORKER_LIMITS, and may be 0 (AgentInput.ZeroShare); a
//     background subagent's share joins the round's counts when it starts,
//     and when it ends only what it did past its share.
//
// The call's result is the child's final answer, or an error naming the
// child's status and id.

// subagentShare counts the round's subagents calls that are about to run:
// each gets that share of the run's limits. A round with such calls asks
// for changeFloorShares, and then counts only the calls that start a
// subagent, and what all its calls about to run will add to the run's
// usage (queued).
func (r *run) subagentShare(ctx workflow.Context, queued ...[]int) int {
	n := 0
	for _, q := range queued {
		for _, i := range q {
			if r.snap.Tools[r.calls[i].Tool].kind() == tools.KindChildRun {
				n++
			}
		}
	}
	if n == 0 || !r.snap.Features.RunLimits || Version(ctx, changeFloorShares, 1) < 1 {
		return n
	}
	r.floorShares = true
	n = 0
	for _, q := range queued {
		for _, i := range q {
			c := &r.calls[i]
			var a wire.SubagentArgs
			if r.snap.Tools[c.Tool].kind() == tools.KindChildRun && (json.Unmarshal([]byte(c.Args), &a) != nil || a.ID == "") {
				n++ // a look at a background subagent ({"id"}) starts none
			}
			command, write := counts(c)
			r.queued.Calls++
			if command {
				r.queued.Commands++
			}
			if write {
				r.queued.Writes++
			}
		}
	}
	return n
}

// subagentInput is the child run of call c, one of n subagents of the
// round.
func (r *run) subagentInput(ctx workflow.Context, c *Call, a wire.SubagentArgs, n int) (round.AgentInput, error) {
	depth := r.in.Depth + 1
	most := r.snap.SubagentDepth
	if most <= 0 {
		most = round.DefaultSubagentDepth
	}
	exclude := append(slices.Clone(r.in.Exclude), a.ExcludeTools...)
	if depth >= most {
		exclude = append(exclude, round.RecursiveTools...)
	}
	slices.Sort(exclude)
	exclude = slices.Compact(exclude)
	opID := round.OperationID(r.scope.WorkflowID, workflow.GetInfo(ctx).WorkflowExecution.RunID, c.CallID)
	in := round.AgentInput{
		SessionID: r.in.SessionID, RunID: names.SubagentRunID(opID), Task: a.Task, Provider: r.in.Provider,
		AutoApprove:           r.in.AutoApprove && !r.snap.DenyAutoApprove,
		ConfirmTimeoutSeconds: r.in.ConfirmTimeoutSeconds,
		SystemPrompt:          a.SystemPrompt, Exclude: exclude, Depth: depth, Parent: r.scope.WorkflowID, Name: a.Name,
		Chain: r.in.Chain, // a subagent of a chatbot is part of its chain (G3)
	}
	switch l := r.limits(); {
	case r.floorShares:
		u := r.st.Usage.Clone()
		if u == nil {
			u = &round.Usage{}
		}
		u.Add(&r.queued)
		in.Limits, in.ZeroShare = l.FloorShare(u, n, workflow.Now(ctx))
	case r.snap.Features.RunLimits && r.st.Limits != nil:
		in.Limits = l.Share(r.st.Usage, n, workflow.Now(ctx))
	}
	if err := in.ValidateStarted(); err != nil {
		return round.AgentInput{}, err
	}
	return in, nil
}

// startSubagent runs call c as its child agent run, starts it in the
// background (G2), or looks at a background one (an "id" argument); the
// future holds the call's wire.ExecuteOutput.
func (r *run) startSubagent(ctx workflow.Context, c *Call, n int) workflow.Future {
	f, settable := workflow.NewFuture(ctx)
	fail := func(msg string) workflow.Future {
		settable.Set(wire.ExecuteOutput{IsError: true, Content: msg}, nil)
		return f
	}
	var a wire.SubagentArgs
	if err := json.Unmarshal([]byte(c.Args), &a); err != nil {
		return fail(c.Tool + ": " + err.Error())
	}
	if a.ID != "" {
		return r.pollSubagent(ctx, a.ID)
	}
	if strings.TrimSpace(a.Task) == "" {
		return fail(c.Tool + ": give a task to start a subagent, or the id of one of this run's background subagents")
	}
	in, err := r.subagentInput(ctx, c, a, n)
	if err != nil {
		return fail(err.Error())
	}
	background := c.Tool == wire.BackgroundSubagents
	id := names.AgentWorkflowID(in.SessionID, in.RunID)
	label := in.RunID
	if in.Name != "" {
		label = in.Name + " (" + in.RunID + ")"
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: id,
		// The id names the call's one child for good (R).
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Cancelling the round cancels the child, whose rounds still give
		// every call a result; the call waits for that. A background child
		// outlives the round: cancelling its run cancels it (G2).
		ParentClosePolicy:     closePolicy(background),
		WaitForCancellation:   !background,
		TypedSearchAttributes: temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeyword(names.SearchParent).ValueSet(r.scope.WorkflowID)),
		Memo:                  map[string]any{wire.MemoParent: r.scope.WorkflowID},
		StaticSummary:         fmt.Sprintf("subagent %s of call %s in %s", label, c.CallID, r.scope.WorkflowID),
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		child := workflow.ExecuteChildWorkflow(cctx, names.AgentWorkflowName, in)
		if background {
			var ex workflow.Execution
			if err := child.GetChildWorkflowExecution().Get(ctx, &ex); err != nil {
				settable.Set(wire.ExecuteOutput{IsError: true, Content: "subagent " + id + " did not start: " + text.RootMessage(err)}, nil)
				return
			}
			out := wire.ExecuteOutput{Child: id, Content: fmt.Sprintf(
				"started subagent %s in the background; call %s with {\"id\": %q} for its status or answer", id, wire.BackgroundSubagents, id)}
			if res := in.Limits.Reservation(in.ZeroShare); r.floorShares && res != nil && r.st.Usage != nil {
				// Its share counts as the run's from now on (T15): the
				// run state keeps it until the child's own counts join.
				out.Usage = res
				if r.st.Usage.Reserved == nil {
					r.st.Usage.Reserved = map[string]*round.Usage{}
				}
				r.st.Usage.Reserved[id] = res.Counts()
			}
			settable.Set(out, nil)
			return
		}
		var st round.AgentStatus
		err := child.Get(ctx, &st)
		switch {
		case err == nil:
			settable.Set(subagentOutput(id, st), nil)
		case temporal.IsCanceledError(err):
			settable.Set(nil, err)
		case temporal.IsWorkflowExecutionAlreadyStartedError(err):
			settable.Set(wire.ExecuteOutput{IsError: true, Content: "subagent " + id + " was started before and is not this call's to run again"}, nil)
		default:
			settable.Set(wire.ExecuteOutput{IsError: true, Content: "subagent " + id + " failed: " + text.RootMessage(err)}, nil)
		}
	})
	return f
}

func closePolicy(background bool) enumspb.ParentClosePolicy {
	if background {
		return enumspb.PARENT_CLOSE_POLICY_ABANDON
	}
	return enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL
}

// pollSubagent answers with the status or the answer of a background
// subagent of this run (G2): only ids the run state lists, and the
// activity checks the child's parent too.
func (r *run) pollSubagent(ctx workflow.Context, id string) workflow.Future {
	f, settable := workflow.NewFuture(ctx)
	if !slices.Contains(r.st.Children, id) {
		settable.Set(wire.ExecuteOutput{IsError: true, Content: round.NotThisRun + ": " + id + " is not a subagent of this run"}, nil)
		return f
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, InitialInterval: time.Second, NonRetryableErrorTypes: []string{round.NotThisRun}},
		Summary:             "status of " + id,
	})
	in := wire.SubagentStatusInput{WorkflowID: id, SessionID: r.in.SessionID, RunID: r.in.RunID}
	workflow.Go(ctx, func(ctx workflow.Context) {
		var st round.AgentStatus
		err := workflow.ExecuteActivity(actx, wire.ActivitySubagentStatus, in).Get(ctx, &st)
		switch {
		case temporal.IsCanceledError(err):
			settable.Set(nil, err)
		case err != nil:
			settable.Set(wire.ExecuteOutput{IsError: true, Content: text.RootMessage(err)}, nil)
		case st.Status == round.AgentRunning:
			settable.Set(wire.ExecuteOutput{Content: fmt.Sprintf("subagent %s is running: %d rounds and %d model calls so far", id, st.Round, st.ModelCalls)}, nil)
		default:
			// What it did joins the run's counts once, at the first look
			// that finds it ended (B1).
			out := subagentOutput(id, st)
			if slices.Contains(r.st.Counted, id) || r.counting[id] {
				out.Usage = nil
			} else {
				if r.counting == nil {
					r.counting = map[string]bool{}
				}
				r.counting[id] = true
				out.Child = id
				if u := r.st.Usage; u != nil && u.Reserved[id] != nil {
					out.Usage = out.Usage.Past(u.Reserved[id]) // its share was counted when it started (T15)
					delete(u.Reserved, id)
				}
			}
			settable.Set(out, nil)
		}
	})
	return f
}

// subagentOutput is the call's result of the child's end: its final
// answer when it completed, else an error naming its status and id.
func subagentOutput(id string, st round.AgentStatus) wire.ExecuteOutput {
	if st.Status == round.AgentCompleted {
		return wire.ExecuteOutput{Content: st.Final, Usage: st.Usage}
	}
	msg := fmt.Sprintf("subagent %s ended %s", id, st.Status)
	if st.Reason != "" {
		msg += ": " + st.Reason
	}
	if st.Final != "" {
		msg += "; its last answer: " + st.Final
	}
	return wire.ExecuteOutput{IsError: true, Content: msg, Usage: st.Usage}
}
