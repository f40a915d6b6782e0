package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Unwrapped is a call after P1.1: the tool it names and its arguments text.
type Unwrapped struct {
	Name string `json:"name"`
	Args string `json:"args"`
	// Via is set when the call came through run_tool.
	Via bool `json:"via,omitempty"`
	// Err explains a malformed run_tool or test_tool call.
	Err string `json:"err,omitempty"`
	// Test is set when the call came through test_tool (G4): Name is the
	// script_* tool it runs, Args its input.
	Test bool `json:"test,omitempty"`
}

const runToolShape = `run_tool expects {"name": "<tool>", "args": {...}} where args is an object or a JSON string holding one`

// UnwrapAll applies P1.1 to every call of a round.
func UnwrapAll(calls []round.ToolCall) []Unwrapped {
	out := make([]Unwrapped, len(calls))
	for i, c := range calls {
		out[i] = Unwrap(c)
	}
	return out
}

// UnwrapTurn applies P1.1 to the calls of a round's turn, in any format; a
// call of a turn that was cut off is malformed, with why (F1), and never runs.
func UnwrapTurn(calls []round.TurnCall) []Unwrapped {
	out := make([]Unwrapped, len(calls))
	for i, c := range calls {
		out[i] = Unwrap(c.ToolCall)
		if c.CutOff != "" {
			out[i].Err = c.CutOff
		}
	}
	return out
}

// Unwrap applies P1.1 to one call: run_tool(name, args) becomes a call of name.
func Unwrap(c round.ToolCall) Unwrapped {
	name, args := c.Function.Name, string(c.Function.Arguments)
	if name != tools.RunTool {
		return Unwrapped{Name: name, Args: args}
	}
	bad := func(why string) Unwrapped {
		return Unwrapped{Name: tools.RunTool, Args: args, Via: true, Err: why + "; " + runToolShape}
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return bad("malformed run_tool call: its arguments are not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("malformed run_tool call: there is data after its JSON object")
	}
	var inner string
	if err := json.Unmarshal(m["name"], &inner); err != nil || strings.TrimSpace(inner) == "" {
		return bad("malformed run_tool call: \"name\" must be a non-empty string")
	}
	if inner == tools.RunTool {
		return bad("malformed run_tool call: run_tool cannot run itself")
	}
	raw := bytes.TrimSpace(m["args"])
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return Unwrapped{Name: inner, Args: "{}", Via: true}
	case raw[0] == '{':
		return Unwrapped{Name: inner, Args: string(raw), Via: true}
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return bad("malformed run_tool call: \"args\" is not a valid JSON string")
		}
		return Unwrapped{Name: inner, Args: s, Via: true}
	default:
		return bad("malformed run_tool call: \"args\" must be an object or a JSON string")
	}
}

const testToolShape = `test_tool expects {"name": "script_<name>", "input": {...}} where input is an object or a JSON string holding one`

// UnwrapTests applies G4 to the calls of a round that asked for it: a
// test_tool call becomes a call of the script_* tool it names, with its
// input, marked Test.
func UnwrapTests(ctx workflow.Context, calls []Unwrapped) {
	for i, u := range calls {
		if u.Name != tools.TestTool || u.Err != "" {
			continue
		}
		if Version(ctx, changeTestTool, 1) < 1 {
			return
		}
		calls[i] = UnwrapTest(u)
	}
}

// UnwrapTest reads one test_tool call (G4).
func UnwrapTest(u Unwrapped) Unwrapped {
	bad := func(why string) Unwrapped {
		u.Err = why + "; " + testToolShape
		return u
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(u.Args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return bad("malformed test_tool call: its arguments are not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("malformed test_tool call: there is data after its JSON object")
	}
	if len(m) > 2 || len(m) == 2 && m["input"] == nil {
		return bad("malformed test_tool call: it takes only \"name\" and \"input\"")
	}
	var name string
	if err := json.Unmarshal(m["name"], &name); err != nil || strings.TrimSpace(name) == "" {
		return bad("malformed test_tool call: \"name\" must be a non-empty string")
	}
	if !strings.HasPrefix(name, tools.ScriptPrefix) {
		return bad(fmt.Sprintf("test_tool runs script_* tools only, not %q", name))
	}
	raw := bytes.TrimSpace(m["input"])
	args := ""
	switch {
	case len(raw) == 0 || string(raw) == "null":
		args = "{}"
	case raw[0] == '{':
		args = string(raw)
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &args); err != nil {
			return bad("malformed test_tool call: \"input\" is not a valid JSON string")
		}
	default:
		return bad("malformed test_tool call: \"input\" must be an object or a JSON string")
	}
	return Unwrapped{Name: name, Args: args, Via: u.Via, Test: true}
}

// preflight is step 2 of a round: pass 1 over a copy of the run state the
// round was given, and one record per call.
func (r *run) preflight(ctx workflow.Context, calls []Unwrapped) {
	r.st = r.in.State.Clone()
	r.snap.Features = features(ctx)
	r.verifyUsage(ctx) // limits.go
	if r.badInput != nil {
		return
	}
	r.startLimits(workflow.Now(ctx)) // limits.go
	r.dropOtherGenerations()         // placement.go
	r.checkRepeats(ctx, calls)       // repeat.go
	r.calls = Preflight(r.in, calls, &r.snap, r.st)
	r.index = make(map[string]int, len(r.calls))
	for i := range r.calls {
		r.index[r.calls[i].CallID] = i
	}
}

// Preflight is pass 1: it applies P1.1-P1.6 to every call, serially in
// call order, and marks deferred schemas as fetched in st. It is pure apart
// from st. Calls that need a decision are left CallWaiting for the confirm
// gate; P1.7 runs after the decisions (Validate, validate.go). Its P1.6 is
// that of the rounds recorded before changeApprovals (legacyNeedsConfirm);
// in the others asks decides again.
func Preflight(in *round.Input, calls []Unwrapped, snap *Snapshot, st *round.RunState) []Call {
	plan := make([]Call, len(calls))
	firstOf := map[string]int{} // dedupe key -> first call of this round that will run
	turn := in.ToolCalls()      // nil for a turn Validate refuses, which never gets here
	for i, u := range calls {
		p := &plan[i]
		id := ""
		if i < len(turn) {
			id = turn[i].ID
		}
		*p = Call{CallID: id, Tool: u.Name, Via: u.Via, Test: u.Test, Args: u.Args, DupOf: -1, Facts: snap.Calls[i]}
		// called is the tool the model called: test_tool for a test of a
		// script (G4), whose loading and schema P1.2 and P1.4 are about.
		called := u.Name
		if u.Test {
			called = tools.TestTool
		}
		// P1.1
		if u.Err != "" {
			p.done(round.StatusInvalid, u.Err)
			continue
		}
		// P1.2, then P1.5: nothing without a handler runs.
		ti, ok := p.findTool(u, called, snap, st)
		if !ok {
			continue
		}
		if p.Facts.Effect == "" {
			p.Facts.Effect = ti.SideEffect
		}
		// P1.3; a round may turn it off (U3).
		p.Key = tools.DedupeKey(u.Name, []byte(u.Args))
		dedupe := !snap.Features.HonestRepeats || in.DedupeOn()
		dedupe = dedupe && !u.Test // a test runs each time (G4)
		if e, hit := st.Dedupe[p.Key]; dedupe && hit && !ti.NoDedupe {
			p.done(round.StatusDeduped, e.Content)
			p.ContentRef = e.ContentRef
			if snap.Features.HonestRepeats {
				p.Repeat = repeatOf(e)
			}
			continue
		}
		if j, hit := firstOf[p.Key]; dedupe && hit {
			p.State, p.DupOf = CallDup, j
			continue
		}
		// P1.4
		if !ti.Client && !snap.preloaded(called) && !st.HasFetched(called) {
			p.done(round.StatusSchema, tools.SchemaResult(snap.tool(called).Spec()))
			st.MarkFetched(called)
			continue
		}
		// P1.6: whether to ask; the asking happens in the workflow.
		if why := legacyNeedsConfirm(ti, p.Facts, in.AutoApprove, st, u.Name); why != "" {
			p.State, p.ConfirmWhy = CallWaiting, why
		} else {
			p.State = CallReady
		}
		if !u.Test {
			firstOf[p.Key] = i
		}
	}
	return plan
}

// findTool is P1.2 and P1.5 for one call of Preflight: it returns the tool
// that runs the call, or settles the call (refused, unknown) and reports
// false. called is the tool the model called (test_tool for a test, G4).
func (p *Call) findTool(u Unwrapped, called string, snap *Snapshot, st *round.RunState) (ToolInfo, bool) {
	// P1.2. A name that no tool has is answered by the existence check
	// even when called directly: the find_tools hint would send the
	// model after a tool that does not exist.
	_, missing := snap.Missing[u.Name]
	if u.Via && !snap.loaded(tools.RunTool) {
		p.done(round.StatusRefused, fmt.Sprintf("run_tool is not available to this provider: call %s directly", u.Name))
		return ToolInfo{}, false
	}
	if !u.Via && (!missing || u.Test) && !snap.loaded(called) {
		p.done(round.StatusRefused, refusedHint(called, snap.Features.HonestRepeats && st.HasFetched(called)))
		return ToolInfo{}, false
	}
	// P1.5 (see above): nothing without a handler runs.
	if msg, ok := snap.Missing[u.Name]; ok {
		p.done(round.StatusUnknown, msg)
		return ToolInfo{}, false
	}
	ti, ok := snap.Tools[u.Name]
	if !ok {
		p.done(round.StatusUnknown, fmt.Sprintf("unknown tool %q", u.Name))
	}
	return ti, ok
}

// Decide applies a human decision to a call waiting at the gate.
func Decide(p *Call, approve bool, reason string) {
	if approve {
		p.State = CallReady
		return
	}
	p.done(round.StatusSkipped, SkippedContent(reason))
}

// SkippedContent is the result of a denied call (P1.6).
func SkippedContent(reason string) string {
	if reason = strings.TrimSpace(reason); reason != "" {
		return "Skipped by user. Reason: " + reason
	}
	return "Skipped by user"
}

// asks applies P1.7 and then P1.6 to the calls pass 1 left to run or to
// ask about (liveApprovals): a call whose arguments fail its schema is
// invalid without asking anyone, and approval.Needs, over the rules that
// verified, decides who asks.
func (r *run) asks(now time.Time) {
	pol := approval.Policy{AutoApprove: r.in.AutoApprove, DenyAutoApprove: r.snap.DenyAutoApprove, Rules: r.rules, Tables: r.snap.Tables, Untested: r.snap.Untested}
	var proj projection
	for i := range r.calls {
		c := &r.calls[i]
		if c.State != CallReady && c.State != CallWaiting {
			continue
		}
		if v := tools.Validate(r.snap.Tools[c.Tool].Parameters, json.RawMessage(c.Args)); len(v) > 0 {
			c.done(round.StatusInvalid, "invalid arguments: "+strings.Join(v, "; "))
			continue
		}
		pol.Rules = r.schemaRules(r.usableRules(r.rules))
		if r.commandRulesOff(c) {
			pol.Rules = nil
		}
		v := approval.Needs(r.approvalCall(c), pol)
		if v.Ask && r.commandRulesOff(c) {
			v.Reasons = append(v.Reasons, ReasonNoSandbox)
		}
		// B1: a call past a run limit waits, whatever approved it.
		if r.snap.Features.RunLimits {
			names, why := r.pastLimits(&proj, c, now)
			if len(names) > 0 {
				if !v.Ask {
					v.Reasons = nil // what would have approved it answers nothing now
				}
				v.Ask, v.Always, v.Reasons = true, true, append(v.Reasons, why...)
				c.Limits = names
			}
		}
		c.Reasons, c.Always, c.ConfirmWhy = v.Reasons, v.Always, strings.Join(v.Reasons, "; ")
		if v.Ask {
			c.State = CallWaiting
			c.ApprovalID = r.approvalID(c)
			continue
		}
		c.State = CallReady
		c.Approval = &round.Approval{Decision: v.Decision, At: now, Rule: describeRules(v.Rules)}
		if v.Decision == approval.DecisionRule {
			c.ruleScope = ruleScope(v.Rules)
		}
		r.useRules(c.Approval, v.Rules)
	}
}

// Canonical is a call's arguments as rules and approval ids read them
// (tools.Canonical), or the trimmed text when they are not JSON.
func Canonical(args string) string {
	if c, ok := tools.Canonical([]byte(args)); ok {
		return c
	}
	return strings.TrimSpace(args)
}
