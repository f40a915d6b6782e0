// Package client is the Go API of toolround: submit a round and wait for its
// result, answer confirmations and questions, read what a round waits for.
// The starter command is a thin shell over it.
package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/toolround/toolround/round"
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
	// Prepare, when set, rewrites a round's input before it is submitted
	// (the starter seals store_secret values with it, so that they never
	// reach workflow history).
	Prepare func(*round.Input) error
	// MaxInputBytes bounds a round's encoded input. Default
	// DefaultMaxInputBytes.
	MaxInputBytes int
}

// DefaultMaxInputBytes is the largest round input the client submits.
// Temporal refuses a payload above 2 MiB (the blob size limit) and a round's
// result repeats its assistant message, so the input gets three quarters of
// that and the results the rest.
const DefaultMaxInputBytes = 3 << 19

// ErrInputTooLarge is returned for a round input above MaxInputBytes.
var ErrInputTooLarge = errors.New("round input too large")

// Client submits and steers rounds.
type Client struct {
	tc   tclient.Client
	opts Options
}

// New wraps a Temporal client.
func New(tc tclient.Client, opts Options) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = "toolround"
	}
	if opts.MaxInputBytes <= 0 {
		opts.MaxInputBytes = DefaultMaxInputBytes
	}
	return &Client{tc: tc, opts: opts}
}

// Temporal is the underlying Temporal client.
func (c *Client) Temporal() tclient.Client { return c.tc }

const memoInputHash = "toolround_input_sha256"

// ErrInputMismatch is returned when a round id is reused with another input.
var ErrInputMismatch = errors.New("a round with this id already ran with a different input")

// Start submits a round and returns its workflow id. Submitting the same round
// (same session, run and round number) again attaches to the first execution,
// running or finished, and never runs it twice.
func (c *Client) Start(ctx context.Context, in *round.Input) (tclient.WorkflowRun, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("invalid round input: %w", err)
	}
	// The hash is of the input as given: Prepare may seal values with a
	// random nonce, and a resubmission must still match.
	hash, err := InputHash(in)
	if err != nil {
		return nil, err
	}
	if c.opts.Prepare != nil {
		if err := c.opts.Prepare(in); err != nil {
			return nil, err
		}
	}
	if err := c.checkSize(in); err != nil {
		return nil, err
	}
	id := in.WorkflowID()
	run, err := c.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                c.opts.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{memoInputHash: hash},
		EnableEagerStart:                         c.opts.EagerStart,
		StaticSummary:                            fmt.Sprintf("round %d of run %s (%d calls)", in.Round, in.RunID, len(in.Assistant.ToolCalls)),
	}, round.WorkflowName, in)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		if err := c.checkSameInput(ctx, id, hash); err != nil {
			return nil, err
		}
		return c.tc.GetWorkflow(ctx, id, ""), nil
	}
	if err != nil {
		return nil, fmt.Errorf("start round %s: %w", id, err)
	}
	return run, nil
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

func (c *Client) checkSameInput(ctx context.Context, id, hash string) error {
	desc, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Errorf("describe round %s: %w", id, err)
	}
	p, ok := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[memoInputHash]
	if !ok {
		return nil
	}
	var have string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &have); err != nil {
		return nil
	}
	if have != hash {
		return fmt.Errorf("round %s: %w; use a new round number", id, ErrInputMismatch)
	}
	return nil
}

// InputHash identifies a round's input, to tell a resubmission from a clash.
func InputHash(in *round.Input) (string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encode round input: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Wait waits for a round's result and resolves large results.
func (c *Client) Wait(ctx context.Context, run tclient.WorkflowRun) (*round.Result, error) {
	var out round.Output
	if err := run.Get(ctx, &out); err != nil {
		return nil, fmt.Errorf("round %s failed: %s", run.GetID(), rootCause(err))
	}
	res := out.Result()
	c.Resolve(ctx, &res)
	return &res, nil
}

// Run submits a round and waits for its result.
func (c *Client) Run(ctx context.Context, in *round.Input) (*round.Result, error) {
	run, err := c.Start(ctx, in)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx, run)
}

// Result waits for the result of a round by workflow id.
func (c *Client) Result(ctx context.Context, workflowID string) (*round.Result, error) {
	return c.Wait(ctx, c.tc.GetWorkflow(ctx, workflowID, ""))
}

// Resolve replaces the previews of large results with their full content,
// in the results, the tool messages and the history. Without a blob store,
// or when a blob has expired, the preview stays.
func (c *Client) Resolve(ctx context.Context, res *round.Result) {
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
	if changed {
		assistant := round.Message{Role: "assistant"}
		if len(res.History) > 0 {
			assistant = res.History[0]
		}
		res.Messages = round.Messages(res.Results)
		res.History = round.History(assistant, res.Messages)
	}
}

// ConfirmOptions are the optional parts of a decision.
type ConfirmOptions struct {
	Reason    string
	Remember  bool
	AllowTurn bool
	// Pattern widens a remembered rule ("git *"); default: the call's subject.
	Pattern string
}

// Approve lets a waiting call run.
func (c *Client) Approve(ctx context.Context, workflowID, callID string, o ConfirmOptions) error {
	return c.confirm(ctx, workflowID, round.Confirm{CallID: callID, Approve: true, Reason: o.Reason, Remember: o.Remember, AllowTurn: o.AllowTurn, Pattern: o.Pattern})
}

// Deny skips a waiting call; its result reads "Skipped by user[. Reason: ...]".
func (c *Client) Deny(ctx context.Context, workflowID, callID string, o ConfirmOptions) error {
	return c.confirm(ctx, workflowID, round.Confirm{CallID: callID, Approve: false, Reason: o.Reason})
}

func (c *Client) confirm(ctx context.Context, workflowID string, s round.Confirm) error {
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", round.SignalConfirm, s); err != nil {
		return fmt.Errorf("confirm %s of %s: %w", s.CallID, workflowID, err)
	}
	return nil
}

// Answer answers an ask_user call.
func (c *Client) Answer(ctx context.Context, workflowID, callID string, answers []string) error {
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", round.SignalAnswer, round.Answer{CallID: callID, Answers: answers}); err != nil {
		return fmt.Errorf("answer %s of %s: %w", callID, workflowID, err)
	}
	return nil
}

// SubmitToolResult delivers the result of a client tool that the client ran.
func (c *Client) SubmitToolResult(ctx context.Context, workflowID string, r round.ToolResult) error {
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", round.SignalToolResult, r); err != nil {
		return fmt.Errorf("tool result %s of %s: %w", r.CallID, workflowID, err)
	}
	return nil
}

// Pending lists what a running round waits for.
func (c *Client) Pending(ctx context.Context, workflowID string) ([]round.Pending, error) {
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", round.QueryPending)
	if err != nil {
		return nil, fmt.Errorf("pending of %s: %w", workflowID, err)
	}
	var out []round.Pending
	if err := v.Get(&out); err != nil {
		return nil, fmt.Errorf("pending of %s: %w", workflowID, err)
	}
	return out, nil
}

// HasWorkers reports whether any worker polls the task queue, so that a
// client can tell a round that waits for a worker from one that runs.
func (c *Client) HasWorkers(ctx context.Context) (bool, error) {
	resp, err := c.tc.DescribeTaskQueue(ctx, c.opts.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return false, fmt.Errorf("describe task queue %s: %w", c.opts.TaskQueue, err)
	}
	return len(resp.GetPollers()) > 0, nil
}

// TaskQueue is the task queue the client submits rounds to.
func (c *Client) TaskQueue() string { return c.opts.TaskQueue }

// Progress tells which calls of a round are queued, running, waiting or done.
func (c *Client) Progress(ctx context.Context, workflowID string) (round.Progress, error) {
	var out round.Progress
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", round.QueryProgress)
	if err != nil {
		return out, fmt.Errorf("progress of %s: %w", workflowID, err)
	}
	if err := v.Get(&out); err != nil {
		return out, fmt.Errorf("progress of %s: %w", workflowID, err)
	}
	return out, nil
}

// Cancel cancels a round: running calls are cancelled, queued ones never
// start, and every call still gets a result.
func (c *Client) Cancel(ctx context.Context, workflowID string) error {
	if err := c.tc.CancelWorkflow(ctx, workflowID, ""); err != nil {
		return fmt.Errorf("cancel %s: %w", workflowID, err)
	}
	return nil
}

// rootCause strips Temporal's wrapping from a workflow failure.
func rootCause(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
