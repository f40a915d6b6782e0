package round

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The MCP gateway's wire (Z2): the console relays an MCP client's
// tools/call to the workflow that owns the client's run, which runs it in
// a round and answers with the round and call that hold its result.
const (
	// GatewayProvider is the catalog the gateway offers (Z2).
	GatewayProvider = "claude-code"
	// maxGatewayArgs bounds one call's canonical arguments.
	maxGatewayArgs = 1 << 20
)

// GatewayInput starts a gateway workflow; Carry is set after
// continue-as-new.
type GatewayInput struct {
	SessionID string        `json:"session_id"`
	Run       string        `json:"run"`
	Carry     *GatewayCarry `json:"carry,omitempty"`
}

// GatewayCarry is what a gateway workflow hands its next execution.
type GatewayCarry struct {
	State *RunState `json:"state,omitempty"`
	// Next is the number of the next round to start.
	Next int `json:"next"`
}

// GatewayCall is one tools/call: the tool and its canonical arguments.
type GatewayCall struct {
	Tool string `json:"tool"`
	Args string `json:"args"`
}

// Validate is the update's validator: a call the workflow could not run
// is refused before it enters the history.
func (c GatewayCall) Validate() error {
	switch {
	case c.Tool == "" || len(c.Tool) > 128:
		return fmt.Errorf("tool name %q: give 1-128 characters", c.Tool)
	case len(c.Args) > maxGatewayArgs:
		return fmt.Errorf("the arguments are %d bytes; at most %d", len(c.Args), maxGatewayArgs)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.Args), &v); err != nil || v == nil {
		return fmt.Errorf("the arguments must be a JSON object")
	}
	return nil
}

// GatewayTicket names where a gateway call's result will be: the round's
// workflow id and the call's id in it. Attached is true when the call
// joined an identical call of the run that was still open (Z3).
type GatewayTicket struct {
	WorkflowID string `json:"workflow_id"`
	CallID     string `json:"call_id"`
	Round      int    `json:"round"`
	Attached   bool   `json:"attached,omitempty"`
}

// GatewayTool is one tool the gateway may list, with the facts its MCP
// annotations are made of (Z2).
type GatewayTool struct {
	Spec FunctionSpec `json:"spec"`
	// Source is the tool's origin: builtin, app, mcp, script, ext, user.
	Source string `json:"source"`
	// ReadOnly is true exactly when this system runs the tool's calls as
	// read-only, whatever their arguments (T5 for MCP tools).
	ReadOnly bool `json:"read_only"`
	// Workspace is true for tools that act only in the session's
	// workspace.
	Workspace bool `json:"workspace"`
	// Interactive tools wait for a person's answer; the gateway lists
	// none.
	Interactive bool `json:"interactive,omitempty"`
	// Agent tools start an agent run or talk to a chatbot (subagents,
	// send_to_chatbot): they need a model, so the gateway lists them only
	// when MCP_GATEWAY_TOOLS names them.
	Agent bool `json:"agent,omitempty"`
}

// MergeRound applies to s what a round changed: the round started from
// from and ended with to, while other rounds of the run may have changed s
// (Z2: gateway rounds overlap). Dedupe entries the round added or changed
// replace s's, entries it dropped are dropped unless another round wrote
// them since; fetched tools, rules, result refs and children are joined;
// usage counts grow by what the round counted. The usage's MAC is dropped:
// whoever starts the next round signs it.
func (s *RunState) MergeRound(from, to *RunState) {
	if to == nil {
		return
	}
	if from == nil {
		from = &RunState{}
	}
	if s.Dedupe == nil {
		s.Dedupe = map[string]DedupeEntry{}
	}
	// Merging maps does not depend on their order.
	//workflowcheck:ignore
	for k, v := range to.Dedupe {
		if old, ok := from.Dedupe[k]; ok && sameEntry(old, v) {
			continue // the round left it as it was
		}
		s.Dedupe[k] = v
	}
	//workflowcheck:ignore
	for k, old := range from.Dedupe {
		if _, kept := to.Dedupe[k]; kept {
			continue
		}
		if now, ok := s.Dedupe[k]; ok && sameEntry(now, old) {
			delete(s.Dedupe, k)
		}
	}
	for _, f := range to.Fetched {
		s.MarkFetched(f)
	}
	for _, r := range to.Allow {
		s.AddRule(r)
	}
	s.Seq = max(s.Seq, to.Seq)
	if to.Limits != nil {
		l := *to.Limits
		s.Limits = &l
	}
	s.ResultRefs = union(s.ResultRefs, to.ResultRefs)
	s.Children = union(s.Children, to.Children)
	s.Counted = union(s.Counted, to.Counted)
	s.Usage = mergeUsage(s.Usage, from.Usage, to.Usage)
}

func sameEntry(a, b DedupeEntry) bool {
	return a.Seq == b.Seq && a.CallID == b.CallID && a.Round == b.Round && a.Generation == b.Generation
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// mergeUsage is cur plus what the round counted (to less from).
func mergeUsage(cur, from, to *Usage) *Usage {
	if to == nil {
		return cur
	}
	out := cur.Clone()
	if out == nil {
		out = &Usage{}
	}
	base := from
	if base == nil {
		base = &Usage{}
	}
	out.Add(to.Past(base))
	if to.Started != nil && (out.Started == nil || to.Started.Before(*out.Started)) {
		t := *to.Started
		out.Started = &t
	}
	out.Grown = addDelta(out.Grown, base.Grown, to.Grown)
	out.Rules = addDelta(out.Rules, base.Rules, to.Rules)
	out.MAC, out.Round = "", 0
	return out
}

// addDelta adds to[k]-from[k] to cur[k] for every key of to; a key that
// is new in to adds its whole value (a rule the round remembered starts
// its count there).
func addDelta(cur, from, to map[string]int64) map[string]int64 {
	// Adding counts does not depend on their order.
	//workflowcheck:ignore
	for k, v := range to {
		if cur == nil {
			cur = map[string]int64{}
		}
		cur[k] += v - from[k] // a key new in to adds its whole value
	}
	return cur
}
