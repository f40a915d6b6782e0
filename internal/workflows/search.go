package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/round/names"
)

// The search attributes that the inbox reads (T7): the round's session,
// whether it waits for a person and for how many calls. A person is what a
// confirmation or an ask_user question waits for; a client tool's result is
// the client's business and does not count.
var (
	SearchSession      = temporal.NewSearchAttributeKeyKeyword(names.SearchSession)
	SearchWaiting      = temporal.NewSearchAttributeKeyBool(names.SearchWaiting)
	SearchWaitingCalls = temporal.NewSearchAttributeKeyInt64(names.SearchWaitingCalls)
)

// search is what the round last told visibility.
type search struct {
	on    bool // the round keeps the attributes (not an older recording)
	calls int  // the waiting count last upserted
	// memo: the round keeps names.MemoWaitingSince (changeSince); since is
	// the oldest wait last told, zero while no one waits.
	memo  bool
	since time.Time
	ended bool
}

// keepSearch sets the session at the start and, from then on, keeps
// ToolroundWaiting and ToolroundWaitingCalls current: a coroutine of its own
// wakes whenever the number of calls waiting for a person changes, wherever
// the change comes from (the gate, a signal, an update, an ask_user call, a
// deadline), so the steps need not call it.
func (r *run) keepSearch(ctx workflow.Context) {
	r.search.on = Version(ctx, changeSearch, 1) >= 1
	if !r.search.on {
		return
	}
	r.upsertSearch(ctx, SearchSession.ValueSet(r.in.SessionID), SearchWaiting.ValueSet(false), SearchWaitingCalls.ValueSet(0))
	r.search.memo = Version(ctx, changeSince, 1) >= 1
	// Disconnected: a cancelled round still clears its waiting calls.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.Go(dctx, func(ctx workflow.Context) {
		for {
			_ = workflow.Await(ctx, func() bool {
				return r.search.ended || r.waitingForPerson() != r.search.calls ||
					(r.search.memo && !r.oldestWait().Equal(r.search.since))
			})
			if r.search.ended {
				return
			}
			if r.search.memo {
				// The memo first: the same workflow task's upserts reach
				// visibility together, so a listing never sees a round
				// waiting with an older wait's time.
				if since := r.oldestWait(); !since.Equal(r.search.since) {
					r.search.since = since
					if !since.IsZero() {
						r.upsertSince(ctx, since)
					}
				}
				if r.waitingForPerson() == r.search.calls {
					continue
				}
			}
			n := r.waitingForPerson()
			r.search.calls = n
			r.upsertSearch(ctx, SearchWaiting.ValueSet(n > 0), SearchWaitingCalls.ValueSet(int64(n)))
		}
	})
}

// oldestWait is the earliest `since` of the calls that wait for a person,
// zero when none does.
func (r *run) oldestWait() time.Time {
	var oldest time.Time
	for i := range r.calls {
		c := &r.calls[i]
		if !c.waitsForPerson() {
			continue
		}
		if oldest.IsZero() || c.pending.Since.Before(oldest) {
			oldest = c.pending.Since
		}
	}
	return oldest
}

// upsertSince tells visibility when the round's oldest waiting call began
// to wait (names.MemoWaitingSince). When no call waits the memo is left as
// it is: ToolroundWaiting, false then, is what a reader checks first.
func (r *run) upsertSince(ctx workflow.Context, since time.Time) {
	if err := workflow.UpsertMemo(ctx, map[string]any{names.MemoWaitingSince: since.UTC()}); err != nil {
		workflow.GetLogger(ctx).Warn("waiting-since memo not updated", "error", err)
	}
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
		if c := &r.calls[i]; c.waitsForPerson() {
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

// keepBuild writes the build that started the round into its memo
// (names.MemoBuildID, changeBuildMemo), so that a listing tells which build
// runs which round while builds roll out (V1). A snapshot without a build id
// (a worker that has none, or one recorded before) writes nothing.
func (r *run) keepBuild(ctx workflow.Context) {
	if r.snap.BuildID == "" || Version(ctx, changeBuildMemo, 1) < 1 {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{names.MemoBuildID: r.snap.BuildID}); err != nil {
		workflow.GetLogger(ctx).Warn("memo of the build not kept", "error", err)
	}
}
