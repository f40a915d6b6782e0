package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// ResultBudget bounds a round's encoded result. Temporal refuses a payload
// above 2 MiB (and a gRPC message above 4 MiB); a completion past that
// fails its workflow task again and again or gets the round terminated, so
// many results that are each small enough can stall a round for good. The
// margin under 2 MiB is for the payload's framing.
const ResultBudget = 1792 << 10

// StateBudget bounds the run state a round returns: the next round's input
// carries it, beside the assistant message, within the client's 1.5 MiB.
const StateBudget = 256 << 10

// fitPlan is what fit moves out of a round's result: the distinct contents,
// largest first, and the preview each leaves.
type fitPlan struct {
	contents []string
	preview  int
}

// NoteBytes estimates the note a stored content gets after its preview
// ("[N bytes in all; stored as REF]"), RefBytes the content_ref field each
// result or dedupe entry gets.
const (
	NoteBytes = 120
	RefBytes  = 110
)

// planFit picks the contents to move out of res so that it fits
// ResultBudget and its state StateBudget: first the largest dedupe entries
// until the state fits, then the largest contents of results and entries
// until the result fits. Previews shrink when 2 KiB ones are too many. It is
// pure; an empty plan means res fits.
func planFit(res *round.Output) fitPlan {
	return planFitSized(res, EncodedLen(res), EncodedLen(res.State))
}

// planFitSized is planFit for a result and state of known encoded sizes.
func planFitSized(res *round.Output, size, stateSize int) fitPlan {
	over := size - ResultBudget
	stateOver := stateSize - StateBudget
	if over <= 0 && stateOver <= 0 {
		return fitPlan{}
	}
	type cand struct {
		content string
		size    int // one encoded copy
		copies  int // in the whole result
		refs    int // results and entries that will name it
		inState int // in the state
		order   int
	}
	var cands []*cand
	at := map[string]*cand{}
	add := func(content string, copies, inState int) {
		c := at[content]
		if c == nil {
			c = &cand{content: content, size: stringLen(content), order: len(cands)}
			at[content] = c
			cands = append(cands, c)
		}
		c.copies += copies
		c.refs++
		c.inState += inState
	}
	for _, r := range res.Results {
		if r.ContentRef == "" {
			add(r.Content, 1, 0) // the result; clients rebuild its tool message and history entry
		}
	}
	if res.State != nil {
		for _, k := range SortedDedupeKeys(res.State.Dedupe) {
			if e := res.State.Dedupe[k]; e.ContentRef == "" {
				add(e.Content, 1, 1)
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].size != cands[j].size {
			return cands[i].size > cands[j].size
		}
		return cands[i].order < cands[j].order
	})
	var plan fitPlan
	for _, preview := range []int{2 << 10, 512, 128} {
		plan = fitPlan{preview: preview}
		need, stateNeed := over, stateOver
		picked := make([]bool, len(cands))
		saved := func(c *cand) int { return c.copies*(c.size-preview-NoteBytes) - c.refs*RefBytes }
		pick := func(i int) {
			picked[i] = true
			plan.contents = append(plan.contents, cands[i].content)
			need -= saved(cands[i])
			stateNeed -= cands[i].inState*(cands[i].size-preview-NoteBytes) - cands[i].inState*RefBytes
		}
		for i, c := range cands {
			if stateNeed > 0 && c.inState > 0 && saved(c) > 0 {
				pick(i)
			}
		}
		for i, c := range cands {
			if need > 0 && !picked[i] && saved(c) > 0 {
				pick(i)
			}
		}
		if need <= 0 && stateNeed <= 0 {
			break
		}
	}
	return plan
}

// stringLen is the length of s encoded as a JSON string, as encoding/json
// writes it (HTML characters escaped), without encoding it: the budget is
// worked out in workflow code, which must not spend long on megabytes.
func stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

func EncodedLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// output is step 8 of a round: its output, without the input the caller
// has (H3, changeLeanOutput), kept within its budget (fit).
func (r *run) output(ctx workflow.Context, res round.Result) round.Output {
	out := round.NewOutput(r.in, res)
	if Version(ctx, changeLeanOutput, 1) == 1 {
		out.Lean() // H3: the caller has the input
	}
	r.fit(ctx, &out)
	return out
}

// fit keeps a finished round's result within ResultBudget and its state
// within StateBudget by moving the largest contents to the blob store
// (StoreContents); each keeps a preview and a ContentRef, as a large single
// result does, and clients resolve them. Without a blob store the previews
// are all that remain, and dedupe entries are dropped rather than kept cut.
// When many small results are still too much, the per-call events leave the
// result; they are on the session's event stream already.
func (r *run) fit(ctx workflow.Context, res *round.Output) {
	size, stateSize := EncodedLen(res), EncodedLen(res.State)
	if size <= ResultBudget && stateSize <= StateBudget {
		return
	}
	if plan := planFitSized(res, size, stateSize); len(plan.contents) > 0 {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 30 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
			Summary:             "store large results",
		})
		var out wire.StoreContentsOutput
		err := workflow.ExecuteLocalActivity(lctx, wire.ActivityStoreContents, wire.StoreContentsInput{Contents: plan.contents, Preview: plan.preview}).Get(lctx, &out)
		if err != nil || len(out.Stored) != len(plan.contents) {
			workflow.GetLogger(ctx).Warn("storing large results failed; the round keeps previews", "error", err)
			out.Stored = make([]wire.StoredContent, len(plan.contents))
			for i, c := range plan.contents {
				out.Stored[i] = wire.StoredContent{Content: text.Cut(c, plan.preview) + fmt.Sprintf("\n[truncated: %d bytes in all; the round's results were more than a round can return and they could not be stored]", len(c))}
			}
		}
		applyFit(res, plan.contents, out.Stored)
	}
	if trimEvents(res) {
		workflow.GetLogger(ctx).Warn("the round's per-call events left its result to fit it", "budget", ResultBudget)
	}
	if n := EncodedLen(res); n > ResultBudget {
		workflow.GetLogger(ctx).Warn("the round's result is still above its budget", "bytes", n, "budget", ResultBudget)
	}
}

// trimEvents drops call_started events, then tool_result events, from a
// result above ResultBudget, and says so on round_finished. It reports
// whether it dropped any.
func trimEvents(res *round.Output) bool {
	dropped := 0
	for _, typ := range []string{round.EventCallStarted, round.EventToolResult} {
		if EncodedLen(res) <= ResultBudget {
			break
		}
		kept := res.Events[:0]
		for _, e := range res.Events {
			if e.Type == typ {
				dropped++
				continue
			}
			kept = append(kept, e)
		}
		res.Events = kept
	}
	if dropped == 0 {
		return false
	}
	for i := range res.Events {
		if res.Events[i].Type == round.EventRoundFinished {
			res.Events[i].Detail += fmt.Sprintf("; %d call events are on the session's event stream only: the result could not hold them", dropped)
		}
	}
	return true
}

// applyFit puts the stored contents in place of the originals.
func applyFit(res *round.Output, contents []string, stored []wire.StoredContent) {
	idx := make(map[string]int, len(contents))
	for i, c := range contents {
		idx[c] = i
	}
	for i := range res.Results {
		cr := &res.Results[i]
		j, ok := idx[cr.Content]
		if cr.ContentRef != "" || !ok {
			continue
		}
		cr.Content, cr.ContentRef = stored[j].Content, stored[j].Ref
	}
	if res.State == nil {
		return
	}
	for _, k := range SortedDedupeKeys(res.State.Dedupe) {
		e := res.State.Dedupe[k]
		j, ok := idx[e.Content]
		if e.ContentRef != "" || !ok {
			continue
		}
		if stored[j].Ref == "" {
			delete(res.State.Dedupe, k) // a cut answer would be served as the whole one
			continue
		}
		e.Content, e.ContentRef = stored[j].Content, stored[j].Ref
		res.State.Dedupe[k] = e
	}
}
