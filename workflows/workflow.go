package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// RoundWorkflow runs one round of tool calls.
type RoundWorkflow struct {
	Catalog Catalog
}

// run is one execution's working state. Signal and query handlers and the
// pass 2 fan-out share it; workflow code runs one coroutine at a time, so it
// needs no locks.
type run struct {
	in       *round.Input
	wfID     string
	snap     Snapshot
	st       *round.RunState
	plan     []PlannedCall
	outcomes []*Outcome
	events   []round.Event
	state    []string // per call: planned, waiting, queued, running, done
	pending  []*round.Pending
	answered map[string]*round.ExecuteOutput // results of interactive and client calls
	started  map[int]time.Time

	phase     round.Phase
	published int // events[:published] are on the session's stream
	// selfPublished are call_started events that the activity publishes itself.
	selfPublished map[string]bool
	allowTurn     bool
	inFlight      int
	peak          int
	ignored       int
}

// Run is the workflow function.
func (w *RoundWorkflow) Run(ctx workflow.Context, in round.Input) (round.Output, error) {
	if err := in.Validate(); err != nil {
		return round.Output{}, temporal.NewNonRetryableApplicationError("invalid round input: "+err.Error(), round.ErrTypeInvalidInput, err)
	}
	r := &run{
		in:            &in,
		wfID:          workflow.GetInfo(ctx).WorkflowExecution.ID,
		answered:      map[string]*round.ExecuteOutput{},
		selfPublished: map[string]bool{},
		started:       map[int]time.Time{},
		phase:         round.PhasePreflight,
	}
	calls := make([]Unwrapped, len(in.Assistant.ToolCalls))
	for i, c := range in.Assistant.ToolCalls {
		calls[i] = Unwrap(c)
	}
	req := SnapshotRequest{Provider: in.Provider, ClientTools: in.ClientTools, Calls: calls}
	if err := workflow.SideEffect(ctx, func(workflow.Context) any {
		return w.Catalog.Snapshot(req)
	}).Get(&r.snap); err != nil {
		return round.Output{}, fmt.Errorf("round: read catalog snapshot: %w", err)
	}
	if in.MaxConcurrent > 0 {
		r.snap.MaxConcurrent = in.MaxConcurrent
	}
	if in.ConfirmTimeoutSeconds > 0 {
		r.snap.ConfirmTimeout = time.Duration(in.ConfirmTimeoutSeconds) * time.Second
	}

	r.st = in.State.Clone()
	r.plan = Preflight(&in, calls, &r.snap, r.st)
	r.outcomes = make([]*Outcome, len(r.plan))
	r.state = make([]string, len(r.plan))
	for i := range r.state {
		r.state[i] = "planned"
	}
	r.event(ctx, round.EventRoundStarted, "/started", -1, "", fmt.Sprintf("%d calls", len(r.plan)))

	if err := workflow.SetQueryHandler(ctx, round.QueryPending, func() ([]round.Pending, error) { return r.pendingList(), nil }); err != nil {
		return round.Output{}, err
	}
	if err := workflow.SetQueryHandler(ctx, round.QueryProgress, func() (round.Progress, error) { return r.progress(), nil }); err != nil {
		return round.Output{}, err
	}
	r.listen(ctx)

	r.gate(ctx)
	Validate(r.plan, &r.snap)
	if r.slow() {
		r.flush(ctx) // watchers see the round start before its long calls end
	}
	r.execute(ctx)

	// Pass 3 and its publication run even when the round was cancelled, so
	// every call still gets its result.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	r.phase = round.PhaseCommit
	out := Commit(CommitInput{
		Input: &in, WorkflowID: r.wfID, Plan: r.plan, Outcomes: r.outcomes, Snapshot: &r.snap,
		State: r.st, Events: r.events, Now: workflow.Now(dctx),
	})
	r.publish(dctx, round.PublishInput{Events: out.Result.Events[r.published:], CacheWrites: out.CacheWrites, History: out.Result.History})
	r.phase = round.PhaseDone
	for i := range r.state {
		r.state[i] = "done"
	}
	res := round.Output{
		WorkflowID: r.wfID, SessionID: in.SessionID, RunID: in.RunID, Round: in.Round,
		Assistant: out.Result.History[0], Results: out.Result.Results, Events: round.CompactEvents(out.Result.Events), State: out.Result.State,
	}
	r.fit(dctx, &res)
	return res, nil
}

// event records an event of the round; id is appended to the workflow id.
func (r *run) event(ctx workflow.Context, typ, id string, call int, status round.Status, detail string) round.Event {
	e := round.Event{
		ID: r.wfID + id, Type: typ, SessionID: r.in.SessionID, RunID: r.in.RunID, Round: r.in.Round,
		WorkflowID: r.wfID, Status: status, Detail: detail, Time: workflow.Now(ctx),
	}
	if call >= 0 {
		e.CallID, e.Tool = r.plan[call].CallID, r.plan[call].Tool
	}
	r.events = append(r.events, e)
	return e
}

func (r *run) indexOf(callID string) int {
	for i := range r.plan {
		if r.plan[i].CallID == callID {
			return i
		}
	}
	return -1
}

// Signal payloads are decoded into these copies of the round types: the
// error of a malformed payload names the type it was decoded into
// ("workflows.Confirm"), and recorded rounds keep that text in their
// signal_ignored events.
type (
	Confirm    round.Confirm
	Answer     round.Answer
	ToolResult round.ToolResult
)

// listen drains the round's signals in one coroutine. Payloads are decoded
// here so that a malformed one is recorded instead of dropped.
func (r *run) listen(ctx workflow.Context) {
	confirmCh := workflow.GetSignalChannel(ctx, round.SignalConfirm)
	answerCh := workflow.GetSignalChannel(ctx, round.SignalAnswer)
	resultCh := workflow.GetSignalChannel(ctx, round.SignalToolResult)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(confirmCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var s Confirm
				if err := json.Unmarshal(raw, &s); err != nil {
					r.ignore(ctx, round.SignalConfirm, "", "malformed payload: "+err.Error())
					return
				}
				r.onConfirm(ctx, round.Confirm(s))
			})
			sel.AddReceive(answerCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var a Answer
				if err := json.Unmarshal(raw, &a); err != nil {
					r.ignore(ctx, round.SignalAnswer, "", "malformed payload: "+err.Error())
					return
				}
				r.onExternal(ctx, round.SignalAnswer, round.KindAnswer, a.CallID, func(p *round.Pending) *round.ExecuteOutput {
					return &round.ExecuteOutput{Content: FormatAnswers(p.Questions, a.Answers)}
				})
			})
			sel.AddReceive(resultCh, func(c workflow.ReceiveChannel, _ bool) {
				var raw json.RawMessage
				c.Receive(ctx, &raw)
				var t ToolResult
				if err := json.Unmarshal(raw, &t); err != nil {
					r.ignore(ctx, round.SignalToolResult, "", "malformed payload: "+err.Error())
					return
				}
				r.onExternal(ctx, round.SignalToolResult, round.KindToolResult, t.CallID, func(*round.Pending) *round.ExecuteOutput {
					return &round.ExecuteOutput{Content: t.Content, IsError: t.IsError}
				})
			})
			sel.Select(ctx)
		}
	})
}

// ignore records a signal that changed nothing (P1.6): unknown call ids,
// repeated answers, malformed payloads. It never fails the round.
func (r *run) ignore(ctx workflow.Context, signal, callID, why string) {
	r.ignored++
	e := r.event(ctx, round.EventSignalIgnored, fmt.Sprintf("/signal/%d", r.ignored), -1, "", signal+": "+why)
	r.events[len(r.events)-1].CallID = callID
	workflow.GetLogger(ctx).Warn("signal ignored", "signal", signal, "call_id", callID, "why", why, "event", e.ID)
}

func (r *run) findPending(callID, kind string) int {
	for i, p := range r.pending {
		if p.CallID == callID && p.Kind == kind {
			return i
		}
	}
	return -1
}

func (r *run) dropPending(i int) {
	r.pending = append(r.pending[:i], r.pending[i+1:]...)
}

func (r *run) onConfirm(ctx workflow.Context, s round.Confirm) {
	pi := r.findPending(s.CallID, round.KindConfirm)
	if pi < 0 {
		why := "no call with this id in the round"
		if r.indexOf(s.CallID) >= 0 {
			why = "the call is not waiting for confirmation"
		}
		r.ignore(ctx, round.SignalConfirm, s.CallID, why)
		return
	}
	i := r.indexOf(s.CallID)
	p := &r.plan[i]
	detail := "denied"
	if s.Approve {
		detail = "approved"
		if s.Remember {
			pattern := s.Pattern
			if pattern == "" {
				pattern = p.Facts.Subject
			}
			r.st.AddRule(round.AllowRule{Tool: p.Tool, Pattern: pattern})
			detail += ", remembered " + p.Tool + " " + pattern
		}
		if s.AllowTurn {
			r.allowTurn = true
			detail += ", allowed for the rest of the round"
		}
	} else if s.Reason != "" {
		detail += ": " + s.Reason
	}
	r.resolveConfirm(ctx, pi, s.Approve, s.Reason, detail)
	if !s.Approve {
		return
	}
	// A new rule or allow_turn may settle other calls that wait.
	for j := len(r.pending) - 1; j >= 0; j-- {
		q := r.pending[j]
		if q.Kind != round.KindConfirm {
			continue
		}
		k := r.indexOf(q.CallID)
		if r.allowTurn || (!r.plan[k].Facts.Sensitive && allowed(r.st, r.plan[k].Tool, r.plan[k].Facts.Subject)) {
			r.resolveConfirm(ctx, j, true, "", "approved by "+s.CallID)
		}
	}
}

func (r *run) resolveConfirm(ctx workflow.Context, pi int, approve bool, reason, detail string) {
	i := r.indexOf(r.pending[pi].CallID)
	r.dropPending(pi)
	Decide(&r.plan[i], approve, reason)
	r.state[i] = "planned"
	r.event(ctx, round.EventConfirmationAnswered, "/"+r.plan[i].CallID+"/answered", i, "", detail)
}

func (r *run) onExternal(ctx workflow.Context, signal, kind, callID string, result func(*round.Pending) *round.ExecuteOutput) {
	pi := r.findPending(callID, kind)
	if pi < 0 {
		why := "no call with this id in the round"
		if r.indexOf(callID) >= 0 {
			why = "the call is not waiting for " + kind
		}
		r.ignore(ctx, signal, callID, why)
		return
	}
	r.answered[callID] = result(r.pending[pi])
	r.dropPending(pi)
}

// gate raises every confirmation of the round at once and waits for the
// decisions, which may come in any order, up to the confirm timeout (P1.6).
func (r *run) gate(ctx workflow.Context) {
	now := workflow.Now(ctx)
	deadline := now.Add(r.snap.ConfirmTimeout)
	raised := 0
	for i := range r.plan {
		p := &r.plan[i]
		if p.Stage != StageConfirm {
			continue
		}
		r.pending = append(r.pending, &round.Pending{
			CallID: p.CallID, Tool: p.Tool, Kind: round.KindConfirm, Arguments: p.Args, Subject: p.Facts.Subject,
			Reason: p.ConfirmWhy, Since: now, Deadline: deadline,
		})
		r.state[i] = "waiting"
		r.event(ctx, round.EventConfirmationRequested, "/"+p.CallID+"/confirm", i, "", p.Facts.Subject+" ("+p.ConfirmWhy+")")
		raised++
	}
	if raised == 0 {
		return
	}
	r.phase = round.PhaseConfirm
	r.flush(ctx)
	defer r.flush(ctx) // the answers
	waiting := func() bool { return r.countPending(round.KindConfirm) > 0 }
	ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return !waiting() })
	if err != nil || !ok {
		cancelled := err != nil
		for j := len(r.pending) - 1; j >= 0; j-- {
			if r.pending[j].Kind != round.KindConfirm {
				continue
			}
			i := r.indexOf(r.pending[j].CallID)
			r.dropPending(j)
			if cancelled {
				r.plan[i].done(round.StatusCancelled, "the round was cancelled while the call waited for confirmation; it did not run")
			} else {
				Decide(&r.plan[i], false, "no answer within "+r.snap.ConfirmTimeout.String())
			}
			r.state[i] = "planned"
		}
	}
}

func (r *run) countPending(kind string) int {
	n := 0
	for _, p := range r.pending {
		if p.Kind == kind {
			n++
		}
	}
	return n
}

// execute is pass 2: concurrent calls fan out, at most MaxConcurrent at a
// time in call order; serial calls run one after another in call order,
// beside them (P2.1-P2.3). The bound is a counter and a selector: no Go
// channels, goroutines or locks in workflow code.
func (r *run) execute(ctx workflow.Context) {
	r.phase = round.PhaseExecute
	var conc, serial []int
	for i := range r.plan {
		if r.plan[i].Stage != StageReady {
			continue
		}
		r.state[i] = "queued"
		if ti := r.snap.Tools[r.plan[i].Tool]; ti.Concurrent {
			conc = append(conc, i)
		} else {
			serial = append(serial, i)
		}
	}
	sel := workflow.NewSelector(ctx)
	outstanding, nextC, nextS := 0, 0, 0
	serialBusy := false
	for {
		for ctx.Err() == nil && r.inFlight < r.snap.MaxConcurrent && nextC < len(conc) {
			i := conc[nextC]
			nextC++
			r.inFlight++
			r.peak = max(r.peak, r.inFlight)
			outstanding++
			sel.AddFuture(r.start(ctx, i), func(f workflow.Future) {
				r.finish(ctx, i, f)
				r.inFlight--
				outstanding--
			})
		}
		if ctx.Err() == nil && !serialBusy && nextS < len(serial) {
			i := serial[nextS]
			nextS++
			serialBusy = true
			outstanding++
			sel.AddFuture(r.start(ctx, i), func(f workflow.Future) {
				r.finish(ctx, i, f)
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
	for _, i := range append(conc[nextC:], serial[nextS:]...) {
		r.outcomes[i] = &Outcome{Status: round.StatusCancelled, Content: "the round was cancelled before the call started; it did not run"}
		r.state[i] = "done"
	}
}

// start begins one call: an activity (local for short read-only tools), or,
// for interactive and client tools, a wait for the signal that answers it.
func (r *run) start(ctx workflow.Context, i int) workflow.Future {
	p := &r.plan[i]
	ti := r.snap.Tools[p.Tool]
	r.started[i] = workflow.Now(ctx)
	r.state[i] = "running"
	started := r.event(ctx, round.EventCallStarted, "/"+p.CallID+"/started", i, "", "")
	if ti.Interactive || ti.Client {
		return r.startExternal(ctx, i, ti)
	}
	in := round.ExecuteInput{
		CallID: p.CallID, Tool: p.Tool, Args: p.Args, SessionID: r.in.SessionID, RunID: r.in.RunID,
		Round: r.in.Round, WorkflowID: r.wfID,
	}
	rp := &temporal.RetryPolicy{
		InitialInterval:    ti.Retry.InitialInterval,
		BackoffCoefficient: ti.Retry.BackoffCoefficient,
		MaximumInterval:    ti.Retry.MaxInterval,
		MaximumAttempts:    int32(max(1, ti.Retry.MaxAttempts)),
	}
	if p.Facts.Effect == tools.AtMostOnce {
		rp.MaximumAttempts = 1 // P2.4: a lost attempt is reported, never re-run
	}
	summary := p.Tool + " " + p.CallID
	if ti.Local && p.Facts.Effect == tools.ReadOnly {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: ti.Timeout, RetryPolicy: rp, Summary: summary,
		})
		return workflow.ExecuteLocalActivity(lctx, round.ActivityExecuteTool, in)
	}
	r.selfPublished[started.ID] = true // with the worker's own clock, when it really starts
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          p.CallID,
		StartToCloseTimeout: ti.Timeout,
		HeartbeatTimeout:    r.snap.HeartbeatTimeout,
		RetryPolicy:         rp,
		Summary:             summary,
	})
	return workflow.ExecuteActivity(actx, round.ActivityExecuteTool, in)
}

// startExternal waits for an ask_user answer or a client tool's result.
func (r *run) startExternal(ctx workflow.Context, i int, ti ToolInfo) workflow.Future {
	p := &r.plan[i]
	now := workflow.Now(ctx)
	pend := &round.Pending{CallID: p.CallID, Tool: p.Tool, Kind: round.KindToolResult, Arguments: p.Args, Since: now, Deadline: now.Add(r.snap.ConfirmTimeout)}
	if ti.Interactive {
		pend.Kind = round.KindAnswer
		pend.Questions = Questions(p.Args)
	}
	r.pending = append(r.pending, pend)
	f, settable := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return r.answered[p.CallID] != nil })
		switch {
		case ok:
			settable.Set(*r.answered[p.CallID], nil)
		case err != nil:
			settable.Set(nil, temporal.NewCanceledError())
		default:
			if j := r.findPending(p.CallID, pend.Kind); j >= 0 {
				r.dropPending(j)
			}
			settable.Set(round.ExecuteOutput{IsError: true, Content: "no " + strings.ReplaceAll(pend.Kind, "_", " ") + " arrived within " + r.snap.ConfirmTimeout.String()}, nil)
		}
	})
	return f
}

// finish turns a call's future into its outcome (P2.4, P2.5).
func (r *run) finish(ctx workflow.Context, i int, f workflow.Future) {
	p := &r.plan[i]
	o := &Outcome{DurationMS: workflow.Now(ctx).Sub(r.started[i]).Milliseconds()}
	var out round.ExecuteOutput
	err := f.Get(ctx, &out)
	var timeout *temporal.TimeoutError
	switch {
	case err == nil:
		o.Status, o.Content, o.ContentRef = round.StatusOK, out.Content, out.ContentRef
		o.Fetched, o.Touched, o.Read, o.FromCache, o.Attempts = out.Fetched, out.Touched, out.Read, out.FromCache, max(1, out.Attempt)
		if out.IsError {
			o.Status = round.StatusError
		}
	case temporal.IsCanceledError(err):
		o.Status, o.Content = round.StatusCancelled, "the round was cancelled while the call ran; what it did before it stopped is unknown"
	case p.Facts.Effect == tools.AtMostOnce:
		why := "the attempt was lost before it reported"
		if errors.As(err, &timeout) {
			why = fmt.Sprintf("the attempt was lost (%s timeout: the worker died or the call hung)", strings.ToLower(strings.TrimPrefix(timeout.TimeoutType().String(), "TIMEOUT_TYPE_")))
		}
		o.Status = round.StatusUnknownOutcome
		o.Content = "the outcome is unknown: " + why + ". It was not run again, because it has side effects; check whether it took effect before calling it again."
	default:
		o.Status, o.Content = round.StatusError, rootMessage(err)
	}
	if out.Attempt == 0 && err != nil {
		o.Attempts = 1
	}
	r.outcomes[i] = o
	r.state[i] = "done"
}

// rootMessage is the innermost error's message, without Temporal's wrapping.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// slow reports whether a call of the round goes through the server or waits
// for someone: a regular activity, an ask_user answer, a client result.
func (r *run) slow() bool {
	for i := range r.plan {
		if r.plan[i].Stage != StageReady {
			continue
		}
		ti := r.snap.Tools[r.plan[i].Tool]
		if !ti.Local || r.plan[i].Facts.Effect != tools.ReadOnly || ti.Interactive || ti.Client {
			return true
		}
	}
	return false
}

// flush publishes the events recorded since the last flush.
func (r *run) flush(ctx workflow.Context) {
	if r.published == len(r.events) {
		return
	}
	events := r.events[r.published:]
	r.published = len(r.events)
	r.publish(ctx, round.PublishInput{Events: events})
}

// publish hands events (and the result-cache writes of pass 3) to the
// PublishRound local activity. It never fails the round (K5).
func (r *run) publish(ctx workflow.Context, in round.PublishInput) {
	ctx, _ = workflow.NewDisconnectedContext(ctx) // a cancelled round still publishes
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 5 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2, InitialInterval: 100 * time.Millisecond},
		Summary:             "publish events",
	})
	in.SessionID, in.RunID, in.Round, in.WorkflowID = r.in.SessionID, r.in.RunID, r.in.Round, r.wfID
	events := in.Events[:0:0]
	for _, e := range in.Events {
		if !r.selfPublished[e.ID] {
			events = append(events, e)
		}
	}
	in.Events = events
	if err := workflow.ExecuteLocalActivity(lctx, round.ActivityPublishRound, in).Get(lctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("publishing the round's events failed; the round goes on", "error", err)
	}
}

func (r *run) pendingList() []round.Pending {
	out := make([]round.Pending, 0, len(r.pending))
	for i := range r.plan {
		for _, p := range r.pending {
			if p.CallID == r.plan[i].CallID {
				out = append(out, *p)
			}
		}
	}
	return out
}

func (r *run) progress() round.Progress {
	pr := round.Progress{Phase: r.phase, InFlight: r.inFlight, Peak: r.peak, Bound: r.snap.MaxConcurrent, Calls: make([]round.CallProgress, len(r.plan))}
	for i := range r.plan {
		cp := round.CallProgress{CallID: r.plan[i].CallID, Tool: r.plan[i].Tool, State: r.state[i]}
		if o := r.outcomes[i]; o != nil {
			cp.Status = o.Status
		} else if r.plan[i].Stage == StageDone {
			cp.State, cp.Status = "done", r.plan[i].Status
		}
		pr.Calls[i] = cp
	}
	return pr
}

// Questions reads the questions of an ask_user call.
func Questions(args string) []string {
	var a struct {
		Questions []string `json:"questions"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	return a.Questions
}

// FormatAnswers pairs each question with its answer.
func FormatAnswers(questions, answers []string) string {
	if len(questions) == 0 {
		return strings.Join(answers, "\n")
	}
	var b strings.Builder
	for i, q := range questions {
		a := "(no answer)"
		if i < len(answers) && strings.TrimSpace(answers[i]) != "" {
			a = answers[i]
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Q: " + q + "\nA: " + a)
	}
	for _, extra := range answers[min(len(answers), len(questions)):] {
		b.WriteString("\n" + extra)
	}
	return b.String()
}
