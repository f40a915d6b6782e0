package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// MCP elicitation (E1), for servers that send elicitation/create during a
// call: the call's activity signals the round (SignalElicit), the call
// waits as kind elicitation with a wait_id until a person answers by the
// answer update or the wait's deadline passes (then the server gets
// cancel), and the activity, which heartbeats all the while, reads the
// answer with QueryElicitation. A crash of the worker while it waits loses
// the attempt as any other does (P2.4): the server died with it or forgot
// the call, so the outcome is unknown for a call with side effects.

// elicitKey names one request: a call, the activity attempt that made it
// and its sequence in the attempt.
func elicitKey(callID string, attempt, seq int) string {
	return fmt.Sprintf("%s/%d/%d", callID, attempt, seq)
}

// elicitState is one request and, once it has it, its answer.
type elicitState struct {
	req      round.ElicitRequest
	answered bool
	expired  bool
	action   string
	content  map[string]any
}

// onElicit makes the call wait for the request. A request for a call that
// does not run, or a repeat of one the round has, changes nothing.
func (r *run) onElicit(ctx workflow.Context, raw json.RawMessage) {
	var e round.ElicitRequest
	if err := json.Unmarshal(raw, &e); err != nil {
		r.ignore(ctx, wire.SignalElicit, "", "malformed payload: "+err.Error())
		return
	}
	if err := e.Validate(); err != nil {
		r.ignore(ctx, wire.SignalElicit, e.CallID, err.Error())
		return
	}
	i, known := r.index[e.CallID]
	key := elicitKey(e.CallID, e.Attempt, e.Seq)
	switch {
	case !known:
		r.ignore(ctx, wire.SignalElicit, e.CallID, "no call with this id in the round")
		return
	case r.calls[i].State != CallRunning:
		r.ignore(ctx, wire.SignalElicit, e.CallID, "the call is not running")
		return
	case r.elicits[key] != nil:
		return // a repeated signal of a request the round has
	}
	Version(ctx, changeElicitation, 1)
	r.ask(ctx, &r.calls[i], key, e)
}

// ask makes the call wait for the request under key, until a person
// answers or the deadline passes (then the answer is cancel).
func (r *run) ask(ctx workflow.Context, c *Call, key string, e round.ElicitRequest) *elicitState {
	if r.elicits == nil {
		r.elicits = map[string]*elicitState{}
	}
	st := &elicitState{req: e}
	r.elicits[key] = st
	now := workflow.Now(ctx)
	if c.ApprovalID == "" {
		c.ApprovalID = r.approvalID(c)
	}
	c.Waits++
	p := &round.Pending{CallID: c.CallID, Tool: c.Tool, Kind: round.KindElicitation, Arguments: c.Args,
		ApprovalID: c.ApprovalID, WaitID: approval.WaitID(c.ApprovalID, round.KindElicitation, c.Waits),
		Subject: c.Facts.Subject, Elicitation: wire.ElicitationOf(e), Since: now, Deadline: now.Add(r.snap.ConfirmTimeout)}
	c.pending, c.elicit = p, st
	r.gateTick++
	r.notifyWait(c, p, notify.TypeWaiting, 0, "mcp server "+e.Server+" asks for input")
	workflow.Go(ctx, func(ctx workflow.Context) {
		ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return st.answered })
		if ok || err != nil || st.answered {
			return
		}
		// The deadline: the server gets cancel, and the call ends with
		// what the server then returns.
		st.answered, st.expired, st.action = true, true, round.ElicitCancel
		if c.elicit == st {
			r.notifyWait(c, p, notify.TypeExpired, 0, "no answer within "+r.snap.ConfirmTimeout.String())
			c.pending, c.elicit = nil, nil
			r.gateTick++
		}
	})
	return st
}

// startMCP runs an MCP call, and when its 2026-07-28 server answers
// input_required (the output's Input), has the call wait for a person for
// each request in turn and runs it again with the answers and the
// server's state, up to wire.MaxInputTrips times. Everything the next run
// needs is in history, so a worker that dies while the call waits loses
// nothing.
func (r *run) startMCP(ctx workflow.Context, c *Call, ti ToolInfo, in wire.ExecuteInput) workflow.Future {
	first := r.executeTool(ctx, ti, activityOptions(ti, c, r.snap), in)
	f, settable := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		next, polls := first, 0
		for {
			var out wire.ExecuteOutput
			err := next.Get(ctx, &out)
			if err == nil && out.Task != nil {
				// The server runs the call as a task (E2): its id is in
				// history now, and an activity that may be retried polls it.
				Version(ctx, changeMCPTasks, 1)
				in.Task, in.InputResponses, in.RequestState = out.Task, nil, ""
				polls++
				next = r.executeTool(ctx, ti, taskPollOptions(ti, c, r.snap, out.Task, fmt.Sprintf("%s/task-%d", c.CallID, polls)), in)
				continue
			}
			if err != nil || out.Input == nil {
				settable.Set(out, err)
				return
			}
			if in.InputTrips >= wire.MaxInputTrips {
				settable.Set(wire.ExecuteOutput{IsError: true, Attempt: out.Attempt,
					Content: fmt.Sprintf("the mcp server still asks for input after %d round trips", in.InputTrips)}, nil)
				return
			}
			Version(ctx, changeElicitation, 1)
			answers := map[string]json.RawMessage{}
			// Copying a map does not depend on its order.
			//workflowcheck:ignore
			for k, v := range out.Input.Answered {
				answers[k] = v
			}
			for _, e := range out.Input.Asks {
				e.CallID, e.Attempt = c.CallID, -(in.InputTrips + 1) // keys apart from an attempt's own requests
				st := r.ask(ctx, c, elicitKey(c.CallID, e.Attempt, e.Seq), e)
				if err := workflow.Await(ctx, func() bool { return st.answered }); err != nil {
					settable.Set(nil, temporal.NewCanceledError())
					return
				}
				res := map[string]any{"action": st.action}
				if st.action == round.ElicitAccept && e.Mode == "form" {
					res["content"] = wire.WithDefaults(e.RequestedSchema, st.content)
				}
				b, _ := json.Marshal(res)
				answers[e.Key] = b
			}
			in.InputResponses, in.RequestState, in.InputTrips = answers, out.Input.State, in.InputTrips+1
			opts := activityOptions(ti, c, r.snap)
			opts.ActivityID = fmt.Sprintf("%s/input-%d", c.CallID, in.InputTrips)
			if in.Task != nil {
				// The task's answers go with its next poll.
				opts = taskPollOptions(ti, c, r.snap, in.Task, fmt.Sprintf("%s/task-input-%d", c.CallID, in.InputTrips))
			}
			next = r.executeTool(ctx, ti, opts, in)
		}
	})
	return f
}

// taskPollOptions are those of the activity that polls an MCP call's task
// (E2). It may be retried, on any worker, since polling changes nothing on
// the server, except when it finds the task lost (a stdio server's, gone
// with the worker that started it). An attempt may run as long as the
// server keeps the task (at most a day; else the tool's timeout), plus the confirm
// timeout, since a 2025-11-25 server's requests are answered while it
// polls; it heartbeats all the while.
func taskPollOptions(ti ToolInfo, c *Call, snap Snapshot, t *round.MCPTask, id string) workflow.ActivityOptions {
	run := ti.Timeout
	if ttl := min(time.Duration(t.TTLMS)*time.Millisecond, wire.MaxTaskPoll); ttl > run {
		run = ttl
	}
	run += snap.ConfirmTimeout
	return workflow.ActivityOptions{
		ActivityID:             id,
		StartToCloseTimeout:    run,
		ScheduleToCloseTimeout: 2 * run,
		HeartbeatTimeout:       snap.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{wire.ErrTypeOutcomeLost}},
		Summary: c.Tool + " " + c.CallID + " task " + t.ID,
	}
}

// checkAnswer is the answer update's validator: the call must wait for an
// elicitation, the wait_id (when given) must be its wait's, the action one
// of the three, and accepted content must validate against the requested
// schema.
func (r *run) checkAnswer(a round.ElicitAnswer) error {
	i, known := r.index[a.CallID]
	if !known || !r.calls[i].waitsFor(round.KindElicitation) || r.calls[i].elicit == nil {
		why := "no call with this id in the round"
		if known {
			why = "the call does not wait for an answer to an elicitation"
		}
		return temporal.NewNonRetryableApplicationError(why, string(round.CodeNotWaiting), nil)
	}
	c := &r.calls[i]
	if a.WaitID != "" && a.WaitID != c.pending.WaitID {
		return temporal.NewNonRetryableApplicationError("the wait_id is not the call's current wait", string(round.CodeStaleWait), nil)
	}
	switch a.Action {
	case round.ElicitAccept:
	case round.ElicitDecline, round.ElicitCancel:
		if len(a.Content) > 0 {
			return temporal.NewNonRetryableApplicationError("content goes only with action accept", string(round.CodeInvalidAnswer), nil)
		}
		return nil
	default:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("action must be accept, decline or cancel, not %q", a.Action), string(round.CodeInvalidAnswer), nil)
	}
	if c.elicit.req.Mode != "form" {
		if len(a.Content) > 0 {
			return temporal.NewNonRetryableApplicationError("a url request takes no content", string(round.CodeInvalidAnswer), nil)
		}
		return nil
	}
	content := a.Content
	if content == nil {
		content = map[string]any{}
	}
	b, err := json.Marshal(content)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("content: "+err.Error(), string(round.CodeInvalidAnswer), nil)
	}
	if bad := tools.Validate(c.elicit.req.RequestedSchema, b); len(bad) > 0 {
		return temporal.NewNonRetryableApplicationError("content fails the requested schema: "+strings.Join(bad, "; "), string(round.CodeInvalidAnswer), nil)
	}
	return nil
}

// onAnswer records a validated answer; the activity reads it next.
func (r *run) onAnswer(ctx workflow.Context, a round.ElicitAnswer) {
	i := r.index[a.CallID]
	c := &r.calls[i]
	st := c.elicit
	st.answered, st.action, st.content = true, a.Action, a.Content
	r.notifyWait(c, c.pending, notify.TypeDecided, 0, "answered: "+a.Action)
	workflow.GetLogger(ctx).Info("elicitation answered", "call_id", a.CallID, "action", a.Action, "by", a.By, "via", a.Via)
	c.pending, c.elicit = nil, nil
	r.gateTick++
}

// elicitReply answers QueryElicitation.
func (r *run) elicitReply(q wire.ElicitQuery) wire.ElicitReply {
	st := r.elicits[elicitKey(q.CallID, q.Attempt, q.Seq)]
	if st == nil {
		return wire.ElicitReply{}
	}
	return wire.ElicitReply{Known: true, Answered: st.answered, Action: st.action, Content: st.content, Expired: st.expired}
}

// setElicitHandlers registers the answer update and the elicitation
// query. Neither writes a command, and only rounds whose calls asked hold
// an answer update, so old rounds replay as they ran.
func (r *run) setElicitHandlers(ctx workflow.Context) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, names.UpdateAnswer,
		func(ctx workflow.Context, a round.ElicitAnswer) error {
			r.onAnswer(ctx, a)
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, a round.ElicitAnswer) error { return r.checkAnswer(a) }})
	if err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, wire.QueryElicitation, func(q wire.ElicitQuery) (wire.ElicitReply, error) {
		return r.elicitReply(q), nil
	})
}
