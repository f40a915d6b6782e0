package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/llm"
	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

// Model is the agent run's model call (A1): it asks an OpenAI-compatible
// model for the next assistant message, streams the content tokens to the
// session's event stream, and seals store_secret arguments before the
// message enters workflow history (T9).
type Model struct {
	// LLM is the model; nil fails every call with a message that says how
	// to configure one (LLM_BASE_URL, LLM_MODEL).
	LLM *llm.Client
	// Registry gives the provider's tools array and turn context.
	Registry *tools.Registry
	// Events receives model_token and model_reply events; nil: none.
	Events EventSink
	// Blobs resolves content_ref contents and keeps large replies; nil:
	// previews stay previews.
	Blobs BlobStore
	// SecretKey returns the key that seals store_secret values.
	SecretKey func() ([]byte, error)
	// Secrets are the sessions' stored secrets (the worker's secrets.Store):
	// a thinking block or reasoning item that holds a value an earlier turn
	// stored is sealed too (F2). Nil: only the turn's own values are looked
	// for.
	Secrets SecretValues
	// FlushEvery and FlushBytes batch the content tokens into events: a
	// batch goes out when it is this old or this large. Defaults 100ms and
	// 512 bytes.
	FlushEvery time.Duration
	FlushBytes int
	// MaxInline is the largest reply content kept in history; larger goes
	// to Blobs. Default 16 KiB.
	MaxInline int
	// MaxRaw is the largest raw turn (a Messages or Responses turn sent
	// back unchanged) kept in history; a larger one goes to Blobs and
	// history keeps its calls (round.ShortTurn). Default
	// DefaultLargeResult, the worker's LARGE_RESULT_BYTES.
	MaxRaw int
	// ContextTokens is LLM_CONTEXT_TOKENS, the budget of a request whose
	// input asks for one (B3). Default 100000.
	ContextTokens int
	Logger        *slog.Logger
}

// Application error types of ModelCall.
const (
	// ErrTypeModelRejected is a request the model's server refused for good
	// (bad request, authentication, unknown model): asking again cannot help.
	ErrTypeModelRejected = "ModelRejected"
	// ErrTypeNoModel is a worker with no model configured.
	ErrTypeNoModel = "NoModel"
)

// systemPrompt is the run's system prompt: SystemPrompt, then a
// subagent's own instructions (G1).
func systemPrompt(in wire.ModelInput) string {
	if in.SystemPrompt == "" {
		return SystemPrompt
	}
	return SystemPrompt + "\n\n" + in.SystemPrompt
}

// SystemPrompt opens every conversation of an agent run.
const SystemPrompt = `You are an agent that completes the user's task by calling tools. Call tools when you need them; several independent calls may go in one message. When the task is done, answer without tool calls: that answer is the run's final answer.`

func (m *Model) logger() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}

// Call is the ModelCall activity.
func (m *Model) Call(ctx context.Context, in wire.ModelInput) (wire.ModelOutput, error) {
	lm := m.LLM
	if in.Script != nil {
		// The run's model is a script, played here in its format's API.
		c, err := scripted.Client(in.Script)
		if err != nil {
			return wire.ModelOutput{}, temporal.NewNonRetryableApplicationError("the run's script: "+err.Error(), ErrTypeNoModel, err)
		}
		lm = c
	}
	if lm == nil {
		return wire.ModelOutput{}, temporal.NewNonRetryableApplicationError(
			"no model is configured on the worker: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY), or give the run a script (starter agent --model scripted:FILE)", ErrTypeNoModel, nil)
	}
	info := activity.GetInfo(ctx)
	ctx, stop := heartbeat(ctx, info)
	defer stop()
	var budgeted []wire.BudgetedResult
	if in.Budget {
		mm := *m
		if m.Blobs != nil {
			mm.Blobs = &memoBlobs{BlobStore: m.Blobs, seen: map[string]string{}}
		}
		m = &mm
		var exceeded bool
		var err error
		if budgeted, exceeded, err = m.fitBudget(ctx, &in, lm.API()); err != nil {
			return wire.ModelOutput{}, err
		}
		if exceeded {
			return wire.ModelOutput{Budgeted: budgeted, ContextExceeded: true}, nil
		}
	}

	scope := wire.AgentScope{SessionID: in.SessionID, RunID: in.RunID, WorkflowID: in.WorkflowID}
	tok := &tokens{m: m, scope: scope, call: in.Call, round: in.Round, attempt: int(info.Attempt), session: in.SessionID}
	var out wire.ModelOutput
	if api := lm.API(); api != llm.APIChat {
		req, err := m.turnRequest(ctx, in, api)
		if err != nil {
			return wire.ModelOutput{}, err
		}
		sent := sentSize(in, req)
		tok.start(ctx)
		turn, err := lm.StreamTurn(ctx, req, tok.add)
		tok.stop(ctx)
		if err != nil {
			return wire.ModelOutput{}, modelError(err)
		}
		if out, err = m.turnOutput(ctx, in.SessionID, api, turn); err != nil {
			return wire.ModelOutput{}, err
		}
		out.Request = sent.reported(turn.InputTokens)
	} else {
		req, err := m.request(ctx, in)
		if err != nil {
			return wire.ModelOutput{}, err
		}
		sent := sentSize(in, req)
		tok.start(ctx)
		resp, err := lm.Stream(ctx, req, tok.add)
		tok.stop(ctx)
		if err != nil {
			return wire.ModelOutput{}, modelError(err)
		}
		if out, err = m.output(ctx, resp); err != nil {
			return wire.ModelOutput{}, err
		}
		out.Stop = string(llm.ChatStop(resp.FinishReason, len(resp.ToolCalls) > 0))
		out.Request = sent.reported(resp.InputTokens)
	}
	out.Budgeted = budgeted
	m.publish(ctx, in.SessionID, scope.ModelReply(in.Call, in.Round, replyDetail(out.Message)))
	return out, nil
}

// sentSize measures the request of a call that asked for the budget, for
// the next call's estimate (B3); zero for the others.
func sentSize(in wire.ModelInput, req any) sent {
	if !in.Budget {
		return 0
	}
	n, err := requestBytes(req)
	if err != nil {
		return 0
	}
	return sent(n)
}

// sent is the JSON bytes of a request sent; 0: not measured.
type sent int

// reported is the request's size with the input tokens the API reported
// for it; nil when it was not measured.
func (s sent) reported(tokens int64) *round.RequestSize {
	if s <= 0 {
		return nil
	}
	return &round.RequestSize{Bytes: int(s), InputTokens: max(tokens, 0)}
}

// MaxRetryAfter caps the wait a rate-limited or overloaded model asks for.
const MaxRetryAfter = 120 * time.Second

// ErrTypeModelBusy is a model that asked to be asked again later (429,
// 529, 503, an overloaded_error event): the next attempt waits for its
// retry-after, at most MaxRetryAfter.
const ErrTypeModelBusy = "ModelBusy"

// modelError is the activity's error for a failed model call: a refusal
// for good is not retried, a busy model is retried after its retry-after.
func modelError(err error) error {
	var se *llm.StatusError
	if !errors.As(err, &se) {
		return fmt.Errorf("model: %w", err)
	}
	if !se.Retryable() {
		return temporal.NewNonRetryableApplicationError("model: "+err.Error(), ErrTypeModelRejected, err)
	}
	if se.RetryAfter > 0 {
		return temporal.NewApplicationErrorWithOptions("model: "+err.Error(), ErrTypeModelBusy,
			temporal.ApplicationErrorOptions{NextRetryDelay: min(se.RetryAfter, MaxRetryAfter), Cause: err})
	}
	return fmt.Errorf("model: %w", err)
}

// request builds the chat request: the system prompt with the provider's
// turn context, the conversation with stored contents read back, the
// provider's tools array.
func (m *Model) request(ctx context.Context, in wire.ModelInput) (llm.Request, error) {
	system := systemPrompt(in)
	var toolsJSON json.RawMessage
	if m.Registry != nil {
		ts := m.Registry.ToolsFor(in.Provider, in.ClientTools).Without(in.Exclude)
		if ts.TurnContext != "" {
			system += "\n\n" + ts.TurnContext
		}
		b, err := json.Marshal(ts.Tools)
		if err != nil {
			return llm.Request{}, fmt.Errorf("encode tools: %w", err)
		}
		toolsJSON = b
	}
	msgs := make([]llm.Message, 0, len(in.Messages)+1)
	msgs = append(msgs, llm.Message{Role: "system", Content: system})
	for _, am := range in.Messages {
		content := am.Content
		if am.ContentRef != "" && m.Blobs != nil && !am.Budgeted {
			full, err := m.Blobs.Get(ctx, am.ContentRef)
			if err != nil {
				m.logger().Warn("a stored message content could not be read; the model gets its preview", "ref", am.ContentRef, "error", err)
			} else if am.Tool != "" {
				content = round.NotedContent(am.Tool, am.Note, full)
			} else {
				content = full
			}
		}
		lm := llm.Message{Role: am.Role, Content: content, ToolCallID: am.ToolCallID}
		for i, c := range am.ToolCalls {
			args := string(c.Function.Arguments)
			if i < len(am.ArgRefs) && am.ArgRefs[i] != "" && m.Blobs != nil {
				full, err := m.Blobs.Get(ctx, am.ArgRefs[i])
				if err != nil {
					m.logger().Warn("stored tool-call arguments could not be read; the model gets their preview", "ref", am.ArgRefs[i], "error", err)
				} else {
					args = full
				}
			}
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: c.ID, Type: "function",
				Function: llm.Function{Name: c.Function.Name, Arguments: args}})
		}
		msgs = append(msgs, lm)
	}
	return llm.Request{Model: in.Model, Messages: msgs, Tools: toolsJSON}, nil
}

// output turns the model's answer into what enters history: tool calls
// with ids and sealed store_secret values, a large content by reference.
func (m *Model) output(ctx context.Context, resp llm.Response) (wire.ModelOutput, error) {
	msg := round.AgentMessage{Role: "assistant", Content: resp.Content}
	var key []byte
	seen := map[string]bool{}
	for i, c := range resp.ToolCalls {
		// A round needs one id per call; a server that leaves ids out or
		// repeats them gets ids of the call's place.
		id := strings.TrimSpace(c.ID)
		if id == "" || seen[id] || len(id) > 200 {
			id = fmt.Sprintf("call_%d", i+1)
		}
		seen[id] = true
		args := c.Function.Arguments
		if key == nil && m.SecretKey != nil {
			k, err := m.SecretKey()
			if err != nil {
				// Without the key a store_secret value cannot be sealed:
				// retry rather than let it into history.
				return wire.ModelOutput{}, fmt.Errorf("model: the key that seals secrets: %w", err)
			}
			key = k
		}
		if key != nil {
			sealed, err := secrets.SealToolCall(key, c.Function.Name, args)
			if err != nil {
				// A call that may hold a value but cannot be read never
				// reaches history: its arguments are replaced, and the
				// round answers that they are invalid.
				sealed = `"arguments withheld: they looked like a store_secret value but could not be read as JSON"`
			}
			args = sealed
		}
		msg.ToolCalls = append(msg.ToolCalls, round.ToolCall{ID: id, Type: "function",
			Function: round.FunctionCall{Name: c.Function.Name, Arguments: round.Arguments(args)}})
	}
	limit := m.MaxInline
	if limit <= 0 {
		limit = 16 << 10
	}
	if len(msg.Content) > limit && m.Blobs != nil {
		ref, err := m.Blobs.Put(ctx, msg.Content)
		if err == nil {
			msg.ContentRef = ref
			msg.Content = round.StoredPreview(msg.Content, ref, previewBytes)
		} else {
			m.logger().Warn("storing a large model reply failed; it stays in history", "error", err)
		}
	}
	return wire.ModelOutput{Message: msg, FinishReason: resp.FinishReason, Tokens: resp.Tokens}, nil
}

func replyDetail(msg round.AgentMessage) string {
	if n := len(msg.ToolCalls); n > 0 {
		names := make([]string, n)
		for i, c := range msg.ToolCalls {
			names[i] = c.Function.Name
		}
		return fmt.Sprintf("%d tool calls: %s", n, strings.Join(names, ", "))
	}
	return round.ResultPreview(msg.Content)
}

func (m *Model) publish(ctx context.Context, sessionID string, events ...round.Event) {
	if m.Events == nil {
		return
	}
	now := time.Now().UTC()
	for i := range events {
		events[i].Time = now
	}
	if err := m.Events.Publish(ctx, sessionID, events); err != nil {
		m.logger().Warn("publishing model events failed; the run goes on", "error", err)
	}
}

// tokens batches streamed content into model_token events.
type tokens struct {
	m                  *Model
	scope              wire.AgentScope
	call, attempt, seq int
	round              int
	session            string
	mu                 sync.Mutex // buf
	pub                sync.Mutex // seq and publication: batches go out in order
	buf                strings.Builder
	done               chan struct{}
	stopped            chan struct{}
}

func (t *tokens) start(ctx context.Context) {
	t.done, t.stopped = make(chan struct{}), make(chan struct{})
	every := t.m.FlushEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	go func() {
		defer close(t.stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.done:
				return
			case <-tick.C:
				t.flush(ctx)
			}
		}
	}()
}

func (t *tokens) add(s string) {
	limit := t.m.FlushBytes
	if limit <= 0 {
		limit = 512
	}
	t.mu.Lock()
	t.buf.WriteString(s)
	full := t.buf.Len() >= limit
	t.mu.Unlock()
	if full {
		t.flush(context.Background())
	}
}

func (t *tokens) flush(ctx context.Context) {
	t.pub.Lock()
	defer t.pub.Unlock()
	t.mu.Lock()
	text := t.buf.String()
	t.buf.Reset()
	t.mu.Unlock()
	if text == "" {
		return
	}
	t.seq++
	e := t.scope.ModelToken(t.call, t.attempt, t.seq, text)
	e.Round = t.round
	t.m.publish(ctx, t.session, e)
}

func (t *tokens) stop(ctx context.Context) {
	close(t.done)
	<-t.stopped
	t.flush(ctx)
}

// heartbeat keeps a regular activity alive while the model answers, so that
// a dead worker is noticed within the heartbeat timeout, and lets
// cancellation reach the request.
func heartbeat(ctx context.Context, info activity.Info) (context.Context, func()) {
	if info.IsLocalActivity || info.HeartbeatTimeout <= 0 {
		return ctx, func() {}
	}
	every := max(info.HeartbeatTimeout/3, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return ctx, cancel
}
