// Package client is the Go API of toolround: build a client with FromEnv, Run
// a round with an approval handler, or Start it, answer the calls Waiting
// reports and Wait for its result. The starter command is a thin shell over it.
package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools/secrets"
)

// BlobResolver fetches results kept outside history (cache.Blobs).
type BlobResolver interface {
	Get(ctx context.Context, ref string) (string, error)
}

// Options configure a Client.
type Options struct {
	// TaskQueue of the workers. Default "toolround".
	TaskQueue string
	// Blobs resolves large results; nil leaves their previews in place.
	Blobs BlobResolver
	// EagerStart asks the server to hand a new round straight to a worker
	// that shares this client in the same process, which saves the first
	// workflow task's trip through the server's queue (BENCHMARKS.md). It has
	// no effect without such a worker.
	EagerStart bool
	// Prepare, when set, rewrites a round's input before it is submitted,
	// after its store_secret values are sealed.
	Prepare func(*round.Input) error
	// Secrets locates the key, shared with the workers, that seals
	// store_secret values before a round is submitted and keys the digest
	// that lets a resubmitted round attach. Zero: secrets.ConfigFromEnv()
	// (TOOLROUND_SECRET_KEY, TOOLROUND_SECRET_KEY_FILE, else the default
	// key file, created on first use).
	Secrets secrets.Config
	// StoredSecrets are the sessions' stored secrets (a secrets.Store over
	// the workers' Redis; FromEnv sets it): a thinking block or reasoning
	// item that holds a value an earlier turn stored is sealed before the
	// round is submitted, as one holding the turn's own values is (F2).
	// Nil: only the turn's own values are looked for.
	StoredSecrets SecretValues
	// SecretData, when StoredSecrets is nil, is where the workers keep the
	// sessions' secrets (cache.Client.SessionData): StoredSecrets reads them
	// from it with the key of Secrets.
	SecretData secrets.Hashes
	// MaxInputBytes bounds a round's encoded input. Default
	// DefaultMaxInputBytes.
	MaxInputBytes int
	// Events reads sessions' event streams, for WithEvents (cache.Events).
	// Nil: Run refuses WithEvents.
	Events EventSource
}

// EventSource reads a session's event stream from a position ("0": from the
// start) and calls fn for each event until ctx ends.
type EventSource interface {
	Watch(ctx context.Context, sessionID, from string, fn func(round.Event) error) error
}

// DefaultMaxInputBytes is the largest round input the client submits.
// Temporal refuses a payload above 2 MiB (the blob size limit) and a round's
// result repeats its assistant message, so the input gets three quarters of
// that and the results the rest.
const DefaultMaxInputBytes = 3 << 19

// ErrInputTooLarge is returned for a round input above MaxInputBytes.
var ErrInputTooLarge error = &round.Error{Code: round.CodeTooLarge, Message: "round input too large"}

// Client submits and steers rounds.
type Client struct {
	tc    tclient.Client
	opts  Options
	close func() error
	// redisErr is why Redis did not answer when FromEnv opened it.
	redisErr error
	pace     pacing

	keyMu sync.Mutex
	key   []byte
}

// New returns a client over a Temporal client that the caller keeps and
// closes. Options left zero take their defaults; without Blobs large results
// stay previews (FromEnv sets it). store_secret values are always sealed,
// with the key that Options.Secrets locates.
func New(tc tclient.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = "toolround"
	}
	if opts.MaxInputBytes <= 0 {
		opts.MaxInputBytes = DefaultMaxInputBytes
	}
	c := &Client{tc: tc, opts: opts, pace: defaultPacing}
	if c.opts.StoredSecrets == nil && c.opts.SecretData != nil {
		c.opts.StoredSecrets = &sessionSecrets{c: c, data: c.opts.SecretData}
	}
	return c
}

// Temporal returns the underlying Temporal client.
func (c *Client) Temporal() tclient.Client { return c.tc }

// ErrInputMismatch is returned when a round id is reused with another input.
var ErrInputMismatch error = &round.Error{Code: round.CodeInputMismatch, Message: "a round with this id already ran with a different input"}

// Start submits a round and returns its workflow run at once, without waiting
// for it (GetID is the workflow id, toolround/<session>/<run>/<round>); pass
// the run to Wait for the result. Submitting the same round (same session,
// run and round number) again attaches to the first execution, running or
// finished, and never runs it twice. Unlike Run, Start submits a round even
// when no worker polls the task queue: it starts when one does.
func (c *Client) Start(ctx context.Context, in *round.Input) (tclient.WorkflowRun, error) {
	run, _, err := c.start(ctx, in)
	return run, err
}

// start is Start, and also returns the input the round started with (sealed
// and prepared), from which its result's history is rebuilt (H3); nil when
// the round had already started.
func (c *Client) start(ctx context.Context, in *round.Input) (tclient.WorkflowRun, *round.Input, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, round.Errorf(round.CodeBadRequest, "invalid round input: %w", err)
	}
	key, err := c.secretKey()
	if err != nil {
		return nil, nil, err
	}
	digest, err := InputDigest(key, in)
	if err != nil {
		return nil, nil, err
	}
	// Seal a copy: the caller's input stays as it was.
	sealed := *in
	if err := c.sealTurn(ctx, key, &sealed); err != nil {
		return nil, nil, err
	}
	given, in := in, &sealed
	if c.opts.Prepare != nil {
		if err := c.opts.Prepare(in); err != nil {
			return nil, nil, err
		}
	}
	if err := c.checkSize(in); err != nil {
		return nil, nil, err
	}
	id := in.WorkflowID()
	run, err := c.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                c.opts.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{memoInputDigest: digest},
		EnableEagerStart:                         c.opts.EagerStart,
		StaticSummary:                            fmt.Sprintf("round %d of run %s (%d calls)", in.Round, in.RunID, len(in.ToolCalls())),
		TypedSearchAttributes:                    temporal.NewSearchAttributes(searchSession.ValueSet(in.SessionID)), // the inbox finds it before its first task
	}, names.WorkflowName, in)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		if err := c.checkSameInput(ctx, id, key, given); err != nil {
			return nil, nil, err
		}
		return c.tc.GetWorkflow(ctx, id, ""), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start round %s: %w", id, err)
	}
	return run, in, nil
}

// checkSize measures the input as Temporal will (the data converter's
// payload), so that an oversized round gets one clear error instead of the
// server's "Blob data size exceeds limit" or a gRPC message-size error.
func (c *Client) checkSize(in *round.Input) error {
	p, err := converter.GetDefaultDataConverter().ToPayloads(in)
	if err != nil {
		return fmt.Errorf("encode round input: %w", err)
	}
	if n := proto.Size(p); n > c.opts.MaxInputBytes {
		return fmt.Errorf("%w: it is %s encoded and a round takes at most %s, because its result repeats the assistant message and Temporal accepts at most 2 MiB per payload; "+
			"pass large data in files instead of tool-call arguments", ErrInputTooLarge, mib(n), mib(c.opts.MaxInputBytes))
	}
	return nil
}

func mib(n int) string {
	s := strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".") + " MiB"
}

func (c *Client) checkSameInput(ctx context.Context, id string, key []byte, in *round.Input) error {
	desc, err := c.describe(ctx, id)
	if err != nil {
		return fmt.Errorf("describe round %s: %w", id, err)
	}
	memo := map[string]string{}
	for k, p := range desc.GetWorkflowExecutionInfo().GetMemo().GetFields() {
		var v string
		if converter.GetDefaultDataConverter().FromPayload(p, &v) == nil {
			memo[k] = v
		}
	}
	same, err := sameInput(memo, key, in)
	if err != nil {
		return err
	}
	if !same {
		return fmt.Errorf("round %s: %w; use a new round number", id, ErrInputMismatch)
	}
	return nil
}

// secretKey loads the key of Options.Secrets once.
func (c *Client) secretKey() ([]byte, error) {
	c.keyMu.Lock()
	defer c.keyMu.Unlock()
	if c.key != nil {
		return c.key, nil
	}
	cfg := c.opts.Secrets
	if cfg == (secrets.Config{}) {
		cfg = secrets.ConfigFromEnv()
	}
	key, err := cfg.LoadKey()
	if err != nil {
		return nil, fmt.Errorf("load the key that seals secrets and keys the input digest (clients and workers share it): %w", err)
	}
	c.key = key
	return key, nil
}

// Wait blocks until the round of run ends and returns its result, with large
// results resolved; an error when the round failed or ctx ended.
func (c *Client) Wait(ctx context.Context, run tclient.WorkflowRun) (*round.Result, error) {
	return c.wait(ctx, run, nil)
}

// wait is Wait for the round that started with in, when known: a round
// of today leaves its turn out of its output (H3), and the history is
// rebuilt from in, or else from the input in the round's own history.
func (c *Client) wait(ctx context.Context, run tclient.WorkflowRun, in *round.Input) (*round.Result, error) {
	var out round.Output
	if err := run.Get(ctx, &out); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, &roundGoneError{msg: fmt.Sprintf("round %s %v (or its history is past retention)", run.GetID(), ErrRoundNotFound),
				errs: []error{ErrRoundNotFound, err}}
		}
		var term *temporal.TerminatedError
		if errors.As(err, &term) {
			if reason := c.terminatedReason(ctx, run.GetID(), run.GetRunID()); reason != "" {
				return nil, fmt.Errorf("round %s was ended: %s", run.GetID(), reason)
			}
		}
		return nil, failure(fmt.Sprintf("round %s failed", run.GetID()), err)
	}
	if out.TurnLeftOut() {
		if in == nil {
			var err error
			if in, err = c.roundInput(ctx, run.GetID(), run.GetRunID()); err != nil {
				return nil, fmt.Errorf("round %s: read its input, from which its history is rebuilt: %w", run.GetID(), err)
			}
		}
		out = out.WithTurn(in)
	}
	res := out.Result()
	c.Resolve(ctx, &res)
	return &res, nil
}

// roundInput is the input a round started with: the first event of its
// history.
func (c *Client) roundInput(ctx context.Context, workflowID, runID string) (*round.Input, error) {
	it := c.tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, fmt.Errorf("no history")
	}
	e, err := it.Next()
	if err != nil {
		return nil, err
	}
	a := e.GetWorkflowExecutionStartedEventAttributes()
	if a == nil {
		return nil, fmt.Errorf("the first event is %s, not the start", e.GetEventType())
	}
	var in round.Input
	if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in); err != nil {
		return nil, fmt.Errorf("decode the input: %w", err)
	}
	return &in, nil
}

// Result blocks until the round with this workflow id ends and returns its
// result, as Wait does.
func (c *Client) Result(ctx context.Context, workflowID string) (*round.Result, error) {
	return c.Wait(ctx, c.tc.GetWorkflow(ctx, workflowID, ""))
}

// Resolve replaces the previews of large results with their full content,
// in the results, the tool messages and the history, and loads the bytes of
// the results' images (up to round.MaxImageBytes each), which the messages
// then carry in the round's format (F2). Without a blob store, or when a
// blob has expired, the preview and the image's reference stay. A thinking block or
// reasoning item that the round keeps sealed (it holds a store_secret
// value, F2) is opened in the history, so that the turn goes back to the
// model as it wrote it; without the key it stays sealed.
func (c *Client) Resolve(ctx context.Context, res *round.Result) {
	c.openThoughts(res)
	if c.opts.Blobs == nil {
		return
	}
	changed := false
	for i := range res.Results {
		r := &res.Results[i]
		if r.ContentRef == "" {
			continue
		}
		if content, err := c.opts.Blobs.Get(ctx, r.ContentRef); err == nil {
			r.Content, changed = content, true
		}
	}
	for i := range res.Results {
		changed = c.loadImages(ctx, &res.Results[i]) || changed
	}
	if changed {
		// The history is the turn, then the messages, in the round's format.
		turn := []round.Message{{Role: "assistant"}}
		if n := len(res.History) - len(res.Messages); n > 0 {
			turn = res.History[:n]
		}
		res.Messages = res.Format.Messages(res.Results)
		res.History = append(slices.Clone(turn), res.Messages...)
	}
}

// loadImages loads the bytes of r's images that the worker kept in the
// blob store, up to round.MaxImageBytes each (F2); it reports whether it
// loaded any. The results' images are replaced, never written to.
func (c *Client) loadImages(ctx context.Context, r *round.CallResult) bool {
	var ims []round.Image
	for i, im := range r.Images {
		if im.Ref == "" || len(im.Data) > 0 || im.Size > round.MaxImageBytes {
			continue
		}
		s, err := c.opts.Blobs.Get(ctx, im.Ref)
		if err != nil {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue
		}
		if ims == nil {
			ims = slices.Clone(r.Images)
		}
		ims[i].Data = data
	}
	if ims == nil {
		return false
	}
	r.Images = ims
	return true
}

// ConfirmOptions are the optional parts of a decision.
type ConfirmOptions struct {
	// ApprovalID is the PendingCall's: the decision applies only to the
	// arguments the person saw (T1). A decision without it, or with an older
	// one, fails with ErrStaleApproval.
	ApprovalID string
	Reason     string
	Remember   bool
	AllowTurn  bool
	// Pattern widens a remembered rule ("git *"); default: the call's exact
	// arguments.
	Pattern string
	// By and Via say who decided and through what (T2): claims, recorded
	// with the decision, unless Verified. Via defaults to "api".
	By  string
	Via string
	// Verified says that the caller authenticated By (the console does,
	// from its tokens).
	Verified bool
	// Args, when set, are the arguments the call runs with instead of the
	// model's (approve only); they must pass the tool's schema, else
	// ErrInvalidArgs.
	Args json.RawMessage
	// WaitID is the PendingCall's wait_id (B1): set, the decision applies
	// only to that wait of the call, else ErrStaleWait.
	WaitID string
	// UpTo bounds the remembered rule to that many matching calls of the
	// run (B2); it needs Remember.
	UpTo int64
	// Scope is the remembered rule's scope (T12): "read-only" (a command
	// it approves sees the workspace read-only) or "write"; empty, the
	// round's default for the approved call. It needs Remember.
	Scope string
	// Nonce is a signed link's nonce (N2): the round refuses one it has
	// recorded (ErrLinkUsed).
	Nonce string
}

// Errors of Approve and Deny, from the round's answer (T1); match them with
// errors.Is. The round refuses with an application error whose type is the
// code (round.CodeNotWaiting, ...), and the client rebuilds the error of
// that code.
var (
	// ErrNotWaiting: the call does not wait for a decision (no such call,
	// already decided, expired, or the round is past its gate).
	ErrNotWaiting error = &round.Error{Code: round.CodeNotWaiting, Message: "the call does not wait for a decision"}
	// ErrStaleApproval: the approval_id is not the waiting call's; read
	// Pending again.
	ErrStaleApproval error = &round.Error{Code: round.CodeStaleApproval, Message: "the approval_id is not the waiting call's"}
	// ErrInvalidArgs: the edited arguments fail the tool's schema.
	ErrInvalidArgs error = &round.Error{Code: round.CodeInvalidArgs, Message: "the edited arguments fail the tool's schema"}
	// ErrAlreadyDecided: the call already got this decision, with this
	// approval_id; nothing changed and the first decision stands (a retry
	// of a request whose answer was lost).
	ErrAlreadyDecided error = &round.Error{Code: round.CodeAlreadyDecided, Message: "the call already got this decision"}
	// ErrStaleWait: the wait_id is not the call's current wait (B1).
	ErrStaleWait error = &round.Error{Code: round.CodeStaleWait, Message: "the wait_id is not the call's current wait"}
	// ErrInvalidDecision: the decision carries what its wait does not
	// take: remember, pattern, allow_turn, args or up_to on a call past a
	// run limit, or up_to without remember (B1, B2).
	ErrInvalidDecision error = &round.Error{Code: round.CodeInvalidDecision, Message: "the decision does not fit the wait"}
	// ErrInvalidPattern: the pattern to remember cannot be a rule for the
	// call's tool (T4); nothing was decided.
	ErrInvalidPattern error = &round.Error{Code: round.CodeInvalidPattern, Message: "the pattern cannot be a rule for the tool"}
	// ErrInvalidAnswer: an elicitation answer whose content fails the
	// requested schema, or whose action is not accept, decline or cancel
	// (E1).
	ErrInvalidAnswer error = &round.Error{Code: round.CodeInvalidAnswer, Message: "the answer does not fit the request"}
	// ErrLinkUsed: the signed link has decided already (N2).
	ErrLinkUsed error = &round.Error{Code: round.CodeLinkUsed, Message: "the link has decided already"}
)

// refusals are the sentinels of the codes a round refuses a request with.
var refusals = map[round.ErrorCode]error{
	round.CodeNotWaiting: ErrNotWaiting, round.CodeStaleApproval: ErrStaleApproval, round.CodeInvalidArgs: ErrInvalidArgs,
	round.CodeAlreadyDecided: ErrAlreadyDecided, round.CodeStaleWait: ErrStaleWait, round.CodeInvalidDecision: ErrInvalidDecision,
	round.CodeLinkUsed: ErrLinkUsed, round.CodeInvalidAnswer: ErrInvalidAnswer, round.CodeInvalidPattern: ErrInvalidPattern,
}

// Approve lets a waiting call run. It returns once the round has applied
// the decision; a round that refuses it gives ErrNotWaiting,
// ErrStaleApproval or ErrInvalidArgs, a round that is not running
// serviceerror.NotFound.
func (c *Client) Approve(ctx context.Context, workflowID, callID string, o ConfirmOptions) error {
	return c.confirm(ctx, workflowID, round.Confirm{
		CallID: callID, Approve: true, Reason: o.Reason, Remember: o.Remember, AllowTurn: o.AllowTurn, Pattern: o.Pattern,
		ApprovalID: o.ApprovalID, By: o.By, Via: o.Via, Verified: o.Verified, Args: o.Args, WaitID: o.WaitID, UpTo: o.UpTo,
		Scope: o.Scope, Nonce: o.Nonce,
	})
}

// Deny skips a waiting call; its result reads "Skipped by user[. Reason: ...]".
// It returns as Approve does.
func (c *Client) Deny(ctx context.Context, workflowID, callID string, o ConfirmOptions) error {
	return c.confirm(ctx, workflowID, round.Confirm{
		CallID: callID, Approve: false, Reason: o.Reason, ApprovalID: o.ApprovalID, By: o.By, Via: o.Via, Verified: o.Verified, WaitID: o.WaitID, Nonce: o.Nonce,
	})
}

// confirm sends the decision as the confirm update, so that its answer is
// the round's: applied, or refused with a reason, never lost in a race.
func (c *Client) confirm(ctx context.Context, workflowID string, s round.Confirm) error {
	if s.Via == "" {
		s.Via = "api"
	}
	return c.update(ctx, workflowID, names.UpdateConfirm, "confirm", s.CallID, s, nil)
}

// update sends one of the round's validated updates (confirm, extend,
// answer) and waits for its answer: a round that has ended gives
// ErrRoundEnded or ErrRoundNotFound, a refusal its sentinel (confirmError).
func (c *Client) update(ctx context.Context, workflowID, name, verb, callID string, arg, out any) error {
	h, err := c.tc.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: name, Args: []any{arg},
		WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, out)
	}
	if err != nil {
		if err := c.missingRound(ctx, workflowID, err); err != nil {
			return err
		}
		return fmt.Errorf("%s %s of %s: %w", verb, callID, workflowID, confirmError(err))
	}
	return nil
}

// unknownUpdate reports whether the round has no handler of the update: a
// round that a build before it runs.
func unknownUpdate(err error) bool {
	return strings.Contains(err.Error(), "unknown update")
}

// confirmError turns the confirm and extend updates' rejections into
// ErrNotWaiting, ErrStaleApproval, ErrInvalidArgs and ErrAlreadyDecided,
// or an error of CodeBadRequest, with the round's explanation.
func confirmError(err error) error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return err
	}
	if sentinel, ok := refusals[round.ErrorCode(app.Type())]; ok {
		return &round.Error{Code: round.ErrorCode(app.Type()), Message: sentinel.Error() + ": " + app.Message(), Err: app}
	}
	if app.Type() == string(round.CodeBadRequest) {
		return &round.Error{Code: round.CodeBadRequest, Message: app.Message(), Err: app}
	}
	return err
}

// Extend adds d (whole seconds, at least one) to a waiting call's deadline,
// at most 7 days after it started to wait (T3). It returns once the round
// has moved the deadline; a call that does not wait for a decision gives
// ErrNotWaiting, a round that is not running serviceerror.NotFound.
func (c *Client) Extend(ctx context.Context, workflowID, callID string, d time.Duration) error {
	_, err := c.ExtendDeadline(ctx, workflowID, callID, d)
	return err
}

// ExtendDeadline is Extend, and answers what the round added and the
// deadline it set: the 7-day cap may let in less than d, down to nothing.
// A round of an older build does not say: its answer is a zero Extended.
func (c *Client) ExtendDeadline(ctx context.Context, workflowID, callID string, d time.Duration) (round.Extended, error) {
	secs := int64(d / time.Second)
	if secs < 1 {
		return round.Extended{}, &round.Error{Code: round.CodeBadRequest, Message: fmt.Sprintf("extend %s of %s: %v is less than a second", callID, workflowID, d)}
	}
	var res round.Extended
	err := c.update(ctx, workflowID, names.UpdateExtend, "extend", callID, round.Extend{CallID: callID, Seconds: secs}, &res)
	return res, err
}

// Answer answers an ask_user call; it returns once the answer is sent.
func (c *Client) Answer(ctx context.Context, workflowID, callID string, answers []string) error {
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", names.SignalAnswer, round.Answer{CallID: callID, Answers: answers}); err != nil {
		if err := c.missingRound(ctx, workflowID, err); err != nil {
			return err
		}
		return fmt.Errorf("answer %s of %s: %w", callID, workflowID, err)
	}
	return nil
}

// AnswerElicitation answers a call whose MCP server asks for input (a
// PendingCall of KindElicitation, E1) by the answer update: a.Action
// accept with a.Content (the requested schema's values), decline or
// cancel. It returns once the round has the answer; the round refuses a
// call that does not wait for one (ErrNotWaiting), another wait's wait_id
// (ErrStaleWait) and content that fails the schema (ErrInvalidAnswer).
func (c *Client) AnswerElicitation(ctx context.Context, workflowID string, a round.ElicitAnswer) error {
	if a.Via == "" {
		a.Via = "api"
	}
	return c.update(ctx, workflowID, names.UpdateAnswer, "answer", a.CallID, a, nil)
}

// SubmitToolResult delivers the result of a client tool that the client
// ran, by the tool_result update (Y5): it returns once the round has it,
// and the round refuses a call that does not wait for a result
// (ErrNotWaiting) and another wait's r.WaitID (ErrStaleWait). A round of a
// build without the update gets the signal, as before.
func (c *Client) SubmitToolResult(ctx context.Context, workflowID string, r round.ToolResult) error {
	err := c.update(ctx, workflowID, names.UpdateToolResult, "tool result", r.CallID, r, nil)
	if err == nil || !unknownUpdate(err) {
		return err
	}
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", names.SignalToolResult, r); err != nil {
		if err := c.missingRound(ctx, workflowID, err); err != nil {
			return err
		}
		return fmt.Errorf("tool result %s of %s: %w", r.CallID, workflowID, err)
	}
	return nil
}

// Pending returns the calls a round waits for now (empty when nothing waits
// or the round has ended). For a round that does not exist (yet) the error
// matches ErrRoundNotFound; when no worker polls its task queue, ErrNoWorker.
// To be told as calls start to wait, use Waiting or Run's handlers instead.
func (c *Client) Pending(ctx context.Context, workflowID string) ([]PendingCall, error) {
	running, tq, err := c.describeRound(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	if !running {
		return []PendingCall{}, nil
	}
	if err := c.requireWorkerOn(ctx, tq); err != nil {
		return nil, err
	}
	out, err := c.queryPending(ctx, workflowID)
	if err != nil {
		return nil, fmt.Errorf("pending of %s: %w", workflowID, err)
	}
	return out, nil
}

// HasWorkers returns whether any worker polls the client's task queue, so
// that a client can tell a round that waits for a worker from one that runs;
// an error when the server cannot say.
func (c *Client) HasWorkers(ctx context.Context) (bool, error) {
	return c.hasWorkers(ctx, c.opts.TaskQueue)
}

func (c *Client) hasWorkers(ctx context.Context, taskQueue string) (bool, error) {
	resp, err := c.tc.DescribeTaskQueue(ctx, taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return false, fmt.Errorf("describe task queue %s: %w", taskQueue, err)
	}
	return len(resp.GetPollers()) > 0, nil
}

// TaskQueue returns the task queue the client submits rounds to.
func (c *Client) TaskQueue() string { return c.opts.TaskQueue }

// Progress returns which calls of a round are queued, running, waiting or
// done. Its errors match ErrRoundNotFound and ErrNoWorker as Pending's do.
func (c *Client) Progress(ctx context.Context, workflowID string) (round.Progress, error) {
	var out round.Progress
	_, tq, err := c.describeRound(ctx, workflowID)
	if err != nil {
		return out, err
	}
	if err := c.requireWorkerOn(ctx, tq); err != nil {
		return out, err
	}
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", names.QueryProgress)
	if err != nil {
		return out, fmt.Errorf("progress of %s: %w", workflowID, err)
	}
	if err := v.Get(&out); err != nil {
		return out, fmt.Errorf("progress of %s: %w", workflowID, err)
	}
	return out, nil
}

// Cancel asks a round to stop and returns once the request is recorded:
// running calls are cancelled, queued ones never start, and every call still
// gets a result (Wait returns it). A round that no worker has taken, on a
// task queue no worker polls, is ended at once instead: nothing of it ran,
// and Wait says so.
func (c *Client) Cancel(ctx context.Context, workflowID string) error {
	if err := c.tc.CancelWorkflow(ctx, workflowID, ""); err != nil {
		if err := c.missingRound(ctx, workflowID, err); err != nil {
			return err
		}
		return fmt.Errorf("cancel %s: %w", workflowID, err)
	}
	return c.endUntaken(ctx, workflowID)
}

// missingRound reads a NotFound answer to a signal, an update or a cancel:
// the round does not exist (the same error as Pending's) or has ended. It
// returns nil for any other error.
func (c *Client) missingRound(ctx context.Context, workflowID string, err error) error {
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return nil
	}
	if _, _, derr := c.describeRound(ctx, workflowID); derr != nil {
		if errors.Is(derr, ErrRoundNotFound) {
			return &roundGoneError{msg: derr.Error(), errs: []error{ErrRoundNotFound, err}}
		}
		return nil
	}
	return &roundGoneError{msg: fmt.Sprintf("round %s %v", workflowID, ErrRoundEnded), errs: []error{ErrRoundEnded, err}}
}

// roundGoneError reads as Pending's line and matches both the sentinel and
// Temporal's serviceerror.NotFound, as the methods' callers expect.
type roundGoneError struct {
	msg  string
	errs []error
}

func (e *roundGoneError) Error() string   { return e.msg }
func (e *roundGoneError) Unwrap() []error { return e.errs }

// failure is the error of a workflow that failed: what, then its root
// cause; a failure for an input the workflow refused (round.ErrTypeInvalidInput)
// has CodeBadRequest.
func failure(what string, err error) error {
	msg := what + ": " + rootCause(err)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == round.ErrTypeInvalidInput {
		return &round.Error{Code: round.CodeBadRequest, Message: msg}
	}
	return errors.New(msg)
}

// rootCause strips Temporal's wrapping from a workflow failure.
func rootCause(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return text.RootMessage(err)
}

// describe returns the server's description of a round (nil with the error
// when it cannot be had).
func (c *Client) describe(ctx context.Context, workflowID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.tc.DescribeWorkflow(ctx, workflowID, "")
	if err != nil || d == nil {
		return nil, err
	}
	return d.RawResponse, nil
}
