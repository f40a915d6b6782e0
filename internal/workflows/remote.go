package workflows

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/toolworker"
)

// startRemote runs a user tool's call as the activity toolround.tool.<name>
// on its tool worker's queue (Y1a, Y3): the schema hash pass 1 saw goes
// with it, a side-effecting call gets one attempt and its operation id, and
// a call no tool worker takes within the tool's schedule-to-start timeout
// ends tool_unavailable (Y4).
func (r *run) startRemote(ctx workflow.Context, c *Call, ti ToolInfo) workflow.Future {
	// Neither flag of the worker's own activities (c.activity,
	// c.selfPublished): a tool worker publishes no events, so the round
	// publishes the call's start and finish itself.
	rem := ti.Remote
	in := toolworker.CallInput{
		V: toolworker.WireVersion, Tool: c.Tool, ArgsJSON: Canonical(c.Args), CallID: c.CallID,
		WorkflowID: r.scope.WorkflowID, SchemaHash: rem.SchemaHash, Attempt: 1,
	}
	if in.ArgsJSON == "" {
		in.ArgsJSON = "{}"
	}
	if c.Facts.Effect != tools.ReadOnly {
		in.OperationID = round.OperationID(r.scope.WorkflowID, workflow.GetInfo(ctx).WorkflowExecution.RunID, c.CallID)
	}
	opts := workflow.ActivityOptions{
		ActivityID:             c.CallID,
		TaskQueue:              rem.Queue,
		ScheduleToStartTimeout: rem.ScheduleToStart,
		StartToCloseTimeout:    ti.Timeout,
		HeartbeatTimeout:       rem.Heartbeat,
		RetryPolicy:            retryPolicy(ti, c),
		Summary:                c.Tool + " " + c.CallID + " on " + rem.Queue,
	}
	out, settable := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		if ti.Cached && c.Facts.Effect == tools.ReadOnly {
			lo := workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}}
			var hit wire.CachedResultOutput
			err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, lo), wire.ActivityCachedResult,
				wire.CachedResultInput{SessionID: r.scope.SessionID, Tool: c.Tool, SchemaHash: rem.SchemaHash, Args: in.ArgsJSON}).Get(ctx, &hit)
			if err == nil && hit.Found {
				note := fmt.Sprintf("[from cache: the same call was answered in this session within the last %s]\n", time.Duration(rem.CacheSeconds)*time.Second)
				settable.Set(r.offloadRemote(ctx, wire.ExecuteOutput{Content: note + hit.Content, FromCache: true, Attempt: 1}), nil)
				return
			}
		}
		sent := approval.SecretNames(in.ArgsJSON)
		if len(sent) > 0 && Version(ctx, changeToolSecrets, 1) >= 1 {
			sealed, refused := r.sealToolSecrets(ctx, rem.Queue, sent)
			if refused != nil {
				settable.Set(*refused, nil)
				return
			}
			in.Secrets = sealed
		} else {
			sent = nil
		}
		var res toolworker.CallResult
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), toolworker.ActivityPrefix+c.Tool, in).Get(ctx, &res)
		if len(sent) > 0 {
			res, err = r.openToolAnswer(ctx, rem.Queue, sent, res, err)
		}
		var timeout *temporal.TimeoutError
		switch {
		case errors.As(err, &timeout) && timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			settable.Set(wire.ExecuteOutput{
				IsError: true, ErrorCode: round.ErrorCodeToolUnavailable,
				Content: fmt.Sprintf("no tool worker of queue %s took the call within %s, so it did not run; start the tool worker that serves %s and call it again", rem.Queue, rem.ScheduleToStart, c.Tool),
			}, nil)
		case err != nil && rem.Reconcile && c.Facts.Effect != tools.ReadOnly && !temporal.IsCanceledError(err):
			settable.Set(r.reconcileRemote(ctx, c, ti, in, err))
		case err != nil:
			settable.Set(nil, err)
		default:
			settable.Set(r.offloadRemote(ctx, remoteOutput(res)), nil)
		}
	})
	return out
}

// offloadRemote keeps a user tool's result as a built-in's is kept (Y3):
// content above the round's LargeResult, and every image, go to the blob
// store (the OffloadResult local activity), leaving a preview and a
// reference. A round whose snapshot has no LargeResult (recorded before)
// keeps them in its result. When the store fails, the result stays whole:
// its tool worker's answer is within the wire's limit
// (toolworker.MaxResultBytes), and the round's budget (fit) still applies.
func (r *run) offloadRemote(ctx workflow.Context, out wire.ExecuteOutput) wire.ExecuteOutput {
	if r.snap.LargeResult <= 0 || (len(out.Content) <= r.snap.LargeResult && len(out.Images) == 0) {
		return out
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "store a large result",
	})
	var kept wire.ExecuteOutput
	if err := workflow.ExecuteLocalActivity(lctx, wire.ActivityOffloadResult, out).Get(lctx, &kept); err != nil {
		workflow.GetLogger(ctx).Warn("storing a user tool's large result failed; the round keeps it", "error", err)
		return out
	}
	return kept
}

// remoteOutput is the round's output of a tool worker's result: its text
// items and JSON items as text, one line per image with the image beside.
func remoteOutput(res toolworker.CallResult) wire.ExecuteOutput {
	out := wire.ExecuteOutput{IsError: res.IsError, ErrorCode: res.ErrorCode, Attempt: int(res.Attempt)}
	if res.IsError && out.ErrorCode == "" {
		out.ErrorCode = toolworker.ErrorToolError
	}
	if res.V != toolworker.WireVersion {
		return wire.ExecuteOutput{IsError: true, ErrorCode: toolworker.ErrorBadResult,
			Content: fmt.Sprintf("the tool worker answered with wire version %d; this worker reads %d", res.V, toolworker.WireVersion)}
	}
	var parts []string
	for _, it := range res.Content {
		switch it.Type {
		case "text":
			parts = append(parts, it.Text)
		case "json":
			parts = append(parts, string(it.JSON))
		case "image":
			data, err := base64.StdEncoding.DecodeString(it.Data)
			if err != nil {
				parts = append(parts, "[an image whose data is not base64]")
				continue
			}
			out.Images = append(out.Images, round.Image{MIMEType: it.MIMEType, Size: len(data), Data: data})
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", it.MIMEType, len(data)))
		default:
			parts = append(parts, fmt.Sprintf("[content of unknown type %q]", it.Type))
		}
	}
	out.Content = strings.Join(parts, "\n")
	return out
}

// approvalID is the call's approval_id (T1); a user tool's also covers the
// schema hash the round saw (Y3).
func (r *run) approvalID(c *Call) string {
	if h := r.schemaHash(c.Tool); h != "" {
		return approval.IDWithSchema(r.scope.WorkflowID, c.CallID, c.Tool, Canonical(c.Args), h)
	}
	return approval.ID(r.scope.WorkflowID, c.CallID, c.Tool, Canonical(c.Args))
}

// remoteOf is where a user tool the round snapshot runs, else nil.
func (r *run) remoteOf(tool string) *tools.Remote {
	if ti, ok := r.snap.Tools[tool]; ok {
		return ti.Remote
	}
	return nil
}

// schemaHash is the schema hash of a user tool the round snapshot, else "".
func (r *run) schemaHash(tool string) string {
	if rem := r.remoteOf(tool); rem != nil {
		return rem.SchemaHash
	}
	return ""
}

// queueOf is a user tool's task queue, else "".
func (r *run) queueOf(tool string) string {
	if rem := r.remoteOf(tool); rem != nil {
		return rem.Queue
	}
	return ""
}

// schemaRules are rules less those remembered for a user tool under
// another schema than the one the round saw (Y3): such a call asks again.
func (r *run) schemaRules(rules []approval.Rule) []approval.Rule {
	var out []approval.Rule
	for _, rule := range rules {
		if rule.Schema != "" && rule.Schema != r.schemaHash(rule.Tool) {
			continue
		}
		out = append(out, rule)
	}
	return out
}

// reconcileRemote asks a side-effecting user tool whose attempt was lost
// whether the call took effect (toolround.reconcile.<name>, R for user
// tools): yes, and the call is ok (reconciled); no, and it is an error
// that says it did not run (it is not run again); a tool that cannot tell
// leaves it unknown_outcome, with its answer.
func (r *run) reconcileRemote(ctx workflow.Context, c *Call, ti ToolInfo, in toolworker.CallInput, lost error) (any, error) {
	rem := ti.Remote
	opts := workflow.ActivityOptions{
		ActivityID:             c.CallID + "-reconcile",
		TaskQueue:              rem.Queue,
		ScheduleToStartTimeout: rem.ScheduleToStart,
		StartToCloseTimeout:    ti.Timeout,
		HeartbeatTimeout:       rem.Heartbeat,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:                "reconcile " + c.Tool + " " + c.CallID,
	}
	var res toolworker.ReconcileResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), toolworker.ReconcilePrefix+c.Tool, in).Get(ctx, &res)
	why := "the tool's reconcile could not tell whether it took effect"
	switch {
	case err != nil:
		why = "the tool's reconcile failed: " + lostHow(err)
	case res.TookEffect != nil && *res.TookEffect:
		out := remoteOutput(toolworker.CallResult{V: res.V, Content: res.Content})
		out.Content = strings.TrimSpace("the attempt was lost, and the tool's reconcile found that the call took effect.\n" + out.Content)
		out.Reconciled, out.Attempt = true, 1
		return out, nil
	case res.TookEffect != nil:
		return wire.ExecuteOutput{IsError: true, Attempt: 1,
			Content: "the attempt was lost (" + lostHow(lost) + ") before it took effect, as the tool's reconcile found; it was not run again: call it again to run it"}, nil
	case len(res.Content) > 0:
		why += ": " + remoteOutput(toolworker.CallResult{V: res.V, Content: res.Content}).Content
	}
	return nil, &unreconciled{err: lost, why: why}
}

// sealToolSecrets seals, for the tool workers of queue, the stored values
// of the secrets a call sends (Y3): the activity input holds them sealed,
// never plain (T9). A secret the session has not stored, or a store that
// cannot be read, is the call's error result, and the call does not run.
func (r *run) sealToolSecrets(ctx workflow.Context, queue string, names []string) (map[string]string, *wire.ExecuteOutput) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "seal the secrets a call sends",
	})
	var out wire.ToolSecretsOutput
	err := workflow.ExecuteLocalActivity(lctx, wire.ActivityToolSecrets,
		wire.ToolSecretsInput{SessionID: r.scope.SessionID, Queue: queue, Names: names}).Get(lctx, &out)
	switch {
	case err != nil:
		return nil, &wire.ExecuteOutput{IsError: true,
			Content: "the secrets the call sends could not be read, so it did not run: " + text.RootMessage(err)}
	case out.Missing != "":
		return nil, &wire.ExecuteOutput{IsError: true,
			Content: fmt.Sprintf("secret %s is missing, so the call did not run: store it with store_secret(name=%q, value=...), then call it again", out.Missing, out.Missing)}
	}
	return out.Sealed, nil
}

// openToolAnswer opens what a tool worker answered to a call that sent
// secrets: it sealed its result, or its failure's message, for its queue,
// and the OpenToolResult local activity opens it and redacts the values
// the call sent (T9), so that only the redacted form enters history. An
// answer that does not open is an error result that says so.
func (r *run) openToolAnswer(ctx workflow.Context, queue string, names []string, res toolworker.CallResult, err error) (toolworker.CallResult, error) {
	var app *temporal.ApplicationError
	sealed := res.Sealed
	if err != nil {
		if !errors.As(err, &app) || !secrets.IsSealed(app.Message()) {
			return res, err
		}
		sealed = app.Message()
	} else if sealed == "" {
		return res, nil
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 200 * time.Millisecond},
		Summary:             "open and redact a tool's answer",
	})
	var opened toolworker.CallResult
	oerr := workflow.ExecuteLocalActivity(lctx, wire.ActivityOpenToolResult, wire.OpenToolResultInput{
		SessionID: r.scope.SessionID, Queue: queue, Names: names, Sealed: sealed, Failure: err != nil,
	}).Get(lctx, &opened)
	if oerr != nil {
		return toolworker.CallResult{V: toolworker.WireVersion, IsError: true, ErrorCode: toolworker.ErrorBadResult,
			Content: []toolworker.Item{toolworker.Text("the tool worker's sealed answer could not be opened: " + text.RootMessage(oerr))}}, nil
	}
	if err != nil {
		msg := ""
		if len(opened.Content) > 0 {
			msg = opened.Content[0].Text
		}
		return res, temporal.NewApplicationErrorWithOptions(msg, app.Type(), temporal.ApplicationErrorOptions{NonRetryable: app.NonRetryable()})
	}
	opened.Attempt = res.Attempt
	return opened, nil
}

// sendsToolSecrets reports whether a call of the round sends a user tool
// {{secret:NAME}} values, and the round runs with changeToolSecrets: such
// a call then always asks (Y3, T5), as an http_request that sends one.
// Rounds without such a call ask for no version.
func (r *run) sendsToolSecrets(ctx workflow.Context) bool {
	for i := range r.calls {
		c := &r.calls[i]
		if r.queueOf(c.Tool) != "" && len(approval.SecretNames(Canonical(c.Args))) > 0 {
			return Version(ctx, changeToolSecrets, 1) >= 1
		}
	}
	return false
}

// approvalCall is what approval.Needs reads of a call.
func (r *run) approvalCall(c *Call) approval.Call {
	ac := r.snap.approvalOf(c)
	ac.SecretsAsk = r.secretsAsk
	return ac
}
