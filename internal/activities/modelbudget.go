package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
)

// DefaultContextTokens is LLM_CONTEXT_TOKENS when the worker sets none (B3).
const DefaultContextTokens = 100_000

// budgetPreview is what a shortened tool result keeps of itself (B3).
const budgetPreview = 300

func (m *Model) contextTokens() int {
	if m.ContextTokens > 0 {
		return m.ContextTokens
	}
	return DefaultContextTokens
}

// requestBytes is the length of a request's JSON encoding.
func requestBytes(req any) (int, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("encode the request: %w", err)
	}
	return len(b), nil
}

// requestSize builds the call's request for the worker's API and
// estimates it in tokens (B3): the run's last reported input tokens plus
// the bytes it grew by / 4, or its JSON bytes / 4 when no usage was
// reported (round.RequestSize.Estimate).
func (m *Model) requestSize(ctx context.Context, in wire.ModelInput, api string) (int, error) {
	var req any
	var err error
	if api == llm.APIChat {
		req, err = m.request(ctx, in)
	} else {
		req, err = m.turnRequest(ctx, in, api)
	}
	if err != nil {
		return 0, err
	}
	n, err := requestBytes(req)
	if err != nil {
		return 0, err
	}
	return in.Last.Estimate(n), nil
}

// fitBudget keeps the call's request under the context budget (B3): while
// it would pass it, the oldest tool result outside the last two rounds
// becomes a preview naming its blob reference, which read_result reads
// back. The system message, user messages, assistant turns and the last two
// rounds stay whole. It reports the results it replaced (in.Messages holds
// them replaced), and whether the request passes the budget even so.
func (m *Model) fitBudget(ctx context.Context, in *wire.ModelInput, api string) ([]wire.BudgetedResult, bool, error) {
	budget := m.contextTokens()
	size, err := m.requestSize(ctx, *in, api)
	if err != nil || size <= budget {
		return nil, false, err
	}
	in.Messages = append([]round.AgentMessage(nil), in.Messages...)
	var done []wire.BudgetedResult
	next := 0
	limit := protectedFrom(in.Messages)
	for size > budget {
		// Shorten, by the estimate, as many as should fit; then measure.
		over := size - budget
		for over > 0 {
			for next < limit && (in.Messages[next].Role != "tool" || in.Messages[next].Budgeted) {
				next++
			}
			if next >= limit || m.Blobs == nil {
				return done, true, nil
			}
			b, saved, err := m.shorten(ctx, &in.Messages[next], next)
			if err != nil {
				return nil, false, err
			}
			done = append(done, b)
			over -= saved
			next++
		}
		if size, err = m.requestSize(ctx, *in, api); err != nil {
			return nil, false, err
		}
	}
	return done, false, nil
}

// protectedFrom is the index of the first message of the last two rounds:
// the second to last assistant turn with tool calls. Nothing before the
// conversation's second round can be shortened.
func protectedFrom(conv []round.AgentMessage) int {
	seen := 0
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == "assistant" && len(conv[i].ToolCalls) > 0 {
			if seen++; seen == 2 {
				return i
			}
		}
	}
	return 0
}

// shorten replaces tool message am (message i) by its preview and the
// reference of its whole content, storing it if it is inline; it reports
// about how many tokens that saves.
func (m *Model) shorten(ctx context.Context, am *round.AgentMessage, i int) (wire.BudgetedResult, int, error) {
	full, ref := am.Content, am.ContentRef
	if ref != "" {
		got, err := m.Blobs.Get(ctx, ref)
		if err != nil {
			// The whole is gone: what the model gets is the preview anyway.
			m.logger().Warn("a stored tool result could not be read; its preview is shortened", "ref", ref, "error", err)
		} else {
			full = got
		}
	} else {
		var err error
		if ref, err = m.Blobs.Put(ctx, full); err != nil {
			return wire.BudgetedResult{}, 0, fmt.Errorf("model: store a tool result the context budget shortens: %w", err)
		}
	}
	content := BudgetPreview(full, ref)
	was := len(m.fullContent(ctx, *am))
	am.Content, am.ContentRef, am.Budgeted = content, ref, true
	return wire.BudgetedResult{Msg: i, Ref: ref, Content: content}, (was - len(content)) / 4, nil
}

// BudgetPreview is a shortened tool result as the model gets it: its first
// bytes and how to read the whole back (B3).
func BudgetPreview(full, ref string) string {
	return round.PreviewOf(full, budgetPreview) + fmt.Sprintf(
		"\n[shortened to keep the conversation within its context budget: %d bytes in all; read_result {\"ref\": %q} reads the whole]", len(full), ref)
}

// memoBlobs reads each reference once per model call: the budget builds
// the request more than once.
type memoBlobs struct {
	BlobStore
	mu   sync.Mutex
	seen map[string]string
}

func (b *memoBlobs) Get(ctx context.Context, ref string) (string, error) {
	b.mu.Lock()
	v, ok := b.seen[ref]
	b.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := b.BlobStore.Get(ctx, ref)
	if err == nil {
		b.mu.Lock()
		b.seen[ref] = v
		b.mu.Unlock()
	}
	return v, err
}
