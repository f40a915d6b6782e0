package main

import (
	"context"

	"github.com/toolround/toolround/client"
)

// agent-status: an agent run's state and conversation (A4).

var agentStatusCommand = &command{name: "agent-status", args: "WORKFLOW_ID", npos: 1,
	summary: "Print an agent run's status and conversation so far (JSON).",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		st, err := c.AgentStatus(ctx, x.pos[0])
		if err != nil {
			return err
		}
		return printJSON(x.stdout, st)
	}}
