package main

import (
	"context"

	"github.com/toolround/toolround/client"
)

// progress: where each call of a round is.

var progressCommand = &command{name: "progress", args: "WORKFLOW_ID", npos: 1,
	summary: "Print which calls of a round are queued, running, waiting or done (JSON).",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		p, err := c.Progress(ctx, x.pos[0])
		if err != nil {
			return err
		}
		return printJSON(x.stdout, p)
	}}
