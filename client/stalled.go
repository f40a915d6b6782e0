package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/toolround/toolround/round/names"
)

// Stalled is a running round that no worker of the client's task queue
// runs: it waits on a task queue no worker polls, or on another task queue
// than the client's (TASK_QUEUE differed when it was first submitted, and
// submitting it again attaches to that execution).
type Stalled struct {
	WorkflowID string
	// TaskQueue is the queue the round waits on; ClientQueue the client's.
	TaskQueue, ClientQueue string
	// Polled: a worker polls TaskQueue, which then runs the round.
	Polled bool
	// Since is when the round started to wait for a worker: its pending
	// workflow task's time, else its start.
	Since time.Time
	// Untaken: no worker has taken the round yet; Cancel ends it at once.
	Untaken bool
}

// String is the one line that tells a person what the round waits for and
// the two ways out.
func (s *Stalled) String() string {
	what, again := "round", "submit it again under a new round number"
	if strings.HasPrefix(s.WorkflowID, names.AgentWorkflowIDPrefix+"/") {
		what, again = "agent run", "start it again under a new run id"
	}
	since := fmt.Sprintf("since %s (%s ago)", s.Since.UTC().Format("2006-01-02 15:04:05 UTC"), time.Since(s.Since).Round(time.Second))
	cancel := fmt.Sprintf("end it with starter cancel %s and %s", s.WorkflowID, again)
	if s.Polled {
		return fmt.Sprintf("%s %s runs on task queue %q (TASK_QUEUE when it was first submitted), not yours (%q), %s: the workers of %q run it; to run it on %q, %s",
			what, s.WorkflowID, s.TaskQueue, s.ClientQueue, since, s.TaskQueue, s.ClientQueue, cancel)
	}
	other := ""
	if s.TaskQueue != s.ClientQueue {
		other = fmt.Sprintf("; it was first submitted with TASK_QUEUE=%s, not yours (%q)", s.TaskQueue, s.ClientQueue)
	}
	return fmt.Sprintf("%s %s: no worker polls task queue %q, on which it waits %s%s: start a worker with TASK_QUEUE=%s (bin/worker), or %s",
		what, s.WorkflowID, s.TaskQueue, since, other, s.TaskQueue, cancel)
}

// Stalled returns what keeps a running round from a worker of the client's
// task queue (see the type), or nil when such a worker runs it or when it
// has ended; an error when the server cannot say. A round that does not
// exist matches ErrRoundNotFound.
func (c *Client) Stalled(ctx context.Context, workflowID string) (*Stalled, error) {
	desc, err := c.describe(ctx, workflowID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("round %s %w (or its history is past retention)", workflowID, ErrRoundNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("describe round %s: %w", workflowID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, nil
	}
	s := &Stalled{WorkflowID: workflowID, TaskQueue: info.GetTaskQueue(), ClientQueue: c.opts.TaskQueue, Since: info.GetStartTime().AsTime()}
	if s.TaskQueue == "" {
		s.TaskQueue = c.opts.TaskQueue
	}
	if s.Polled, err = c.hasWorkers(ctx, s.TaskQueue); err != nil {
		return nil, err
	}
	if s.Polled && s.TaskQueue == s.ClientQueue {
		return nil, nil
	}
	task := desc.GetPendingWorkflowTask()
	if t := task.GetOriginalScheduledTime(); t != nil {
		s.Since = t.AsTime()
	} else if t := task.GetScheduledTime(); t != nil {
		s.Since = t.AsTime()
	}
	s.Untaken = untaken(info.GetHistoryLength(), task.GetState())
	return s, nil
}

// untakenReason is the reason Cancel records when it ends a round that no
// worker took; Wait reads it back.
const untakenReason = "cancelled before any worker took it"

// endUntaken ends, at once, a round that no worker has taken and no worker
// polls the task queue of, after its cancel was recorded: a cancel alone
// would wait for a worker of that queue. Nothing of the round ran, so none
// of its calls has a result.
func (c *Client) endUntaken(ctx context.Context, workflowID string) error {
	s, err := c.Stalled(ctx, workflowID)
	if err != nil || s == nil || s.Polled || !s.Untaken {
		return nil
	}
	reason := fmt.Sprintf("%s (no worker polled task queue %q); submit it again under a new round number", untakenReason, s.TaskQueue)
	if err := c.tc.TerminateWorkflow(ctx, workflowID, "", reason); err != nil {
		return fmt.Errorf("end %s, which no worker took: %w", workflowID, err)
	}
	return nil
}

// terminatedReason is the reason a terminated round's history records.
func (c *Client) terminatedReason(ctx context.Context, workflowID, runID string) string {
	it := c.tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return ""
		}
		if a := e.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			return a.GetReason()
		}
	}
	return ""
}

// untaken is whether a round's history shows no workflow task ever
// started: its start, the first task scheduled, and at most a cancel
// request, which is written at once while no task runs.
func untaken(historyLength int64, pending enumspb.PendingWorkflowTaskState) bool {
	return historyLength <= 3 && pending == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED
}
