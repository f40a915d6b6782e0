package agentrun

import (
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// fit moves the texts planConversation picks (message contents and
// tool-call arguments) to the blob store (the round's StoreContents local
// activity); what stays is a preview and the reference, which the model
// call reads back.
func (a *agent) fit(ctx workflow.Context) {
	picked := planConversation(a.conv, InlineContent, ConversationBudget)
	if len(picked) == 0 {
		return
	}
	contents := make([]string, len(picked))
	for i, p := range picked {
		contents[i] = p.text(a.conv)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "store large messages",
	})
	var out wire.StoreContentsOutput
	err := workflow.ExecuteLocalActivity(lctx, wire.ActivityStoreContents, wire.StoreContentsInput{Contents: contents, Preview: agentPreview}).Get(lctx, &out)
	if err != nil || len(out.Stored) != len(picked) {
		workflow.GetLogger(ctx).Warn("storing large messages failed; the conversation keeps them", "error", err)
		return
	}
	for i, p := range picked {
		if out.Stored[i].Ref == "" {
			continue // no blob store: the text stays whole
		}
		m := &a.conv[p.msg]
		if p.call < 0 {
			// The stored text is the whole message content, so Tool is
			// cleared: it is read back as it is.
			m.Content, m.ContentRef, m.Tool = out.Stored[i].Content, out.Stored[i].Ref, ""
			continue
		}
		if len(m.ArgRefs) < len(m.ToolCalls) {
			m.ArgRefs = append(m.ArgRefs, make([]string, len(m.ToolCalls)-len(m.ArgRefs))...)
		}
		m.ToolCalls[p.call].Function.Arguments = round.Arguments(out.Stored[i].Content)
		m.ArgRefs[p.call] = out.Stored[i].Ref
	}
}

// piece is one text of a conversation that may move to the blob store: the
// content of message msg (call -1) or the arguments of its tool call call.
type piece struct{ msg, call, size int }

func (p piece) text(conv []round.AgentMessage) string {
	if p.call < 0 {
		return conv[p.msg].Content
	}
	return string(conv[p.msg].ToolCalls[p.call].Function.Arguments)
}

// planConversation picks the texts that go to the blob store: every inline
// content or tool-call arguments above inline bytes, then the largest
// others until the encoded conversation fits budget. It is pure.
func planConversation(conv []round.AgentMessage, inline, budget int) []piece {
	size := workflows.EncodedLen(conv)
	var picked, rest []piece
	consider := func(p piece) {
		if p.size <= agentPreview+200 {
			return // a preview would save nothing
		}
		if p.size > inline {
			picked = append(picked, p)
			size -= p.size - agentPreview - workflows.NoteBytes - workflows.RefBytes
		} else {
			rest = append(rest, p)
		}
	}
	for i, m := range conv {
		if m.ContentRef == "" {
			consider(piece{msg: i, call: -1, size: len(m.Content)})
		}
		for j, c := range m.ToolCalls {
			if j >= len(m.ArgRefs) || m.ArgRefs[j] == "" {
				consider(piece{msg: i, call: j, size: len(c.Function.Arguments)})
			}
		}
	}
	sort.SliceStable(rest, func(x, y int) bool { return rest[x].size > rest[y].size })
	for _, p := range rest {
		if size <= budget {
			break
		}
		picked = append(picked, p)
		size -= p.size - agentPreview - workflows.NoteBytes - workflows.RefBytes
	}
	sort.SliceStable(picked, func(x, y int) bool {
		if picked[x].msg != picked[y].msg {
			return picked[x].msg < picked[y].msg
		}
		return picked[x].call < picked[y].call
	})
	return picked
}
