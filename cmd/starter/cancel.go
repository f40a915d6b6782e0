package main

import (
	"context"

	"github.com/toolround/toolround/client"
)

// cancel: stop a round.

var cancelCommand = &command{name: "cancel", args: "WORKFLOW_ID", npos: 1,
	summary: "Cancel a round; every call still gets a result.",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Cancel(ctx, x.pos[0])
	}}
