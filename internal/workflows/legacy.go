package workflows

// This file holds what the round does only to replay executions recorded
// before a change, in two parts, each with when it can be deleted.
//
// The first part is for executions recorded before changeApprovals
// (versions.go): their P1.6, confirm gate and
// decisions, with unsigned rules, one deadline for the round and no
// approval ids, decision records, extend or confirm update. No round
// started on newer code reaches it: each records changeApprovals, or a
// baseline (changeBaseline1, changeBaseline2, changeBaseline3) that takes it at version 1.
//
// It can be deleted once no execution that recorded none of these three
// markers can still run or be replayed: no worker from before
// changeApprovals runs, and the namespace's retention period has passed
// since the last round such a worker started was closed (within retention
// a closed execution can still be queried or reset, which replays it). The
// recorded rounds in testdata/ without those markers go with it:
// allow_turn, cancel_confirm, cancel_running, confirm_timeout, dedupe_off,
// fanout, inbox, pass1, repeats, result_budget, retries, signals and
// unknown_outcome. Then pickApprovals still asks for changeApprovals (the
// histories recorded between it and the baselines hold its marker) but
// always takes liveApprovals, and Preflight leaves P1.6 to asks.
//
// The other changes of versions.go keep nothing here: a round recorded
// before one of them does what the newer code does without it, at the one
// if that asks for it.

import (
	"encoding/json"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// legacyApprovals are the approvals of rounds recorded before
// changeApprovals: pass 1 alone decided who asks, decisions came by signal
// only, and pass 3 found nothing to sign or record.
type legacyApprovals struct{ r *run }

func (legacyApprovals) ask(workflow.Context) {}

func (legacyApprovals) setUpdateHandlers(workflow.Context) error { return nil }

func (legacyApprovals) extends() bool { return false }

func (a legacyApprovals) onConfirm(ctx workflow.Context, s round.Confirm) {
	a.r.legacyOnConfirm(ctx, s)
}

func (a legacyApprovals) gate(ctx workflow.Context) { a.r.legacyGate(ctx) }

func (legacyApprovals) settle(workflow.Context) {}

// legacyGate is the confirm gate (P1.6) of rounds recorded before
// changeApprovals: it raises every confirmation of the round at once and
// waits for the decisions, which may come in any order (legacyOnConfirm), up
// to the confirm timeout, after which the calls still waiting count as
// denied.
func (r *run) legacyGate(ctx workflow.Context) {
	now := workflow.Now(ctx)
	deadline := now.Add(r.snap.ConfirmTimeout)
	raised := 0
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallWaiting {
			continue
		}
		c.pending = &round.Pending{
			CallID: c.CallID, Tool: c.Tool, Kind: round.KindConfirm, Arguments: c.Args, Subject: c.Facts.Subject,
			Reason: c.ConfirmWhy, Since: now, Deadline: deadline,
		}
		r.record(r.scope.ConfirmationRequested(workflow.Now(ctx), c.CallID, c.Tool, c.Facts.Subject+" ("+c.ConfirmWhy+")"))
		r.metricApprovalRequested(ctx, c)
		raised++
	}
	if raised == 0 {
		return
	}
	r.phase = round.PhaseConfirm
	r.flush(ctx)
	defer r.flush(ctx) // the answers
	ok, err := workflow.AwaitWithTimeout(ctx, r.snap.ConfirmTimeout, func() bool { return r.waiting(round.KindConfirm) == 0 })
	if err == nil && ok {
		return
	}
	cancelled := err != nil
	for i := len(r.calls) - 1; i >= 0; i-- {
		c := &r.calls[i]
		if !c.waitsFor(round.KindConfirm) {
			continue
		}
		r.metricApprovalDecided(ctx, c, gateEnd(cancelled))
		c.pending = nil
		if cancelled {
			c.done(round.StatusCancelled, "the round was cancelled while the call waited for confirmation; it did not run")
		} else {
			Decide(c, false, "no answer within "+r.snap.ConfirmTimeout.String())
		}
	}
}

// legacyOnConfirm applies a decision. An approval that remembers a rule or
// allows the rest of the round may settle other calls that wait.
func (r *run) legacyOnConfirm(ctx workflow.Context, s round.Confirm) {
	i, known := r.index[s.CallID]
	if !known || !r.calls[i].waitsFor(round.KindConfirm) {
		why := "no call with this id in the round"
		if known {
			why = "the call is not waiting for confirmation"
		}
		r.ignore(ctx, names.SignalConfirm, s.CallID, why)
		return
	}
	c := &r.calls[i]
	detail := "denied"
	if s.Approve {
		detail = "approved"
		if s.Remember {
			pattern := s.Pattern
			if pattern == "" {
				pattern = c.Facts.Subject
			}
			r.st.AddRule(round.AllowRule{Tool: c.Tool, Pattern: pattern})
			detail += ", remembered " + c.Tool + " " + pattern
		}
		if s.AllowTurn {
			r.allowTurn = true
			detail += ", allowed for the rest of the round"
		}
	} else if s.Reason != "" {
		detail += ": " + s.Reason
	}
	r.legacyDecide(ctx, c, s.Approve, s.Reason, detail)
	if !s.Approve {
		return
	}
	for k := len(r.calls) - 1; k >= 0; k-- {
		q := &r.calls[k]
		if !q.waitsFor(round.KindConfirm) {
			continue
		}
		if r.allowTurn || (!q.Facts.Sensitive && legacyAllowed(r.st, q.Tool, q.Facts.Subject)) {
			r.legacyDecide(ctx, q, true, "", "approved by "+s.CallID)
		}
	}
}

// legacyDecide settles a call that waits at legacyGate and records the
// decision.
func (r *run) legacyDecide(ctx workflow.Context, c *Call, approve bool, reason, detail string) {
	r.metricApprovalDecided(ctx, c, decision(approve))
	c.pending = nil
	Decide(c, approve, reason)
	r.record(r.scope.ConfirmationAnswered(workflow.Now(ctx), c.CallID, c.Tool, detail))
}

// legacyNeedsConfirm applies C4 as rounds recorded before changeApprovals
// did, and returns why a call must be confirmed, or "". Preflight asks it
// for every round; in the others asks decides again (approval.Needs).
func legacyNeedsConfirm(ti ToolInfo, f CallFacts, autoApprove bool, st *round.RunState, name string) string {
	switch {
	case f.Sensitive:
		return "it reads a file that may hold keys or credentials"
	case ti.ConfirmNever || ti.Client:
		return ""
	case f.Effect == tools.ReadOnly:
		return ""
	case autoApprove:
		return ""
	case legacyAllowed(st, name, f.Subject):
		return ""
	case f.Effect == tools.Idempotent:
		return "it changes something"
	default:
		return "it has side effects"
	}
}

// The second part is kept only to replay rounds recorded before the tool
// definitions carried their own facts (tools.Definition: Rules, Reason,
// ReadsPaths, TouchesPath), that is before Snapshot.ToolFacts. Those rounds
// recorded snapshots without the facts, and the round then knew them by the
// built-ins' names. Delete it, with the Snapshot.ToolFacts field, when no
// history recorded before 2026-12-02 needs to replay: nothing else reads
// these names, and no new tool belongs here.

// pastFact is what the round knew of a built-in by its name.
type pastFact struct {
	kind        approval.Kind
	reason      string
	readsPaths  bool
	touchesPath bool
	cached      bool
}

// pastFacts are the built-ins' facts as the round knew them by name. Never
// change them: they are the record of how old rounds ran.
var pastFacts = map[string]pastFact{
	"run_command":        {kind: approval.KindCommand, reason: "it runs a shell command"},
	"background_command": {kind: approval.KindCommand, reason: "it starts or stops a background command"},
	"edit_file":          {kind: approval.KindPath, reason: "it changes {path}", touchesPath: true},
	"remove_file":        {kind: approval.KindPath, reason: "it removes {path}", touchesPath: true},
	"restore_file":       {kind: approval.KindPath, reason: "it restores an earlier version of {path}", touchesPath: true},
	"read_files":         {kind: approval.KindPath, readsPaths: true},
	"file_history":       {kind: approval.KindPath},
	"http_request":       {kind: approval.KindRequest, cached: true},
	"fetch_page":         {kind: approval.KindURL},
	"download_file":      {kind: approval.KindDownload, reason: "it downloads to {path}", touchesPath: true},
}

// tool is the snapshot's ToolInfo of name, with the facts of pastFacts
// when the snapshot was recorded without them.
func (s *Snapshot) tool(name string) ToolInfo {
	ti := s.Tools[name]
	if !s.ToolFacts {
		f := pastFacts[name]
		ti.ReadsPaths, ti.TouchesPath, ti.Cached = f.readsPaths, f.touchesPath, f.cached
	}
	return ti
}

// approvalOf is what approval.Needs needs to know of a call: the
// snapshot's facts with the call's current arguments, with the facts of
// pastFacts when the snapshot was recorded without them. A call the
// snapshot knows nothing of asks.
func (s *Snapshot) approvalOf(c *Call) approval.Call {
	ac := approval.Call{Tool: c.Tool}
	if c.Facts.Approval != nil {
		ac = *c.Facts.Approval
	}
	if !s.ToolFacts {
		f := pastFacts[c.Tool]
		ac.Kind, ac.Reason, ac.ReadsPaths = f.kind, f.reason, f.readsPaths
	}
	ac.Args = Canonical(c.Args)
	return ac
}

// legacyAllowed reports whether a rule remembered in the run state approves
// the call (P1.6), unsigned, as rounds recorded before changeApprovals
// remembered them.
func legacyAllowed(st *round.RunState, tool, subject string) bool {
	for _, r := range st.Allow {
		if pastRuleMatches(r.Tool, r.Pattern, tool, subject) {
			return true
		}
	}
	return false
}

// pastRuleMatches reports whether an unsigned rule of those rounds covers a
// call of tool with that subject: the subject itself, or the pattern read
// as approval.ValidatePattern describes (shell commands parsed, paths and
// URLs normalised). A pattern is never a plain wildcard over the subject
// text, which let `git *` approve `git status; touch X`.
func pastRuleMatches(ruleTool, pattern, tool, subject string) bool {
	if ruleTool != tool {
		return false
	}
	if pattern == subject {
		return true
	}
	args, ok := pastSubjectArgs(tool, subject)
	return ok && approval.MatchAt(approval.TablesLegacy, []approval.Rule{{Tool: ruleTool, Pattern: pattern}}, pastFacts[tool].kind, tool, args)
}

// pastSubjectArgs rebuilds the arguments a subject stands for
// (tools.SubjectOf), as far as a pattern reads them.
func pastSubjectArgs(tool, subject string) (string, bool) {
	var m map[string]string
	switch tool {
	case "run_command", "background_command":
		m = map[string]string{"command": subject}
	case "edit_file", "remove_file", "restore_file", "file_history":
		m = map[string]string{"path": subject}
	case "fetch_page":
		m = map[string]string{"url": subject}
	case "http_request":
		method, u, ok := strings.Cut(subject, " ")
		if !ok {
			return "", false
		}
		m = map[string]string{"method": method, "url": u}
	case "download_file":
		return "", false // its subject is the path alone; only the exact subject matches
	default:
		// Tools without a Subject use their canonical arguments.
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(subject), &obj) != nil || obj == nil {
			return "{}", true
		}
		return subject, true
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// legacyFormat is how a round recorded before changeFormats read an input
// whose format is not openai: it knew no format, so it saw the input's
// chat-completions assistant message only (none, for such an input).
func legacyFormat(in *round.Input) {
	in.Format, in.Turn, in.Output = "", nil, nil
}

// The third part is kept to replay rounds whose snapshot was recorded
// before ToolInfo.Kind (2026-12-06), which named a tool's kind by the facts
// that chose it, and for builds from before it: new snapshots still carry
// those facts (pastKindFactsOf), so that such a build, handed a round when a
// ramp to a newer one is rolled back (V1), runs its calls as they started.
// Stop writing them once no worker of such a build can run; delete the
// rest, with the field pastKindFacts of ToolInfo, when no history recorded
// before that day needs to replay. No new kind belongs here.

// pastKindFacts are the facts by which a snapshot recorded before
// ToolInfo.Kind named a kind. Newer snapshots record none.
type pastKindFacts struct {
	// Subagent: the round ran the call as a child agent run.
	Subagent bool `json:"subagent,omitempty"`
	// Chatbot: the round sent the call to a chatbot.
	Chatbot bool `json:"chatbot,omitempty"`
}

// pastKind is the kind of a ToolInfo recorded before ToolInfo.Kind, read
// from its facts.
func (ti ToolInfo) pastKind() tools.Kind {
	switch {
	case ti.Interactive || ti.Client:
		return tools.KindWait
	case ti.Subagent:
		return tools.KindChildRun
	case ti.Chatbot:
		return tools.KindChatbot
	case ti.Remote != nil:
		return tools.KindToolWorker
	}
	return tools.KindActivity
}

// pastKindFactsOf are the facts by which a build from before ToolInfo.Kind
// reads kind k; a kind it did not know has none.
func pastKindFactsOf(k tools.Kind) pastKindFacts {
	return pastKindFacts{Subagent: k == tools.KindChildRun, Chatbot: k == tools.KindChatbot}
}
