package activities

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/toolround/toolround/internal/wire"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// Elicitation (SPEC E1): when an MCP server asks the user for input during
// a call, the call's activity sends the request to its round
// (wire.SignalElicit), where the call waits as kind elicitation, and asks
// the round for the answer (wire.QueryElicitation) until it has one,
// heartbeating all the while, so that a worker that dies while a person
// thinks is noticed within the heartbeat timeout.

// elicitPoll bounds how often the activity asks its round for the answer:
// at first often, so that a quick answer is passed on quickly, then every
// elicitPollMax.
const (
	elicitPollMin = 200 * time.Millisecond
	elicitPollMax = 2 * time.Second
)

// elicitor is the call's tools.Elicitor.
func (a *Activities) elicitor(info activity.Info, in wire.ExecuteInput) tools.Elicitor {
	var seq atomic.Int64
	wf := info.WorkflowExecution
	return func(ctx context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
		if a.Client == nil {
			return tools.ElicitResult{}, errors.New("this worker has no Temporal client to reach the call's round with")
		}
		req := round.ElicitRequest{CallID: in.CallID, Attempt: int(info.Attempt), Seq: int(seq.Add(1)), Server: e.Server,
			Mode: e.Mode, Message: e.Message, RequestedSchema: e.Schema, URL: e.URL, ElicitationID: e.ElicitationID}
		if err := req.Validate(); err != nil {
			return tools.ElicitResult{}, fmt.Errorf("the server's request: %w", err)
		}
		if err := a.Client.SignalWorkflow(ctx, wf.ID, wf.RunID, wire.SignalElicit, req); err != nil {
			return tools.ElicitResult{}, fmt.Errorf("the request could not reach the round: %w", err)
		}
		q := wire.ElicitQuery{CallID: req.CallID, Attempt: req.Attempt, Seq: req.Seq}
		every := elicitPollMin
		t := time.NewTimer(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return tools.ElicitResult{}, ctx.Err()
			case <-t.C:
			}
			activity.RecordHeartbeat(ctx, "waits for a person's answer to mcp server "+e.Server)
			rep, err := a.elicitReply(ctx, wf.ID, wf.RunID, q)
			switch {
			case err != nil:
				a.logger().Warn("asking the round for an elicitation's answer failed; asking again", "call_id", in.CallID, "error", err)
			case rep.Answered:
				return tools.ElicitResult{Action: rep.Action, Content: rep.Content}, nil
			}
			every = min(every*2, elicitPollMax)
			t.Reset(every)
		}
	}
}

func (a *Activities) elicitReply(ctx context.Context, id, runID string, q wire.ElicitQuery) (wire.ElicitReply, error) {
	v, err := a.Client.QueryWorkflow(ctx, id, runID, wire.QueryElicitation, q)
	if err != nil {
		return wire.ElicitReply{}, err
	}
	var rep wire.ElicitReply
	err = v.Get(&rep)
	return rep, err
}
