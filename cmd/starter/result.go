package main

import (
	"context"

	"github.com/toolround/toolround/client"
)

// result: a round's result, once it has one.

var resultCommand = &command{name: "result", args: "WORKFLOW_ID", npos: 1,
	summary: "Wait for a round's result and print it (JSON).",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		res, err := c.Result(ctx, x.pos[0])
		if err != nil {
			return err
		}
		return printJSON(x.stdout, res)
	}}
