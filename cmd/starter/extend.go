package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// extend: more time for a waiting call.

var extendCommand = &command{name: "extend", args: "WORKFLOW_ID CALL_ID DURATION", npos: 3,
	summary: "Add DURATION (e.g. 30m, 2h, or seconds) to a waiting call's deadline; at most 7 days after it started to wait.",
	run: func(ctx context.Context, x *call) error {
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		d, err := parseWait(x.pos[2])
		if err != nil {
			return usageError{error: err}
		}
		res, err := c.ExtendDeadline(ctx, x.pos[0], x.pos[1], d)
		if err != nil {
			return err
		}
		fmt.Fprintln(x.stderr, extendedLine(x.pos[1], d, res))
		return nil
	}}

// extendedLine says what an extension added: the 7-day cap may let in
// less than was asked, down to nothing.
func extendedLine(callID string, asked time.Duration, e round.Extended) string {
	if e.Deadline.IsZero() {
		return fmt.Sprintf("call %s: asked to add %v; this round's build does not say what it added", callID, asked)
	}
	until := e.Deadline.UTC().Format(time.RFC3339)
	added := time.Duration(e.AddedSeconds) * time.Second
	switch {
	case added <= 0:
		return fmt.Sprintf("call %s: nothing added: it waits until %s, 7 days after it began to wait, the most a call waits", callID, until)
	case added < asked:
		return fmt.Sprintf("call %s: added %v, not the %v asked (a call waits at most 7 days); it waits until %s", callID, added, asked, until)
	}
	return fmt.Sprintf("call %s: added %v; it waits until %s", callID, added, until)
}

// parseWait reads extend's DURATION: a Go duration (30m, 2h) or seconds.
func parseWait(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 || n > 7*24*3600 {
			return 0, fmt.Errorf("extend: %s seconds: give 1 second to 7 days", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > 7*24*time.Hour {
		return 0, fmt.Errorf("extend: %q: give a duration from 1s to 168h, e.g. 30m or 2h", s)
	}
	return d, nil
}
