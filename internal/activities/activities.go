// Package activities holds the round's activities: ExecuteTool runs one call
// through the tool registry; PublishRound hands pass 3's results to the
// event stream, the result cache and the session history.
package activities

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/beat"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// EventSink receives a round's events (a Redis stream per session). Events
// carry stable ids, so publishing one twice is harmless.
type EventSink interface {
	Publish(ctx context.Context, sessionID string, events []round.Event) error
}

// HistorySink appends a session's messages.
type HistorySink interface {
	Append(ctx context.Context, sessionID string, records []tools.HistoryRecord) error
}

// BlobStore keeps results too large for workflow history.
type BlobStore interface {
	Put(ctx context.Context, content string) (ref string, err error)
	Get(ctx context.Context, ref string) (string, error)
}

// ConfirmingBlobStore is a BlobStore that tells whether a write is safe
// from a failover (cache.Blobs: a replica acknowledged it, O1).
type ConfirmingBlobStore interface {
	PutConfirmed(ctx context.Context, content string) (ref string, confirmed bool, err error)
}

// unconfirmedFactor: a result whose blob write no replica confirmed stays
// in workflow history, whole, up to this many times LargeResult (O1).
const unconfirmedFactor = 4

// Activities holds the dependencies of the round's activities.
type Activities struct {
	Registry *tools.Registry
	// Unavailable lists the MCP servers whose tools are missing, for
	// ListTools; nil: none.
	Unavailable func() []tools.Unavailable
	// Queues are the worker's tool queues and their state (TOOL_QUEUES,
	// Y2), which ListTools reports beside its tools.
	Queues func() []tools.QueueState
	// Events, Cache, History and Blobs may be nil: the round then goes on
	// without them.
	Events  EventSink
	Cache   tools.ResultCache
	History HistorySink
	Blobs   BlobStore
	// LargeResult is the size above which a result is kept in Blobs and
	// history holds a reference. Zero means 128 KiB.
	LargeResult int
	Logger      *slog.Logger
	// Metrics and Tracer may be nil: no tool metrics, no per-call spans.
	Metrics *Metrics
	Tracer  trace.Tracer
	// RuleKey signs and verifies the allow rules of run states (T4,
	// approval.KeyConfig). Only workers hold it; it never enters history.
	// Without it no rule verifies and none is remembered.
	RuleKey []byte
	// RuleKeyPrevious is the rule key being rotated out
	// (TOOLROUND_RULE_KEY_PREVIOUS): what it signed still verifies,
	// nothing new is signed with it. Nil: none.
	RuleKeyPrevious []byte
	// Secrets are the sessions' stored secrets, for the agent run's model
	// call (Model.Secrets); nil: none.
	Secrets SecretValues
	// SecretStore seals the secrets a user tool's call sends for its
	// queue and opens that tool's sealed answer (ToolSecrets,
	// OpenToolResult); nil: such a call is refused.
	SecretStore ToolSecretStore
	// Client is the worker's Temporal client, through which a call whose
	// MCP server asks for input reaches its round (elicit.go); nil: such
	// a request is refused.
	Client client.Client
}

// DefaultLargeResult is the default LargeResult threshold.
const DefaultLargeResult = 128 << 10

// previewBytes is how much of a large result stays in history.
const previewBytes = 2 << 10

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// ExecuteTool runs one call. A tool's own failure is a result (IsError), not
// an activity error; only transient failures of retryable calls return an
// error, so that Temporal retries them with the tool's policy.
func (a *Activities) ExecuteTool(ctx context.Context, in wire.ExecuteInput) (wire.ExecuteOutput, error) {
	info := activity.GetInfo(ctx)
	attempt := int(info.Attempt)
	def, ok := a.Registry.Lookup(in.Tool)
	ctx, ct := a.beginCall(ctx, in, ok, attempt)
	status := "ok"
	var out wire.ExecuteOutput
	defer func() { a.endCall(ctx, ct, in, status, out) }()
	if !ok {
		status = "error"
		ct.log.Warn("tool is not registered on this worker")
		out = wire.ExecuteOutput{IsError: true, Attempt: attempt,
			Content: fmt.Sprintf("tool %s is not registered on the worker that picked up the call", in.Tool)}
		return out, nil
	}
	if a.Events != nil && !info.IsLocalActivity {
		a.publishStarted(ctx, in, attempt, ct.log)
	}

	ctx, stop := a.keepAlive(ctx, info)
	defer stop()
	ctx = tools.WithSession(ctx, in.SessionID) // its workspace (W1)
	if !info.IsLocalActivity {
		ctx = tools.WithElicitor(ctx, a.elicitor(info, in)) // E1
		ctx = tools.WithInputRounds(ctx)
	}

	req := tools.Request{
		Tool: in.Tool, CallID: in.CallID, SessionID: in.SessionID, RunID: in.RunID, Round: in.Round,
		WorkflowID: in.WorkflowID, Args: json.RawMessage(in.Args),
		OperationID: operationID(info, in), Generation: in.Generation, RuleApproved: in.RuleApproved, RuleScope: in.RuleScope, ResultRefs: in.ResultRefs,
		Test: in.Test, InputResponses: in.InputResponses, RequestState: in.RequestState, InputTrips: in.InputTrips, Task: in.Task,
	}
	res, err := a.call(ctx, def, req, ct.log)
	if err == nil && res.Input != nil {
		status = "input_required"
		ct.log.Info("the call's MCP server asks for input; the round asks a person and runs the call again", "requests", len(res.Input.Asks))
		out = wire.ExecuteOutput{Input: res.Input, Attempt: attempt}
		return out, nil
	}
	if err == nil && res.Task != nil {
		status = "task"
		ct.log.Info("the call's MCP server runs it as a task; the round polls it", "task", res.Task.ID)
		out = wire.ExecuteOutput{Task: res.Task, Attempt: attempt}
		return out, nil
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			status = "cancelled"
			return wire.ExecuteOutput{}, err // cancelled or timed out: Temporal reports it
		}
		if errors.Is(err, tools.ErrOutcomeLost) {
			status = "lost"
			return wire.ExecuteOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), wire.ErrTypeOutcomeLost, err)
		}
		effect := tools.EffectOf(def, req.Args)
		// Polling an MCP task changes nothing on the server (E2): a poll
		// that failed in passing is tried again, whatever the tool does.
		if tools.IsTransient(err) && (effect == tools.ReadOnly || effect == tools.Idempotent || in.Task != nil) {
			status = "retry"
			ct.log.Info("transient tool failure; Temporal retries the call", "error", err)
			// The attempt goes in the failure's details: when it is the
			// last, the round reports how many attempts the call made.
			return wire.ExecuteOutput{}, temporal.NewApplicationErrorWithOptions(err.Error(), wire.ErrTypeTransient,
				temporal.ApplicationErrorOptions{Cause: err, Details: []any{attempt}})
		}
		status = "error"
		out = wire.ExecuteOutput{IsError: true, Content: err.Error(), Attempt: attempt, ErrorCode: tools.ErrorCode(err)}
		return out, nil
	}
	out = wire.ExecuteOutput{Content: res.Content, Fetched: res.Fetched, Touched: res.Touched, Read: res.Read, FromCache: res.FromCache, Attempt: attempt}
	out.Files = fileStates(res.Files)
	if out.FromCache && ct.span != nil {
		ct.span.SetAttributes(attribute.Bool("toolround.from_cache", true))
	}
	a.offload(ctx, &out, ct.log)
	out.Images = a.keepImages(ctx, res.Images, ct.log)
	return out, nil
}

// keepImages keeps a result's image bytes out of workflow history (F2):
// the blob store holds each image's base64 and the output its reference.
// Without a blob store, or when it fails, an image whose base64 is within
// LargeResult stays in the output; a larger one keeps only its type and
// size, and its message says that it was not kept.
func (a *Activities) keepImages(ctx context.Context, images []round.Image, log *slog.Logger) []round.Image {
	limit := a.LargeResult
	if limit <= 0 {
		limit = DefaultLargeResult
	}
	var out []round.Image
	for _, im := range images {
		if len(im.Data) == 0 {
			continue
		}
		kept := round.Image{MIMEType: im.MIMEType, Size: len(im.Data)}
		b64 := base64.StdEncoding.EncodeToString(im.Data)
		if a.Blobs != nil {
			ref, err := a.Blobs.Put(ctx, b64)
			if err == nil {
				kept.Ref = ref
				out = append(out, kept)
				continue
			}
			log.Warn("storing an image failed; keeping it in history only when it is small", "error", err)
		}
		if len(b64) <= limit {
			kept.Data = im.Data
		}
		out = append(out, kept)
	}
	return out
}

// call runs the handler and turns a panic into a tool failure, so bad input
// never takes the worker down.
func (a *Activities) call(ctx context.Context, def *tools.Definition, req tools.Request, log *slog.Logger) (res tools.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("tool panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error (panic: %v)", p)
		}
	}()
	return def.Handler(ctx, req)
}

// keepAlive heartbeats a regular activity while its handler runs, so that a
// dead worker is noticed within the heartbeat timeout instead of the tool's
// whole timeout, and so that cancellation reaches the handler.
func (a *Activities) keepAlive(ctx context.Context, info activity.Info) (context.Context, func()) {
	if info.IsLocalActivity || info.HeartbeatTimeout <= 0 {
		return ctx, func() {}
	}
	every := max(info.HeartbeatTimeout/3, 100*time.Millisecond)
	ctx = tools.WithProgress(ctx, func(details string) { activity.RecordHeartbeat(ctx, details) })
	return ctx, beat.Every(ctx, every)
}

// offload keeps a large result outside workflow history: the blob store
// holds it and the output carries a reference and a preview.
func (a *Activities) offload(ctx context.Context, out *wire.ExecuteOutput, log *slog.Logger) {
	limit := a.LargeResult
	if limit <= 0 {
		limit = DefaultLargeResult
	}
	if len(out.Content) <= limit {
		return
	}
	if a.Blobs == nil {
		out.Content = round.PreviewOf(out.Content, limit) + fmt.Sprintf("\n[truncated: the result was %d bytes and no blob store is configured]", len(out.Content))
		return
	}
	ref, confirmed, err := "", true, error(nil)
	if cb, ok := a.Blobs.(ConfirmingBlobStore); ok {
		ref, confirmed, err = cb.PutConfirmed(ctx, out.Content)
	} else {
		ref, err = a.Blobs.Put(ctx, out.Content)
	}
	if err != nil {
		// A write that failed is not confirmed either: what history can
		// carry stays there, whole (a failover in progress, O1).
		if len(out.Content) <= unconfirmedFactor*limit {
			log.Warn("storing a large result failed; keeping it in history", "bytes", len(out.Content), "error", err)
			return
		}
		log.Warn("storing a large result failed; keeping a truncated copy", "error", err)
		out.Content = round.PreviewOf(out.Content, limit) + fmt.Sprintf("\n[truncated: the result was %d bytes and the blob store failed: %v]", len(out.Content), err)
		return
	}
	if !confirmed {
		// No replica acknowledged the write: a failover now would lose the
		// blob. A result that history can carry stays there, whole.
		if len(out.Content) <= unconfirmedFactor*limit {
			log.Warn("no replica confirmed a large result's blob; keeping it in history", "bytes", len(out.Content))
			return
		}
		log.Warn("no replica confirmed a large result's blob, too large to keep in history", "bytes", len(out.Content), "ref", ref)
		out.ContentRef = ref
		out.Content = round.PreviewOf(out.Content, previewBytes) + fmt.Sprintf("\n[%d bytes in all; stored as %s; stored: unconfirmed (no replica acknowledged the write: a Redis failover may have lost it)]", len(out.Content), ref)
		return
	}
	out.ContentRef = ref
	out.Content = round.StoredPreview(out.Content, ref, previewBytes)
}

// OffloadResult is the OffloadResult local activity: a user tool's result,
// which its tool worker returned to the round (Y1a), kept as ExecuteTool
// keeps a built-in's (Y3): a content above LargeResult in the blob store,
// its images there too.
func (a *Activities) OffloadResult(ctx context.Context, out wire.ExecuteOutput) (wire.ExecuteOutput, error) {
	log := a.logger()
	a.offload(ctx, &out, log)
	out.Images = a.keepImages(ctx, out.Images, log)
	return out, nil
}

// StoreContents keeps the contents a round's result cannot hold (see
// workflows.ResultBudget) in the blob store; each leaves a preview and a
// reference. Without a blob store, or when it fails, the preview says the
// rest is gone; the round completes either way.
func (a *Activities) StoreContents(ctx context.Context, in wire.StoreContentsInput) (wire.StoreContentsOutput, error) {
	out := wire.StoreContentsOutput{Stored: make([]wire.StoredContent, len(in.Contents))}
	for i, c := range in.Contents {
		preview := round.PreviewOf(c, in.Preview)
		if a.Blobs == nil {
			out.Stored[i].Content = preview + fmt.Sprintf("\n[truncated: %d bytes in all; the round's results were more than a round can return and no blob store is configured]", len(c))
			continue
		}
		ref, err := a.Blobs.Put(ctx, c)
		if err != nil {
			a.logger().Warn("storing a result the round cannot hold failed; keeping a preview", "error", err)
			out.Stored[i].Content = preview + fmt.Sprintf("\n[truncated: %d bytes in all; the round's results were more than a round can return and the blob store failed: %v]", len(c), err)
			continue
		}
		out.Stored[i] = wire.StoredContent{Ref: ref, Content: round.StoredPreview(c, ref, in.Preview)}
	}
	return out, nil
}

// blobRefresher is a blob store that can give stored blobs their TTL again
// (cache.Blobs).
type blobRefresher interface {
	Refresh(ctx context.Context, refs []string) (missing []string, err error)
}

// RefreshContents is the RefreshContents local activity (B3): the blob
// references an agent run carries into its next execution get the store's
// whole TTL again, so a live run's replaced results stay readable however
// long it runs. A store that cannot refresh refreshes nothing.
func (a *Activities) RefreshContents(ctx context.Context, in wire.RefreshContentsInput) (wire.RefreshContentsOutput, error) {
	r, ok := a.Blobs.(blobRefresher)
	if !ok || len(in.Refs) == 0 {
		return wire.RefreshContentsOutput{}, nil
	}
	missing, err := r.Refresh(ctx, in.Refs)
	if err != nil {
		return wire.RefreshContentsOutput{}, err
	}
	if len(missing) > 0 {
		a.logger().Warn("stored contents of a live agent run are gone; their previews are all that remain", "missing", len(missing), "first", missing[0])
	}
	return wire.RefreshContentsOutput{Refreshed: len(in.Refs) - len(missing), Missing: missing}, nil
}

// endCall ends an attempt's trace; an attempt that gives the call its
// result (ok or the tool's own error, not a retry or a cancellation) also
// publishes the call's call_finished event (U7) and logs its one INFO line.
func (a *Activities) endCall(ctx context.Context, ct *callTrace, in wire.ExecuteInput, status string, out wire.ExecuteOutput) {
	d := ct.end(status)
	if status != "ok" && status != "error" {
		return
	}
	st := round.StatusOK
	if out.IsError {
		st = round.StatusError
	}
	ct.log.Info("call finished", "status", st, "duration_ms", d.Milliseconds())
	if a.Events == nil {
		return
	}
	scope := round.Scope{SessionID: in.SessionID, RunID: in.RunID, Round: in.Round, WorkflowID: in.WorkflowID}
	// Content is what history gets: a tool redacts secrets from it (T9), and
	// a large result is its preview by now.
	e := scope.CallFinished(time.Now().UTC(), in.CallID, in.Tool, st, out.Content, d)
	if err := a.Events.Publish(context.WithoutCancel(ctx), in.SessionID, []round.Event{e}); err != nil {
		ct.log.Warn("publishing call_finished failed; pass 3 publishes the result", "error", err)
	}
}

func (a *Activities) publishStarted(ctx context.Context, in wire.ExecuteInput, attempt int, log *slog.Logger) {
	scope := round.Scope{SessionID: in.SessionID, RunID: in.RunID, Round: in.Round, WorkflowID: in.WorkflowID}
	e := scope.CallStarted(time.Now().UTC(), in.CallID, in.Tool, attempt)
	if err := a.Events.Publish(ctx, in.SessionID, []round.Event{e}); err != nil {
		log.Warn("publishing call_started failed", "error", err)
	}
}

// PublishRound writes pass 3's results outside history: events to the
// session's stream, http_request GET results to the result cache (P3.4) and
// the messages to the session history. Failures are logged and counted; they
// never fail the round (K5).
func (a *Activities) PublishRound(ctx context.Context, in wire.PublishInput) error {
	for _, e := range in.Finished {
		a.logger().Info("call finished", "workflow_id", in.WorkflowID, "call_id", e.CallID, "tool", e.Tool, "status", e.Status, "duration_ms", e.DurationMS)
	}
	if a.Events != nil && len(in.Finished) > 0 {
		if err := a.Events.Publish(ctx, in.SessionID, in.Finished); err != nil {
			a.logger().Warn("publishing call_finished events failed; the round goes on", "workflow_id", in.WorkflowID, "error", err)
		}
	}
	if a.Events != nil && len(in.Events) > 0 {
		if err := a.Events.Publish(ctx, in.SessionID, in.Events); err != nil {
			a.logger().Warn("publishing events failed; the round goes on", "workflow_id", in.WorkflowID, "error", err)
		}
	}
	if a.Cache != nil {
		for _, w := range in.CacheWrites {
			var key func(sessionID, args string) string
			ttl := tools.ResultCacheTTL
			if a.Registry != nil {
				if def, ok := a.Registry.Lookup(w.Tool); ok {
					key, ttl = def.CacheKey, def.CacheTTL()
				}
			}
			if key == nil {
				continue // the tool keeps no results (any more): nothing to write
			}
			content := w.Content
			if w.ContentRef != "" {
				// Content is a preview; a cache hit must give the whole result.
				if a.Blobs == nil {
					continue
				}
				full, err := a.Blobs.Get(ctx, w.ContentRef)
				if err != nil {
					a.logger().Warn("reading a large result for the result cache failed; not cached", "workflow_id", in.WorkflowID, "error", err)
					continue
				}
				content = full
			}
			a.Cache.Set(ctx, key(in.SessionID, w.Args), content, ttl)
		}
	}
	if a.History != nil && len(in.History) > 0 {
		now := time.Now().UTC()
		recs := make([]tools.HistoryRecord, 0, len(in.History))
		for _, m := range in.History {
			r := tools.HistoryRecord{RunID: in.RunID, Round: in.Round, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Time: now}
			if len(m.ToolCalls) > 0 {
				r.ToolCalls, _ = json.Marshal(m.ToolCalls)
			}
			recs = append(recs, r)
		}
		if err := a.History.Append(ctx, in.SessionID, recs); err != nil {
			a.logger().Warn("appending the session history failed; the round goes on", "workflow_id", in.WorkflowID, "error", err)
		}
	}
	return nil
}

// CachedResult looks a user tool's call up in the session's result cache
// (K1 for user tools that declare cache_seconds, Y3), before the round
// sends it to the tool's queue.
func (a *Activities) CachedResult(ctx context.Context, in wire.CachedResultInput) (wire.CachedResultOutput, error) {
	if a.Cache == nil {
		return wire.CachedResultOutput{}, nil
	}
	content, ok := a.Cache.Get(ctx, tools.UserToolCacheKey(in.SessionID, in.Tool, in.SchemaHash, in.Args))
	return wire.CachedResultOutput{Found: ok, Content: content}, nil
}
