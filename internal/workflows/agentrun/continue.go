package agentrun

import (
	"encoding/json"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// pastBounds reports whether the run's history passed its bounds (the
// input's, or HistoryEvents and HistoryBytes), or would pass
// them in the next pass of its loop and the continue-as-new after it (L2):
// a pass adds at most what the largest one of this execution did and half
// more (each model call carries the whole conversation), and the
// continue-as-new event carries the conversation and the run state.
// Without that forecast a run whose conversation had grown large took a
// pass past the bound, and its history past Temporal's 10 MiB warning.
// The forecast needs a pass of this execution to read, so every execution
// makes progress; it is asked for (changeAgentBounds) only where it alone
// says stop.
func (a *agent) pastBounds(ctx workflow.Context) bool {
	events, size := a.in.HistoryEvents, a.in.HistoryBytes
	if events <= 0 {
		events = HistoryEvents
	}
	if size <= 0 {
		size = HistoryBytes
	}
	info := workflow.GetInfo(ctx)
	n, s := info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()
	if n >= events || s >= size {
		return true
	}
	seen := a.seen
	a.seen = boundsSeen{events: n, bytes: s, passEvents: max(seen.passEvents, n-seen.events), passBytes: max(seen.passBytes, s-seen.bytes)}
	if seen.bytes == 0 {
		a.seen.passEvents, a.seen.passBytes = 0, 0
		return false // the execution's first look
	}
	// The next pass, as large as the largest so far and half more, and
	// then the continue-as-new event, which carries the conversation and
	// the run state.
	p := a.seen
	soon := n+p.passEvents*3/2+1 >= events || s+p.passBytes*3/2+a.carrySize() >= size
	return soon && workflows.Version(ctx, workflows.ChangeAgentBounds, 1) >= 1
}

// boundsSeen is the history's length and size at the run's last look
// (pastBounds), and the most a pass of this execution added.
type boundsSeen struct{ events, bytes, passEvents, passBytes int }

// carrySize is about the size of the input a continue-as-new now would
// give the next execution: the run's input, its conversation and state.
func (a *agent) carrySize() int {
	b, err := json.Marshal(round.AgentCarry{Conversation: a.conv, State: a.state})
	if err != nil {
		return 0
	}
	return len(b) + len(a.in.Task)
}

// continueAsNew is the ContinueAsNewError of the run's next execution,
// which carries the conversation, the run state and the counters.
func (a *agent) continueAsNew(ctx workflow.Context) error {
	if a.refresh {
		a.refreshRefs(ctx)
	}
	next := a.in
	next.Carry = &round.AgentCarry{Conversation: a.conv, State: a.state, Round: a.round, ModelCalls: a.calls, Executions: a.execs + 1, LastRequest: a.last,
		Replies: a.chat.replies}
	return workflow.NewContinueAsNewError(ctx, names.AgentWorkflowName, next)
}

// refreshRefs gives every blob reference the next execution carries (the
// results the budget replaced, the contents and arguments fit stored, the
// run state's) the store's whole TTL again, so that a live run's
// references outlive it (B3). A store that fails costs only a warning:
// the run goes on, and the next continue-as-new asks again.
func (a *agent) refreshRefs(ctx workflow.Context) {
	refs := carriedRefs(a.conv, a.state)
	if len(refs) == 0 {
		return
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "refresh stored contents",
	})
	var out wire.RefreshContentsOutput
	if err := workflow.ExecuteLocalActivity(lctx, wire.ActivityRefreshContents, wire.RefreshContentsInput{Refs: refs}).Get(lctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("refreshing the run's stored contents failed", "refs", len(refs), "error", err)
	}
}

// carriedRefs are the blob references of a conversation and a run state,
// each once, sorted.
func carriedRefs(conv []round.AgentMessage, st *round.RunState) []string {
	var refs []string
	for _, m := range conv {
		refs = append(refs, m.ContentRef)
		refs = append(refs, m.ArgRefs...)
	}
	if st != nil {
		refs = append(refs, st.ResultRefs...)
		for _, k := range workflows.SortedDedupeKeys(st.Dedupe) {
			refs = append(refs, st.Dedupe[k].ContentRef)
		}
	}
	refs = slices.DeleteFunc(refs, func(r string) bool { return r == "" })
	slices.Sort(refs)
	return slices.Compact(refs)
}
