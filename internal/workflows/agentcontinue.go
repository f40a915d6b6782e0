package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// pastBounds reports whether the run's history passed its bounds: the
// input's, or AgentHistoryEvents and AgentHistoryBytes.
func (a *agent) pastBounds(ctx workflow.Context) bool {
	events, size := a.in.HistoryEvents, a.in.HistoryBytes
	if events <= 0 {
		events = AgentHistoryEvents
	}
	if size <= 0 {
		size = AgentHistoryBytes
	}
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() >= events || info.GetCurrentHistorySize() >= size
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
	return workflow.NewContinueAsNewError(ctx, round.AgentWorkflowName, next)
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
		for _, k := range sortedDedupeKeys(st.Dedupe) {
			refs = append(refs, st.Dedupe[k].ContentRef)
		}
	}
	refs = slices.DeleteFunc(refs, func(r string) bool { return r == "" })
	slices.Sort(refs)
	return slices.Compact(refs)
}
