package workflows

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/notify"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// DefaultMaxConcurrent is MAX_CONCURRENT_TOOLS when it is not configured:
// half the worker host's cores, at least 3 (P2.2, v1.3.0).
func DefaultMaxConcurrent() int {
	return MaxConcurrentFor(numCPU())
}

// numCPU is the host's core count; a test stands in for other hosts.
var numCPU = runtime.NumCPU

// MaxConcurrentFor is the default bound on a host with that many cores.
func MaxConcurrentFor(cores int) int {
	return max(3, cores/2)
}

// execute is step 5, pass 2: concurrent calls fan out, at most
// MaxConcurrent at a time in call order; serial calls run one after
// another in call order, beside them (P2.1-P2.3). Calls that share a
// concurrency key also wait for a place under the key's limit; a call
// whose key is full lets later calls of other keys pass, so order holds
// within a key. The bounds are counters and a selector: no Go channels,
// goroutines or locks in workflow code.
func (r *run) execute(ctx workflow.Context) {
	r.phase = round.PhaseExecute
	var conc, serial []int
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallReady {
			continue
		}
		c.State = CallQueued
		if r.snap.Tools[c.Tool].Concurrent {
			conc = append(conc, i)
		} else {
			serial = append(serial, i)
		}
	}
	opIDs := len(conc)+len(serial) > 0 && Version(ctx, changeOperationIDs, 1) == 1
	r.subagents = r.subagentShare(ctx, conc, serial)
	keys := r.keyLimits(ctx, conc, serial)
	sel := workflow.NewSelector(ctx)
	outstanding, nextS := 0, 0
	serialBusy := false
	for {
		for ctx.Err() == nil && r.inFlight < r.snap.MaxConcurrent {
			k := keys.next(r, conc)
			if k < 0 {
				break
			}
			c := &r.calls[conc[k]]
			conc = append(conc[:k:k], conc[k+1:]...)
			keys.take(c)
			r.inFlight++
			r.peak = max(r.peak, r.inFlight)
			outstanding++
			sel.AddFuture(r.start(ctx, c), func(f workflow.Future) {
				r.finish(ctx, c, f)
				r.operationID(ctx, c, opIDs)
				keys.give(c)
				r.inFlight--
				outstanding--
			})
		}
		if ctx.Err() == nil && !serialBusy && nextS < len(serial) && keys.free(r, &r.calls[serial[nextS]]) {
			c := &r.calls[serial[nextS]]
			nextS++
			keys.take(c)
			serialBusy = true
			outstanding++
			sel.AddFuture(r.start(ctx, c), func(f workflow.Future) {
				r.finish(ctx, c, f)
				r.operationID(ctx, c, opIDs)
				keys.give(c)
				serialBusy = false
				outstanding--
			})
		}
		if outstanding == 0 {
			break
		}
		sel.Select(ctx)
	}
	// Calls still queued when the round was cancelled never started.
	for _, i := range append(conc, serial[nextS:]...) {
		c := &r.calls[i]
		c.Outcome = &Outcome{Status: round.StatusCancelled, Content: "the round was cancelled before the call started; it did not run"}
		c.State = CallDone
	}
}

// keyCounts counts the running calls per concurrency key; nil when the
// round does not limit keys, and then every call is free.
type keyCounts map[string]int

// keyLimits is the per-key counter, when a queued call has a key and the
// round is new enough to honour it.
func (r *run) keyLimits(ctx workflow.Context, lanes ...[]int) keyCounts {
	for _, lane := range lanes {
		for _, i := range lane {
			if r.calls[i].Facts.Key == "" {
				continue
			}
			if Version(ctx, changeKeyLimits, 1) == workflow.DefaultVersion {
				return nil
			}
			return keyCounts{}
		}
	}
	return nil
}

// free reports whether c may start under its key's limit.
func (k keyCounts) free(r *run, c *Call) bool {
	if k == nil || c.Facts.Key == "" {
		return true
	}
	limit := r.snap.Tools[c.Tool].KeyLimit
	if c.Facts.KeyLimit > 0 {
		limit = c.Facts.KeyLimit
	}
	return k[c.Facts.Key] < max(1, limit)
}

// next is the index in queue of the first call that may start, -1 if none.
func (k keyCounts) next(r *run, queue []int) int {
	for j, i := range queue {
		if k.free(r, &r.calls[i]) {
			return j
		}
	}
	return -1
}

func (k keyCounts) take(c *Call) {
	if k != nil && c.Facts.Key != "" {
		k[c.Facts.Key]++
	}
}

func (k keyCounts) give(c *Call) {
	if k != nil && c.Facts.Key != "" {
		k[c.Facts.Key]--
	}
}

// operationID records the operation id of a call that ran as an activity.
func (r *run) operationID(ctx workflow.Context, c *Call, on bool) {
	if ti := r.snap.Tools[c.Tool]; on && c.Outcome != nil && !ti.Interactive && !ti.Client {
		c.Outcome.OperationID = round.OperationID(r.scope.WorkflowID, workflow.GetInfo(ctx).WorkflowExecution.RunID, c.CallID)
	}
}

// slow reports whether a call of the round goes through the server or waits
// for someone: a regular activity, an ask_user answer, a client result.
func (r *run) slow() bool {
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallReady {
			continue
		}
		ti := r.snap.Tools[c.Tool]
		if !ti.Local || c.Facts.Effect != tools.ReadOnly || ti.Interactive || ti.Client {
			return true
		}
	}
	return false
}

// start begins one call, as its tool's kind (kinds.go) runs it.
func (r *run) start(ctx workflow.Context, c *Call) workflow.Future {
	ti := r.snap.Tools[c.Tool]
	c.started = workflow.Now(ctx)
	c.State = CallRunning
	r.record(r.scope.CallStarted(workflow.Now(ctx), c.CallID, c.Tool, 1))
	return r.startKind(ctx, c, ti)
}

// startWorkerActivity runs a call as the worker's own ExecuteTool
// activity: local for short read-only tools, regular otherwise, with a
// reconciliation for tools that reconcile and input rounds for MCP tools.
func (r *run) startWorkerActivity(ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
	c.activity = true
	in := wire.ExecuteInput{
		CallID: c.CallID, Tool: c.Tool, Args: c.Args, SessionID: r.scope.SessionID, RunID: r.scope.RunID,
		Round: r.scope.Round, WorkflowID: r.scope.WorkflowID, Test: c.Test,
	}
	if c.Approval != nil && c.Approval.Decision == round.DecisionRule && Version(ctx, changeRuleLockdown, 1) == 1 {
		in.RuleApproved = true
		if c.ruleScope != "" && Version(ctx, changeRuleScope, 1) == 1 {
			in.RuleScope, c.Approval.Scope = c.ruleScope, c.ruleScope
		}
	}
	if c.Tool == tools.ReadResult {
		in.ResultRefs = r.resultRefs(ctx)
	}
	if local(ti, c) && !r.placed(ti) {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localActivityOptions(ti, c)), wire.ActivityExecuteTool, in)
	}
	c.selfPublished = true // with the worker's own clock, when it really starts
	if reconcilable(ti, c) && Version(ctx, changeReconcile, 1) == 1 {
		return r.startReconcilable(ctx, c, ti, in)
	}
	if ti.MCP && Version(ctx, changeInputRounds, 1) >= 1 {
		return r.startMCP(ctx, c, ti, in) // elicit.go
	}
	return r.executeTool(ctx, ti, activityOptions(ti, c, r.snap), in)
}

// local reports whether a call runs as a local activity: short read-only
// tools only, since a local activity may run again after a crash.
func local(ti ToolInfo, c *Call) bool {
	return ti.Local && c.Facts.Effect == tools.ReadOnly
}

// retryPolicy is the tool's retry policy, with one attempt only for calls
// with side effects (P2.4: a lost attempt is reported, never re-run).
func retryPolicy(ti ToolInfo, c *Call) *temporal.RetryPolicy {
	rp := &temporal.RetryPolicy{
		InitialInterval:    ti.Retry.InitialInterval,
		BackoffCoefficient: ti.Retry.BackoffCoefficient,
		MaximumInterval:    ti.Retry.MaxInterval,
		MaximumAttempts:    int32(max(1, ti.Retry.MaxAttempts)),
	}
	if c.Facts.Effect == tools.AtMostOnce {
		rp.MaximumAttempts = 1
	}
	return rp
}

func localActivityOptions(ti ToolInfo, c *Call) workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{StartToCloseTimeout: ti.Timeout, RetryPolicy: retryPolicy(ti, c), Summary: c.Tool + " " + c.CallID}
}

// activityOptions are a regular activity's: it heartbeats, so that a lost
// worker is noticed within the heartbeat timeout.
//
// An MCP tool's server may ask the user for input during the call (E1): its
// attempt may then also wait for the answer, up to the confirm timeout.
func activityOptions(ti ToolInfo, c *Call, snap Snapshot) workflow.ActivityOptions {
	timeout := ti.Timeout
	if ti.MCP {
		timeout += snap.ConfirmTimeout
	}
	return workflow.ActivityOptions{
		ActivityID:          c.CallID,
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    snap.HeartbeatTimeout,
		RetryPolicy:         retryPolicy(ti, c),
		Summary:             c.Tool + " " + c.CallID,
	}
}

// startExternal waits for an ask_user answer or a client tool's result
// (signals.go), up to the confirm timeout.
func (r *run) startExternal(ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
	now := workflow.Now(ctx)
	pend := &round.Pending{CallID: c.CallID, Tool: c.Tool, Kind: round.KindToolResult, Arguments: c.Args, Since: now, Deadline: now.Add(r.snap.ConfirmTimeout)}
	if ti.Interactive {
		pend.Kind = round.KindAnswer
		pend.Questions = Questions(c.Args)
	}
	c.pending = pend
	r.externalWaitID(c, pend)
	r.notifyWait(c, pend, notify.TypeWaiting, 0, "waits for "+strings.ReplaceAll(pend.Kind, "_", " "))
	f, settable := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return c.answer != nil })
		switch {
		case ok:
			settable.Set(*c.answer, nil)
		case err != nil:
			settable.Set(nil, temporal.NewCanceledError())
		default:
			if c.waitsFor(pend.Kind) {
				r.notifyWait(c, pend, notify.TypeExpired, 0, "no "+strings.ReplaceAll(pend.Kind, "_", " ")+" within "+r.snap.ConfirmTimeout.String())
				c.pending = nil
			}
			settable.Set(wire.ExecuteOutput{IsError: true, Content: "no " + strings.ReplaceAll(pend.Kind, "_", " ") + " arrived within " + r.snap.ConfirmTimeout.String()}, nil)
		}
	})
	return f
}

// finish turns a call's future into its outcome (P2.4, P2.5): a tool's own
// failure is an error result, a cancelled call is cancelled, and a lost
// attempt of a call with side effects has an unknown outcome.
func (r *run) finish(ctx workflow.Context, c *Call, f workflow.Future) {
	o := &Outcome{DurationMS: workflow.Now(ctx).Sub(c.started).Milliseconds()}
	var out wire.ExecuteOutput
	err := f.Get(ctx, &out)
	if c.elicit != nil { // the server stopped asking (E1)
		c.pending, c.elicit = nil, nil
	}
	var timeout *temporal.TimeoutError
	var again *lostAgain
	var gone *hostGone
	switch {
	case errors.As(err, &gone): // placed, and it never started (W5)
		o.Status, o.Content, o.ErrorCode = round.StatusError, gone.why, round.ErrorCodeWorkspaceUnavailable
	case err == nil:
		o.Status, o.Content, o.ContentRef = round.StatusOK, out.Content, out.ContentRef
		o.Fetched, o.Touched, o.Read, o.FromCache, o.Attempts = out.Fetched, out.Touched, out.Read, out.FromCache, max(1, out.Attempt)
		o.Files, o.Usage, o.Child = out.Files, out.Usage, out.Child
		if out.IsError {
			o.Status = round.StatusError
			if out.ErrorCode != "" && Version(ctx, changeErrorCode, 1) >= 1 {
				o.ErrorCode = out.ErrorCode
			}
		}
		if len(out.Images) > 0 && !out.IsError && Version(ctx, changeImages, 1) >= 1 {
			o.Images = out.Images
		}
	case temporal.IsCanceledError(err):
		o.Status, o.Content = round.StatusCancelled, "the round was cancelled while the call ran; what it did before it stopped is unknown"
	case errors.As(err, &again):
		o.Status = round.StatusUnknownOutcome
		o.Content = "the outcome is unknown: the first attempt was lost (" + lostHow(again.first) + ")"
		if again.absent != "" {
			o.Content += "; a reconciliation proved its effect absent and that attempt dead (" + again.absent + ")"
		} else {
			o.Content += "; a reconciliation proved its effect absent and that attempt dead"
		}
		o.Content += ", so the call ran once more; that run was lost too (" + lostHow(again.second) + "). " +
			"It was not run a third time, because it has side effects; check whether it took effect before calling it again."
	case lostTask(err) != "":
		// The work the call started is gone (E2): a stdio server's task
		// that died with the worker that started it.
		o.Status = round.StatusUnknownOutcome
		o.Content = "the outcome is unknown: " + lostTask(err) + ". It was not run again; check whether it took effect before calling it again."
	case c.Facts.Effect == tools.AtMostOnce:
		why := "the attempt was lost before it reported"
		if errors.As(err, &timeout) {
			why = "the attempt was lost (" + lostHow(err) + ")"
		}
		o.Status = round.StatusUnknownOutcome
		o.Content = "the outcome is unknown: " + why + ". It was not run again, because it has side effects; check whether it took effect before calling it again."
		var un *unreconciled
		if errors.As(err, &un) && un.why != "" {
			o.Content += " A reconciliation could not decide: " + un.why + "."
		}
	default:
		o.Status, o.Content = round.StatusError, text.RootMessage(err)
	}
	if out.Attempt == 0 && err != nil {
		o.Attempts = 1
		if n := failedAttempts(err, retryPolicy(r.snap.tool(c.Tool), c)); n > 1 && Version(ctx, changeFailedAttempts, 1) >= 1 {
			o.Attempts = n
		}
	}
	if again != nil {
		o.Attempts = 2
	}
	if gone != nil {
		o.Attempts = 0 // it never started (W5)
	}
	o.Reconciled = err == nil && out.Reconciled
	c.selfFinished = c.activity && err == nil && !out.Reconciled
	c.Outcome = o
	c.State = CallDone
}

// failedAttempts is how many attempts a call whose activity failed made:
// the attempt its last failure names (ExecuteTool puts it in a passing
// failure's details), else all its policy allows when Temporal stopped at
// the maximum, else 1.
func failedAttempts(err error, rp *temporal.RetryPolicy) int {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == wire.ErrTypeTransient && app.HasDetails() {
		var n int
		if app.Details(&n) == nil && n > 0 {
			return n
		}
	}
	var act *temporal.ActivityError
	if errors.As(err, &act) && act.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED && rp.MaximumAttempts > 1 {
		return int(rp.MaximumAttempts)
	}
	return 1
}

// lostTask is why the work a call started is gone, when its activity
// found it so (round.ErrTypeOutcomeLost), else "".
func lostTask(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == wire.ErrTypeOutcomeLost {
		return app.Message()
	}
	return ""
}

// lostHow says how an attempt was lost: which timeout, or that it never
// reported.
func lostHow(err error) string {
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return fmt.Sprintf("%s timeout: the worker died or the call hung", strings.ToLower(strings.TrimPrefix(timeout.TimeoutType().String(), "TIMEOUT_TYPE_")))
	}
	return "it never reported: " + text.RootMessage(err)
}

// resultRefs are the references read_result may read (B3): those of the run
// state, in a round an agent run started. A round started by a client
// carries a state it wrote itself, so it reads none.
func (r *run) resultRefs(ctx workflow.Context) []string {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if r.st == nil || parent == nil || !strings.HasPrefix(parent.ID, names.AgentWorkflowIDPrefix+"/") {
		return nil
	}
	return r.st.ResultRefs
}
