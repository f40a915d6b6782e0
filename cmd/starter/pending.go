package main

import (
	"context"

	"github.com/toolround/toolround/client"
)

// pending: what a round waits for.

var pendingCommand = &command{name: "pending", args: "WORKFLOW_ID", npos: 1,
	summary: "Print what a round waits for (JSON): calls to approve, questions, client tools.",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		p, err := c.Pending(ctx, x.pos[0])
		if err != nil {
			return err
		}
		return printJSON(x.stdout, p)
	}}
