package activities

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// Chatbots sends messages to the session's chatbots (G3) through the
// worker's Temporal client.
type Chatbots struct {
	Client    client.Client
	TaskQueue string
}

// Send is the ActivitySendToChatbot activity: update-with-start of the
// chatbot's persistent run, whose update id is the message id, so that an
// attempt after a lost one gets the same reply instead of a second one. It
// heartbeats while the chatbot answers.
func (c *Chatbots) Send(ctx context.Context, in wire.SendToChatbotInput) (round.ChatReply, error) {
	if c.Client == nil {
		return round.ChatReply{}, temporal.NewNonRetryableApplicationError("this worker has no Temporal client to reach chatbots with", "NoClient", nil)
	}
	if err := in.Message.Validate(); err != nil {
		return round.ChatReply{}, temporal.NewNonRetryableApplicationError("message: "+err.Error(), round.ErrTypeInvalidInput, err)
	}
	id := names.AgentWorkflowID(in.Start.SessionID, in.Start.RunID)
	start := c.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: id, TaskQueue: c.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeyword(names.SearchParent).ValueSet(in.Parent)),
		Memo:                     map[string]any{wire.MemoParent: in.Parent},
		StaticSummary:            "chatbot " + in.Start.Name + " of session " + in.Start.SessionID,
	}, names.AgentWorkflowName, in.Start)

	info := activity.GetInfo(ctx)
	if !info.IsLocalActivity && info.HeartbeatTimeout > 0 {
		hctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			t := time.NewTicker(max(info.HeartbeatTimeout/3, 100*time.Millisecond))
			defer t.Stop()
			for {
				select {
				case <-hctx.Done():
					return
				case <-t.C:
					activity.RecordHeartbeat(ctx, "waiting for "+id)
				}
			}
		}()
	}
	h, err := c.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID: in.Message.MessageID, UpdateName: wire.UpdateChat, Args: []any{in.Message},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return round.ChatReply{}, err
	}
	var reply round.ChatReply
	if err := h.Get(ctx, &reply); err != nil {
		return round.ChatReply{}, err
	}
	return reply, nil
}
