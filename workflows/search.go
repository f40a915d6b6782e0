package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round"
)

// The search attributes that the inbox reads (T7): the round's session,
// whether it waits for a person and for how many calls. A person is what a
// confirmation or an ask_user question waits for; a client tool's result is
// the client's business and does not count.
var (
	SearchSession      = temporal.NewSearchAttributeKeyKeyword(round.SearchSession)
	SearchWaiting      = temporal.NewSearchAttributeKeyBool(round.SearchWaiting)
	SearchWaitingCalls = temporal.NewSearchAttributeKeyInt64(round.SearchWaitingCalls)
)

// searchChange is the change id of the search attributes: rounds recorded
// before it replay without them.
const searchChange = "inbox-search-attributes"

// search is what the round last told visibility.
type search struct {
	on    bool // the round keeps the attributes (not an older recording)
	calls int  // the waiting count last upserted
	ended bool
}

// keepSearch sets the session at the start and, from then on, keeps
// ToolroundWaiting and ToolroundWaitingCalls current: a coroutine of its own
// wakes whenever the number of calls waiting for a person changes, wherever
// the change comes from (the gate, a signal, an update, an ask_user call, a
// deadline), so the steps need not call it.
func (r *run) keepSearch(ctx workflow.Context) {
	r.search.on = workflow.GetVersion(ctx, searchChange, workflow.DefaultVersion, 1) >= 1
	if !r.search.on {
		return
	}
	r.upsertSearch(ctx, SearchSession.ValueSet(r.in.SessionID), SearchWaiting.ValueSet(false), SearchWaitingCalls.ValueSet(0))
	// Disconnected: a cancelled round still clears its waiting calls.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.Go(dctx, func(ctx workflow.Context) {
		for {
			_ = workflow.Await(ctx, func() bool { return r.search.ended || r.waitingForPerson() != r.search.calls })
			if r.search.ended {
				return
			}
			n := r.waitingForPerson()
			r.search.calls = n
			r.upsertSearch(ctx, SearchWaiting.ValueSet(n > 0), SearchWaitingCalls.ValueSet(int64(n)))
		}
	})
}

// endSearch is the round's last word to visibility: it waits for no one.
func (r *run) endSearch(ctx workflow.Context) {
	if !r.search.on || r.search.ended {
		return
	}
	r.search.ended = true
	if r.search.calls != 0 {
		r.search.calls = 0
		r.upsertSearch(ctx, SearchWaiting.ValueSet(false), SearchWaitingCalls.ValueSet(0))
	}
}

// waitingForPerson counts the calls that wait for a decision or an answer.
func (r *run) waitingForPerson() int {
	n := 0
	for i := range r.calls {
		if c := &r.calls[i]; c.waitsFor(round.KindConfirm) || c.waitsFor(round.KindAnswer) {
			n++
		}
	}
	return n
}

// upsertSearch records the attributes. A namespace without them fails the
// workflow task until they are added, which is why the worker refuses to
// start without them (engine.CheckSearchAttributes); an error here is only
// an attribute that cannot be encoded, logged, and the round goes on.
func (r *run) upsertSearch(ctx workflow.Context, attrs ...temporal.SearchAttributeUpdate) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
	}
}
