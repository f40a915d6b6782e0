// Package workflows runs one round of tool calls as a Temporal workflow.
// RoundWorkflow.Run (this file) lists the steps; each has a file of its
// own, in the order a round runs them:
//
//	snapshot.go   1. the catalog snapshot, recorded once in history
//	preflight.go  2. pass 1 (P1.1-P1.6), pure
//	repeat.go        checking repeats before pass 1 serves them (U3)
//	gate.go       3. the confirm gate: pending calls, decisions, deadline
//	validate.go   4. P1.7, pure
//	execute.go    5. pass 2: the bound, the serial lane, activity options
//	commit.go     6. pass 3 (P3.1-P3.5), pure
//	events.go     7. the round's events and their publication
//	budget.go     8. keeping the result within Temporal's payload limit
//
// call.go holds the one record each call has for the whole round,
// signals.go and queries.go what a client may send or ask while it runs,
// and rules.go how the run's allow rules are checked and signed (T4).
// versions.go lists the change ids behind which the round's behaviour
// changed, and legacy.go holds what it still does only to replay rounds
// recorded before them.
// What crosses the wire (payloads, names, events) is in package round.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/crashpoint"
	"github.com/toolround/toolround/internal/placement"
	"github.com/toolround/toolround/round"
)

// RoundWorkflow runs one round of tool calls.
type RoundWorkflow struct {
	Catalog Catalog
}

// run is one execution's working state. Signal and query handlers and the
// pass 2 fan-out share it; workflow code runs one coroutine at a time, so it
// needs no locks.
type run struct {
	in    *round.Input
	cat   Catalog
	scope round.Scope // what every event of the round shares
	// approvals is how the round asks people: those of T1-T5, or those
	// of the rounds recorded before them (pickApprovals).
	approvals approvals
	snap      Snapshot
	st        *round.RunState
	calls     []Call         // one record per call, in call order
	index     map[string]int // call id -> index in calls
	phase     round.Phase

	events    []round.Event
	published int // events[:published] are on the session's stream
	ignored   int // signals that changed nothing
	allowTurn bool
	inFlight  int
	peak      int
	search    search // what visibility knows of the round (search.go)

	// rules are the run state's allow rules whose MAC verified (T4);
	// remembered are those this round's decisions added, signed when the
	// round ends; allowTurnBy is the decision that allowed the round.
	rules       []approval.Rule
	remembered  []approval.Rule
	allowTurnBy *round.Approval
	// secretsAsk: a user tool's call that sends a secret always asks
	// (changeToolSecrets, sendsToolSecrets).
	secretsAsk bool
	// gateTick changes with every decision and extension, so the gate
	// looks at its calls again.
	gateTick  int
	reminders int // approval_reminder events so far
	// grown are the limits an approval grew in this round (B1).
	grown map[string]bool
	// subagents is how many subagents calls the round runs (G1).
	subagents int
	// counting are the background subagents whose counts this round adds
	// (G2), so that two looks in one round add them once.
	counting map[string]bool
	// signsUsage: the round checks and signs the run's usage
	// (changeSignedUsage); unverified: the usage it got did not verify.
	// boundUsage: it does so for its round (changeBoundUsage, T15);
	// badInput is the input error the check found.
	signsUsage, unverified, boundUsage bool
	badInput                           error
	// floorShares: subagents get floor shares (changeFloorShares, T15);
	// queued are the counts of the round's calls that run, which the
	// shares leave to the round.
	floorShares bool
	queued      round.Usage
	// notes are the round's notifications (N1, notify.go).
	notes notifier
	// bound is the session's workspace binding when the round is placed
	// (W4, placement.go), nil when it is not; bindErr says why binding
	// failed; aliveAt is when HostAlive last saw the host.
	bound   *placement.Binding
	bindErr string
	aliveAt time.Time
	// elicits are the MCP elicitations the round's calls made (E1,
	// elicit.go), by elicitKey.
	elicits map[string]*elicitState
}

// Run is the workflow function: the steps of a round, in order.
func (w *RoundWorkflow) Run(ctx workflow.Context, in round.Input) (round.Output, error) {
	// 0. An input that cannot run at all fails the round; the turn's calls
	// are read in its format (F1) and run_tool calls are unwrapped (P1.1).
	if in.Format.Name() != round.FormatOpenAI && Version(ctx, changeFormats, 1) == workflow.DefaultVersion {
		legacyFormat(&in)
	}
	if err := in.ValidateStarted(); err != nil {
		return round.Output{}, temporal.NewNonRetryableApplicationError("invalid round input: "+err.Error(), round.ErrTypeInvalidInput, err)
	}
	r := &run{in: &in, cat: w.Catalog, scope: round.ScopeOf(&in, workflow.GetInfo(ctx).WorkflowExecution.ID), phase: round.PhasePreflight}
	ctx = withBaseline(ctx)   // one marker for every change of a baseline (versions.go)
	r.keepSearch(ctx)         // the inbox's search attributes, kept current from here on
	turn, _ := in.TurnCalls() // Validate read them
	unwrapped := UnwrapTurn(turn)
	UnwrapTests(ctx, unwrapped) // G4

	// 1. The catalog snapshot.
	if err := w.snapshot(ctx, &in, unwrapped, &r.snap); err != nil {
		return round.Output{}, err
	}
	r.keepBuild(ctx)
	r.place(ctx, unwrapped) // placement.go: the workspace's host, before the first workspace call

	// The approvals of T1-T5, or for a round recorded before them those it
	// had (legacy.go): the one branch on the round's past in the steps.
	r.approvals = r.pickApprovals(ctx)
	r.startNotify(ctx)

	// 2. Pass 1; P1.7 before P1.6 and approval.Needs over the rules that
	// verified.
	crashpoint.Step(ctx, "round.pass1.before")
	r.preflight(ctx, unwrapped)
	if r.badInput != nil {
		return round.Output{}, r.badInput // T15: counts that are not the previous round's
	}
	r.approvals.ask(ctx)
	r.record(r.scope.RoundStarted(workflow.Now(ctx), len(r.calls)))
	// From here on clients may ask (queries.go) and signal (signals.go).
	if err := r.openToClients(ctx); err != nil {
		return round.Output{}, err
	}

	// 3. The confirm gate.
	crashpoint.Step(ctx, "round.pass1.after")
	r.approvals.gate(ctx)

	// 4. P1.7.
	Validate(r.calls, &r.snap)

	// 5. Pass 2.
	if r.slow() {
		r.flush(ctx) // watchers see the round start before its long calls end
	}
	crashpoint.Step(ctx, "round.pass2.before")
	r.execute(ctx)
	crashpoint.Step(ctx, "round.pass2.after")

	// 6. Pass 3. It and its publication run even when the round was
	// cancelled, so every call still gets its result.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	crashpoint.Step(dctx, "round.pass3.before")
	out := r.commit(dctx)

	// 7. Publication: events, result-cache writes, the session history.
	r.publishCommitted(dctx, &out)

	probeUpgrade(dctx) // probe_on.go: a change behind a version, in the upgrade test's build only

	// 8. The result, within its budget.
	res := r.output(dctx, out.Result)
	r.drainNotify(dctx)
	r.endSearch(dctx)
	r.metricRoundDone(ctx, &res)
	return res, nil
}

// commit is step 6 around pass 3: the remembered rules are signed and
// every call has a decision record (approvals.settle), Commit (commit.go,
// pure) lands one result per call, and the usage of the run state it
// returns is signed (limits.go).
func (r *run) commit(ctx workflow.Context) CommitOutput {
	r.phase = round.PhaseCommit
	r.approvals.settle(ctx)
	out := Commit(CommitInput{
		Input: r.in, WorkflowID: r.scope.WorkflowID, Calls: r.calls, Snapshot: &r.snap,
		State: r.st, Events: r.events, Now: workflow.Now(ctx), Generation: r.generation(),
	})
	r.signUsage(ctx, out.Result.State)
	return out
}
