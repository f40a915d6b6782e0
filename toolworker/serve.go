package toolworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/toolround/toolround/internal/beat"
)

// Call is what a function learns of the call besides its arguments.
type Call struct {
	Tool string
	// OperationID is the call's idempotency key: the same for every
	// attempt of the call and unique to it (R). Empty for read-only tools.
	OperationID string
	CallID      string
	WorkflowID  string
	Attempt     int32
}

// ToolError is a failure the tool reports as its result: the round
// records it as an error and never retries it.
type ToolError struct {
	Message string
	Code    string
}

func (e *ToolError) Error() string { return e.Message }

// Text, JSON and Image make content items for a function that returns
// []Item.
func Text(s string) Item { return Item{Type: "text", Text: s} }

// JSON is a json item of v's encoding; v that does not encode is a text
// item that says so.
func JSON(v any) Item {
	b, err := json.Marshal(v)
	if err != nil {
		return Text("the result could not be written as JSON: " + err.Error())
	}
	return Item{Type: "json", JSON: b}
}

// Image is an image item of base64 data.
func Image(mimeType, base64Data string) Item {
	return Item{Type: "image", MIMEType: mimeType, Data: base64Data}
}

// Tool is one function served as a tool. Make it with New.
type Tool struct {
	decl      Decl
	run       func(ctx context.Context, call Call, args json.RawMessage) (any, error)
	reconcile func(ctx context.Context, call Call, args json.RawMessage) (*bool, error)
	err       error
}

// Decl is what the tool announces.
func (t Tool) Decl() Decl { return t.decl }

// Option sets a tool's declaration.
type Option func(*Tool)

// ReadOnly marks a tool that changes nothing (the default is a side
// effect).
func ReadOnly() Option { return func(t *Tool) { t.decl.Effect = EffectReadOnly } }

// Concurrent lets the round run the tool beside its other calls.
func Concurrent() Option { return func(t *Tool) { t.decl.Concurrent = true } }

// Cache keeps a read-only tool's results for the session for d (K1).
func Cache(d time.Duration) Option {
	return func(t *Tool) { t.decl.CacheSeconds = int(d / time.Second) }
}

// Description is the description the model reads.
func Description(s string) Option { return func(t *Tool) { t.decl.Description = s } }

// Subject names the string argument that rules match a glob over (T4).
func Subject(arg string) Option { return func(t *Tool) { t.decl.Subject = arg } }

// Timeouts sets the tool's start-to-close timeout, how long a call waits
// for a tool worker to take it, and its heartbeat timeout.
func Timeouts(timeout, scheduleToStart, heartbeat time.Duration) Option {
	return func(t *Tool) {
		t.decl.TimeoutSeconds = int(timeout / time.Second)
		t.decl.ScheduleToStartSeconds = int(scheduleToStart / time.Second)
		t.decl.HeartbeatSeconds = int(heartbeat / time.Second)
	}
}

// New declares fn as the tool name. A is the struct its arguments decode
// into; the tool's schema comes from it (its `json` and `jsonschema`
// tags). fn may return a string (one text item), []Item, nil, or any value
// that encodes as JSON (one json item); a *ToolError is an error result.
func New[A any](name string, fn func(ctx context.Context, call Call, args A) (any, error), opts ...Option) Tool {
	t := Tool{decl: Decl{
		Name: name, Effect: EffectSideEffect,
		TimeoutSeconds: 60, ScheduleToStartSeconds: 300, HeartbeatSeconds: 20,
	}}
	s, err := jsonschema.For[A](nil)
	if err != nil {
		t.err = fmt.Errorf("tool %s: schema of its arguments: %w", name, err)
		return t
	}
	t.decl.Parameters, err = json.Marshal(s)
	if err == nil {
		t.decl.SchemaHash, err = SchemaHash(t.decl.Parameters)
	}
	if err != nil {
		t.err = fmt.Errorf("tool %s: %w", name, err)
		return t
	}
	t.run = func(ctx context.Context, call Call, raw json.RawMessage) (any, error) {
		var a A
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, &ToolError{Message: "invalid arguments: " + err.Error(), Code: ErrorInvalidArguments}
		}
		return fn(ctx, call, a)
	}
	for _, o := range opts {
		o(&t)
	}
	return t
}

// Reconciles gives a side-effecting tool a reconciliation: after a lost
// attempt, fn says whether the call took effect (true), did not (false), or
// cannot tell (nil).
func Reconciles[A any](fn func(ctx context.Context, call Call, args A) (*bool, error)) Option {
	return func(t *Tool) {
		t.decl.Reconcile = true
		t.reconcile = func(ctx context.Context, call Call, raw json.RawMessage) (*bool, error) {
			var a A
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			return fn(ctx, call, a)
		}
	}
}

// Options are where Serve announces its tools and how its worker runs.
type Options struct {
	// ToolroundTaskQueue is toolround's worker's task queue, where the
	// catalog runs. Empty: TOOLROUND_TASK_QUEUE, else "toolround".
	ToolroundTaskQueue string
	// Worker are the Temporal worker's options.
	Worker worker.Options
}

// Errors of Serve and Announce.
var (
	// ErrRefused: the catalog refused a tool (a name taken, a queue the
	// toolround worker does not run); the error names each.
	ErrRefused = errors.New("toolworker: tools refused")
)

// Announce sends the tools' declarations to the queue's catalog, starting
// it when it does not run, and returns an error naming every refused tool.
func Announce(ctx context.Context, c client.Client, queue string, tools []Tool, opts Options) (AnnounceResult, error) {
	a := Announcement{V: WireVersion, Queue: queue, Worker: identity()}
	seen := map[string]bool{}
	for _, t := range tools {
		if t.err != nil {
			return AnnounceResult{}, t.err
		}
		if err := t.decl.Check(); err != nil {
			return AnnounceResult{}, err
		}
		if seen[t.decl.Name] {
			return AnnounceResult{}, fmt.Errorf("tool %s: declared twice", t.decl.Name)
		}
		seen[t.decl.Name] = true
		a.Tools = append(a.Tools, t.decl)
	}
	tq := opts.ToolroundTaskQueue
	if tq == "" {
		tq = os.Getenv("TOOLROUND_TASK_QUEUE")
	}
	if tq == "" {
		tq = "toolround"
	}
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: CatalogIDPrefix + queue, TaskQueue: tq,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, CatalogWorkflowType, Catalog{Queue: queue})
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: AnnounceUpdate, Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return AnnounceResult{}, fmt.Errorf("toolworker: announce the tools of queue %s: %w", queue, err)
	}
	var res AnnounceResult
	if err := h.Get(ctx, &res); err != nil {
		return AnnounceResult{}, fmt.Errorf("toolworker: announce the tools of queue %s: %w", queue, err)
	}
	if len(res.Refused) > 0 {
		lines := make([]string, len(res.Refused))
		for i, r := range res.Refused {
			lines[i] = "tool " + r.Name + " refused: " + r.Reason
		}
		return res, fmt.Errorf("%w:\n%s", ErrRefused, strings.Join(lines, "\n"))
	}
	return res, nil
}

// Serve announces the tools on queue and serves them until ctx ends.
func Serve(ctx context.Context, c client.Client, queue string, tools []Tool, opts Options) error {
	if _, err := Announce(ctx, c, queue, tools, opts); err != nil {
		return err
	}
	w := worker.New(c, queue, opts.Worker)
	Register(w, tools...)
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

// Register registers the tools' activities on w, for a program that runs
// its own worker (it then calls Announce itself).
func Register(w worker.Registry, tools ...Tool) {
	for _, t := range tools {
		t := t
		w.RegisterActivityWithOptions(t.activity, activity.RegisterOptions{Name: ActivityPrefix + t.decl.Name})
		if t.reconcile != nil {
			w.RegisterActivityWithOptions(t.reconcileActivity, activity.RegisterOptions{Name: ReconcilePrefix + t.decl.Name})
		}
	}
}

func identity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

func (t Tool) call(in CallInput) Call {
	return Call{Tool: t.decl.Name, OperationID: in.OperationID, CallID: in.CallID, WorkflowID: in.WorkflowID, Attempt: in.Attempt}
}

// activity runs one call: it checks the schema the round saw, heartbeats
// every third of the heartbeat timeout while the function runs, and turns
// what it returns into a CallResult.
func (t Tool) activity(ctx context.Context, in CallInput) (CallResult, error) {
	res, err := t.answer(ctx, in)
	if err == nil && activity.IsActivity(ctx) {
		res.Attempt = activity.GetInfo(ctx).Attempt
	}
	return res, err
}

func (t Tool) answer(ctx context.Context, in CallInput) (CallResult, error) {
	if in.SchemaHash != t.decl.SchemaHash { // a call without one was not checked by a round either
		return errorResult(ErrorSchemaChanged, "tool "+t.decl.Name+" changed since the round checked the call (schema "+t.decl.SchemaHash+", the round saw "+in.SchemaHash+"); it did not run"), nil
	}
	args := json.RawMessage(in.ArgsJSON)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if len(in.Secrets) > 0 {
		return t.answerSealed(ctx, in, args)
	}
	return t.respond(ctx, in, args)
}

// respond runs the function on args, heartbeating, and turns what it
// returns into a CallResult, or an error the round retries (read-only) or
// reports as unknown_outcome (a side effect).
func (t Tool) respond(ctx context.Context, in CallInput, args json.RawMessage) (CallResult, error) {
	ctx, stop := heartbeating(ctx, t.decl.HeartbeatSeconds)
	defer stop()
	out, err := t.run(ctx, t.call(in), args)
	var te *ToolError
	switch {
	case errors.As(err, &te):
		code := te.Code
		if code == "" {
			code = ErrorToolError
		}
		return errorResult(code, te.Message), nil
	case err != nil:
		if ctx.Err() != nil {
			return CallResult{}, temporal.NewCanceledError()
		}
		return CallResult{}, err // retried for a read-only tool; unknown_outcome for a side effect
	}
	return resultOf(out), nil
}

func (t Tool) reconcileActivity(ctx context.Context, in CallInput) (ReconcileResult, error) {
	args := json.RawMessage(in.ArgsJSON)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if len(in.Secrets) > 0 {
		_, values, refused := openSecrets(ctx, in.Secrets)
		if refused != nil {
			return ReconcileResult{V: WireVersion}, nil // cannot tell
		}
		var err error
		if args, err = withSecrets(args, values); err != nil {
			return ReconcileResult{V: WireVersion}, nil
		}
		took, err := t.reconcile(ctx, t.call(in), args)
		if err != nil {
			// Its message may hold a value: the round hears only that it failed.
			return ReconcileResult{V: WireVersion, Content: []Item{Text("the reconcile failed; its message is withheld, since the call sent secrets")}}, nil
		}
		return ReconcileResult{V: WireVersion, TookEffect: took}, nil
	}
	took, err := t.reconcile(ctx, t.call(in), args)
	if err != nil {
		return ReconcileResult{V: WireVersion, Content: []Item{Text(err.Error())}}, nil
	}
	return ReconcileResult{V: WireVersion, TookEffect: took}, nil
}

func errorResult(code, msg string) CallResult {
	return CallResult{V: WireVersion, Content: []Item{Text(msg)}, IsError: true, ErrorCode: code}
}

// resultOf is the CallResult of what a function returned.
func resultOf(out any) CallResult {
	var items []Item
	switch v := out.(type) {
	case nil:
		items = []Item{}
	case string:
		items = []Item{Text(v)}
	case Item:
		items = []Item{v}
	case []Item:
		items = v
	case []byte:
		return errorResult(ErrorBadResult, "the tool returned bytes; return a string, []Item or a value that encodes as JSON")
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return errorResult(ErrorBadResult, fmt.Sprintf("the tool's result (%T) could not be written as JSON: %v", v, err))
		}
		items = []Item{{Type: "json", JSON: b}}
	}
	r := CallResult{V: WireVersion, Content: items}
	if b, err := json.Marshal(r); err != nil {
		return errorResult(ErrorBadResult, "the tool's result could not be written as JSON: "+err.Error())
	} else if len(b) > MaxResultBytes {
		return errorResult(ErrorResultTooLarge, fmt.Sprintf("the tool's result is %d bytes, more than the %d a result may have", len(b), MaxResultBytes))
	}
	return r
}

// heartbeating heartbeats every third of seconds until stop, and returns
// the activity's context, which ends when the round cancels the call.
func heartbeating(ctx context.Context, seconds int) (context.Context, func()) {
	if seconds <= 0 || !activity.IsActivity(ctx) {
		return ctx, func() {}
	}
	return ctx, beat.Every(ctx, time.Duration(seconds)*time.Second/3)
}
