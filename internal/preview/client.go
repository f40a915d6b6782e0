package preview

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolround/toolround/tools/files"
)

// Timeout bounds one preview, from scheduling to the answer: a page waits
// for it.
const Timeout = 5 * time.Second

// WorkflowName is the type of the workflow that runs one preview; a
// stable string.
const WorkflowName = "toolround.FilePreview"

// WorkflowIDPrefix starts the id of every preview workflow.
const WorkflowIDPrefix = "preview/"

// Request is the input of a preview workflow: the activity's input and
// the queue of the host that holds the workspace.
type Request struct {
	TaskQueue string `json:"task_queue"`
	Input
}

// Workflow runs PreviewFile once on the host's queue and returns its
// sealed answer. It holds nothing but ciphertext and the path, and the
// console deletes it once answered.
func Workflow(ctx workflow.Context, r Request) (Output, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              r.TaskQueue,
		ScheduleToCloseTimeout: Timeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:                "file preview for a decision",
	})
	var out Output
	err := workflow.ExecuteActivity(ctx, ActivityName, r.Input).Get(ctx, &out)
	return out, err
}

// Run runs PreviewFile for path in session's workspace on taskQueue,
// the queue of the host that holds the workspace, through a short
// workflow on workflowQueue (the worker's TASK_QUEUE), and opens its
// sealed answer. The execution is deleted once answered, so the server
// keeps not even the sealed answer.
func Run(ctx context.Context, c client.Client, namespace, workflowQueue, taskQueue, session, path string) (files.Preview, error) {
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return files.Preview{}, err
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	ctx, cancel := context.WithTimeout(ctx, Timeout+time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: WorkflowIDPrefix + hex.EncodeToString(id[:]), TaskQueue: workflowQueue,
		WorkflowExecutionTimeout: Timeout + time.Second,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, WorkflowName, Request{TaskQueue: taskQueue, Input: Input{Session: session, Path: path, PublicKey: key.PublicKey().Bytes()}})
	if err != nil {
		return files.Preview{}, err
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer dcancel()
		if _, err := c.WorkflowService().DeleteWorkflowExecution(dctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: run.GetID(), RunId: run.GetRunID()}}); err != nil {
			_ = c.TerminateWorkflow(dctx, run.GetID(), run.GetRunID(), "preview abandoned")
		}
	}()
	var out Output
	if err := run.Get(ctx, &out); err != nil {
		if ctx.Err() != nil {
			return files.Preview{}, fmt.Errorf("no worker of the workspace's host answered within %s", Timeout)
		}
		return files.Preview{}, plain(err)
	}
	return Open(key, out)
}

// plain is an activity's failure as a person reads it: its message, not
// the SDK's wrapping.
func plain(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return errors.New(ae.Error())
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("no worker of the workspace's host answered within %s", Timeout)
	}
	return err
}
