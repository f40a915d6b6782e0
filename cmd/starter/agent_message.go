package main

import (
	"context"
	"strings"

	"github.com/toolround/toolround/client"
)

// agent-message: a user message for a running agent run (A4).

var agentMessageCommand = &command{name: "agent-message", args: "WORKFLOW_ID TEXT...", npos: 2,
	summary: "Add a user message to a running agent run; it joins the conversation before the next model call.",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.SendUserMessage(ctx, x.pos[0], strings.Join(x.pos[1:], " "))
	}}
