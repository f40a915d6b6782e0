package workflows

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// CommitInput is everything pass 3 reads.
type CommitInput struct {
	Input      *round.Input
	WorkflowID string
	// Calls are the round's records, in call order; those that ran have an
	// Outcome.
	Calls    []Call
	Snapshot *Snapshot
	State    *round.RunState
	// Events are those the round recorded before pass 3.
	Events []round.Event
	Now    time.Time
	// Generation is the workspace binding's of a placed round (W5), which
	// its workspace calls' dedupe entries carry; 0 otherwise.
	Generation int
}

// CommitOutput is pass 3's result.
type CommitOutput struct {
	Result      round.Result
	CacheWrites []wire.CacheWrite
}

// Commit is pass 3 (P3.1-P3.5): it lands one result per call in call order,
// the tool messages and the history, the run state for the next round and
// lists the events to publish and the result-cache writes. It is pure: it
// changes nothing it is given, the run state included.
func Commit(ci CommitInput) CommitOutput {
	in := ci.Input
	n := len(ci.Calls)
	results := make([]round.CallResult, n)
	// Calls that ran or were settled in pass 1 first; repeats of the same
	// round then copy the call they repeat.
	for i := range ci.Calls {
		c := &ci.Calls[i]
		r := round.CallResult{CallID: c.CallID, Tool: c.Tool, ViaRunTool: c.Via, Approval: c.Approval}
		if c.Test {
			r.Tool = tools.TestTool // what the model called (G4)
		}
		switch {
		case c.State == CallDup:
			continue
		case c.Outcome != nil:
			o := c.Outcome
			r.Status, r.Content, r.ContentRef, r.Attempts, r.DurationMS = o.Status, o.Content, o.ContentRef, o.Attempts, o.DurationMS
			r.OperationID, r.Reconciled, r.Images = o.OperationID, o.Reconciled, o.Images
			r.OperationID, r.Reconciled, r.ErrorCode = o.OperationID, o.Reconciled, o.ErrorCode
		case c.State == CallDone:
			r.Status, r.Content, r.ContentRef, r.Repeat = c.Status, c.Content, c.ContentRef, c.Repeat
		default:
			// Never expected: a planned call that neither ran nor settled.
			r.Status, r.Content = round.StatusCancelled, "the call did not run before the round ended"
		}
		if IsFailure(r.Status) {
			if ci.Snapshot.Features.HelpfulHints && !hintHelps(r.Status, ci.Snapshot.Tools[c.Tool]) {
				r.Content = FailureLine(c.Tool, r.Content)
			} else {
				r.Content = FailureContent(c.Tool, r.Content)
			}
		}
		results[i] = r
	}
	for i := range ci.Calls {
		c := &ci.Calls[i]
		if c.State != CallDup {
			continue
		}
		first := results[c.DupOf]
		r := round.CallResult{CallID: c.CallID, Tool: c.Tool, ViaRunTool: c.Via, Status: first.Status, Content: first.Content, ContentRef: first.ContentRef, Approval: first.Approval,
			Images: first.Images, ErrorCode: first.ErrorCode} // only results under changeImages and changeErrorCode have these
		if first.Status == round.StatusOK {
			r.Status = round.StatusDeduped
			if ci.Snapshot.Features.HonestRepeats {
				r.Repeat = &round.Repeat{Round: in.Round, CallID: first.CallID, SameRound: true}
			}
		}
		results[i] = r
	}

	st := ci.State.Clone()
	updateState(st, ci, results)
	if ci.Snapshot.Features.RunLimits {
		countUsage(st, ci.Calls) // B1 (limits.go)
	}

	messages := round.Messages(results)
	history := round.History(in.ChatAssistant(), messages) // the session's history, the same in every format

	scope := round.ScopeOf(in, ci.WorkflowID)
	events := append([]round.Event(nil), ci.Events...)
	var cache []wire.CacheWrite
	for i, r := range results {
		events = append(events, scope.ToolResult(ci.Now, r))
		c := &ci.Calls[i]
		if r.Status == round.StatusOK && !c.Test && ci.Snapshot.tool(r.Tool).Cached && c.Facts.Effect == tools.ReadOnly && c.Outcome != nil && !c.Outcome.FromCache {
			cache = append(cache, wire.CacheWrite{Tool: r.Tool, Args: c.Args, Content: r.Content, ContentRef: r.ContentRef})
		}
	}
	events = append(events, scope.RoundFinished(ci.Now, summary(results)))

	return CommitOutput{
		Result: round.Result{
			WorkflowID: ci.WorkflowID, Results: results, Messages: messages, History: history, Events: events, State: st,
		},
		CacheWrites: cache,
	}
}

// updateState applies P3.3 and S4 to the run state: marks the schemas that
// find_tools returned, drops dedupe entries that this round's changes made
// stale, and records this round's successful results.
func updateState(st *round.RunState, ci CommitInput, results []round.CallResult) {
	type change struct {
		callID string
		paths  []string
	}
	var changes []change
	for i := range ci.Calls {
		c := &ci.Calls[i]
		o := c.Outcome
		if o == nil {
			continue
		}
		ti := ci.Snapshot.tool(c.Tool)
		if o.Status == round.StatusOK {
			for _, name := range o.Fetched {
				st.MarkFetched(name)
			}
		}
		// A call with side effects may have changed the workdir even when it
		// failed or its outcome is unknown; treat it as a change.
		ran := o.Status == round.StatusOK || o.Status == round.StatusError || o.Status == round.StatusUnknownOutcome || o.Status == round.StatusCancelled
		switch {
		case o.Child == "":
		case !slices.Contains(st.Children, o.Child):
			st.Children = append(st.Children, o.Child) // started (G2)
		case !slices.Contains(st.Counted, o.Child):
			st.Counted = append(st.Counted, o.Child) // ended, its counts added (G2, B1)
		}
		if ran && ti.kind().RunsAgent() {
			// A subagent may have changed anything (G1, P3.3).
			changes = append(changes, change{c.CallID, []string{"."}})
		} else if ran && c.Facts.Effect != tools.ReadOnly {
			if touched := touchedPaths(c, o, ti); len(touched) > 0 {
				changes = append(changes, change{c.CallID, touched})
			}
		}
	}
	for i := range ci.Calls {
		c := &ci.Calls[i]
		o := c.Outcome
		if o == nil || results[i].Status != round.StatusOK {
			continue
		}
		ti := ci.Snapshot.tool(c.Tool)
		if ti.NoDedupe || ti.Client || ti.Interactive || c.Test {
			continue
		}
		st.Seq++
		st.Dedupe[c.Key] = round.DedupeEntry{
			Tool: c.Tool, Content: results[i].Content, ContentRef: results[i].ContentRef,
			Round: ci.Input.Round, CallID: c.CallID, Seq: st.Seq,
			Read: readPaths(c, o, ti), Touched: touchedPaths(c, o, ti), Volatile: ti.Volatile, Files: o.Files,
		}
		if ti.Workspace && ci.Generation > 0 {
			e := st.Dedupe[c.Key]
			e.Generation = ci.Generation
			st.Dedupe[c.Key] = e
		}
	}
	// Changes are applied after this round's entries are in: a read that ran
	// beside a change in the same round may have seen either state.
	for _, c := range changes {
		for _, key := range SortedDedupeKeys(st.Dedupe) {
			e := st.Dedupe[key]
			if e.CallID == c.callID && e.Round == ci.Input.Round {
				continue
			}
			if e.Volatile || overlaps(e.Read, c.paths) || overlaps(e.Touched, c.paths) {
				delete(st.Dedupe, key)
			}
		}
	}
	evict(st)
}

// touchedPaths are the workdir paths a call changed: what the handler
// reported, else the "path" argument of a tool that changes it
// (ToolInfo.TouchesPath); a volatile tool with side effects (a shell
// command) may have changed anything.
func touchedPaths(c *Call, o *Outcome, ti ToolInfo) []string {
	if o != nil && len(o.Touched) > 0 {
		return cleanPaths(o.Touched)
	}
	if ti.Volatile && c.Facts.Effect != tools.ReadOnly {
		return []string{"."}
	}
	if ti.TouchesPath {
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(c.Args), &a) == nil && a.Path != "" {
			return cleanPaths([]string{a.Path})
		}
	}
	return nil
}

// readPaths are the paths a call read: what the handler reported, else the
// "paths" argument of a tool that reads them (ToolInfo.ReadsPaths).
func readPaths(c *Call, o *Outcome, ti ToolInfo) []string {
	if o != nil && len(o.Read) > 0 {
		return cleanPaths(o.Read)
	}
	if !ti.ReadsPaths {
		return nil
	}
	var a struct {
		Paths []string `json:"paths"`
	}
	if json.Unmarshal([]byte(c.Args), &a) != nil {
		return nil
	}
	return cleanPaths(a.Paths)
}

func cleanPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		c := path.Clean(strings.ReplaceAll(p, "\\", "/"))
		c = strings.TrimPrefix(c, "./")
		out = append(out, c)
	}
	return out
}

// overlaps reports whether a path of a is b's or holds it, or the other way round.
func overlaps(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if tools.Covers(x, y) || tools.Covers(y, x) {
				return true
			}
		}
	}
	return false
}

func SortedDedupeKeys(m map[string]round.DedupeEntry) []string {
	keys := make([]string, 0, len(m))
	// The keys are sorted before use.
	//workflowcheck:ignore
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// evict drops the oldest entries beyond MaxDedupeEntries; their size is
// bounded by fit (StateBudget).
func evict(st *round.RunState) {
	if len(st.Dedupe) <= wire.MaxDedupeEntries {
		return
	}
	keys := SortedDedupeKeys(st.Dedupe)
	sort.SliceStable(keys, func(i, j int) bool { return st.Dedupe[keys[i]].Seq < st.Dedupe[keys[j]].Seq })
	for _, k := range keys[:len(keys)-wire.MaxDedupeEntries] {
		delete(st.Dedupe, k)
	}
}

// IsFailure reports the statuses whose content reads "tool=<name> failed:"
// and ends with a next: hint (P3.2).
func IsFailure(s round.Status) bool {
	switch s {
	case round.StatusError, round.StatusInvalid, round.StatusUnknown, round.StatusUnknownOutcome:
		return true
	}
	return false
}

var credentialError = regexp.MustCompile(`(?i)` +
	`\b(401|403)\b|unauthori[sz]ed|forbidden|unauthenticated|not authenticated|authentication (failed|required|error)` +
	`|\b(api[ _-]?key|access[ _-]?key|token|credentials?|password|secret)s?\b.{0,40}?\b(missing|required|invalid|expired|revoked|refused|rejected|not (set|found|configured|provided|stored))\b` +
	`|\b(missing|invalid|expired|revoked|no|bad|wrong|incorrect)[ _-](api[ _-]?key|access[ _-]?key|token|credentials?|password|secret)`)

// FailureContent formats a failure (P3.2): "tool=<name> failed: <error>" and a
// next: hint, pointing to store_secret when a credential is missing or was
// refused, else to write_error(outcome=resolved).
func FailureContent(tool, msg string) string {
	if strings.HasPrefix(msg, "tool="+tool+" failed: ") {
		return msg
	}
	return FailureLine(tool, msg) + "\n" + NextHint(tool, trimTool(tool, msg))
}

// FailureLine is a failure without its next: hint, for the failures a hint
// does not help (hintHelps).
func FailureLine(tool, msg string) string {
	if strings.HasPrefix(msg, "tool="+tool+" failed: ") {
		return msg
	}
	return "tool=" + tool + " failed: " + trimTool(tool, msg)
}

// trimTool drops a leading "<tool>: ": the built-in tools leave their name to
// the failure line; errors recorded by workers from before that still start
// with it, and the recorded histories must replay to the same results.
func trimTool(tool, msg string) string { return strings.TrimPrefix(msg, tool+": ") }

// hintHelps reports whether a failure's next: hint helps the model: not for
// invalid arguments, which it fixes by calling again with valid ones, nor
// for a tool of an MCP server, whose failures neither store_secret (its
// server holds its credentials) nor another way around fixes.
func hintHelps(status round.Status, ti ToolInfo) bool {
	return status != round.StatusInvalid && !ti.MCP
}

// NextHint is the next: line of a failed result (P3.2).
func NextHint(tool, msg string) string {
	if credentialError.MatchString(msg) {
		return "next: a credential is missing or was refused: store it with store_secret(name, value), then call " + tool + " again."
	}
	return "next: succeed another way, then record what worked with write_error(tool=\"" + tool + "\", error=<the error>, outcome=\"resolved\", resolution=<what worked>)."
}

func summary(results []round.CallResult) string {
	var order []round.Status
	counts := map[round.Status]int{}
	for _, r := range results {
		if counts[r.Status] == 0 {
			order = append(order, r.Status)
		}
		counts[r.Status]++
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	parts := make([]string, 0, len(order))
	for _, s := range order {
		parts = append(parts, string(s)+"="+strconv.Itoa(counts[s]))
	}
	return strings.Join(parts, " ")
}
