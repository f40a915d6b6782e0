package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// StartAgent starts an agent run (A4), or attaches to the run with the same
// session and run id, running or finished: its workflow id is
// agentrun/<session>/<run>. It returns at once; WaitAgent gives the result.
func (c *Client) StartAgent(ctx context.Context, in round.AgentInput) (tclient.WorkflowRun, error) {
	in.Carry = nil
	if err := in.Validate(); err != nil {
		return nil, round.Errorf(round.CodeBadRequest, "invalid agent input: %w", err)
	}
	id := names.AgentWorkflowID(in.SessionID, in.RunID)
	run, err := c.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                c.opts.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            fmt.Sprintf("agent run %s of session %s", in.RunID, in.SessionID),
	}, names.AgentWorkflowName, in)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return c.tc.GetWorkflow(ctx, id, ""), nil
	}
	if err != nil {
		return nil, fmt.Errorf("start agent run %s: %w", id, err)
	}
	return run, nil
}

// WaitAgent blocks until the agent run ends, across its continue-as-new
// executions, and returns its status, conversation and final answer, with
// a final answer kept in the blob store read back.
func (c *Client) WaitAgent(ctx context.Context, workflowID string) (*round.AgentStatus, error) {
	var st round.AgentStatus
	if err := c.tc.GetWorkflow(ctx, workflowID, "").Get(ctx, &st); err != nil {
		return nil, failure(fmt.Sprintf("agent run %s failed", workflowID), err)
	}
	c.resolveFinal(ctx, &st)
	return &st, nil
}

// AgentStatus returns a run's status and conversation so far; for a run
// that has ended, its result.
func (c *Client) AgentStatus(ctx context.Context, workflowID string) (*round.AgentStatus, error) {
	d, err := c.describe(ctx, workflowID)
	if err != nil {
		return nil, fmt.Errorf("agent run %s: %w", workflowID, err)
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return c.WaitAgent(ctx, workflowID)
	}
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", names.QueryAgentStatus)
	if err != nil {
		return nil, fmt.Errorf("agent run %s: status: %s", workflowID, rootCause(err))
	}
	var st round.AgentStatus
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("agent run %s: decode status: %w", workflowID, err)
	}
	return &st, nil
}

// SendUserMessage adds a user message to a running agent run; it joins the
// conversation before the next model call (A3).
func (c *Client) SendUserMessage(ctx context.Context, workflowID, text string) error {
	if len(text) > round.MaxTaskBytes {
		return fmt.Errorf("the message is %d bytes; at most %d are accepted", len(text), round.MaxTaskBytes)
	}
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", names.SignalUserMessage, round.UserMessage{Text: text}); err != nil {
		return fmt.Errorf("user message to %s: %w", workflowID, err)
	}
	return nil
}

func (c *Client) resolveFinal(ctx context.Context, st *round.AgentStatus) {
	if c.opts.Blobs == nil || len(st.Conversation) == 0 {
		return
	}
	last := st.Conversation[len(st.Conversation)-1]
	if last.Role != "assistant" || last.ContentRef == "" || len(last.ToolCalls) > 0 {
		return
	}
	if full, err := c.opts.Blobs.Get(ctx, last.ContentRef); err == nil {
		st.Final = full
	}
}

// AgentEvents calls fn with the agent run's events (model tokens and
// replies, and its rounds' events) from the session's stream, from its
// start, until the run's agent_finished event or until ctx ends. It needs
// Options.Events (FromEnv sets it from REDIS_URL).
func (c *Client) AgentEvents(ctx context.Context, sessionID, runID string, fn func(round.Event)) error {
	if c.opts.Events == nil {
		return errors.New("agent events need Redis: Options.Events is not set (client.FromEnv sets it from REDIS_URL)")
	}
	id := names.AgentWorkflowID(sessionID, runID)
	rounds := names.WorkflowID(sessionID, runID, 0)
	rounds = rounds[:len(rounds)-1] // toolround/<session>/<run>/
	err := c.opts.Events.Watch(ctx, sessionID, "0", func(e round.Event) error {
		if e.WorkflowID != id && !strings.HasPrefix(e.WorkflowID, rounds) {
			return nil
		}
		fn(e)
		if e.Type == round.EventAgentFinished && e.WorkflowID == id {
			return errStopWatch
		}
		return nil
	})
	if errors.Is(err, errStopWatch) {
		return nil
	}
	return err
}
