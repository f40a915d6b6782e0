// Package beat heartbeats an activity on a ticker while its work runs, so
// that a worker that dies is noticed within the heartbeat timeout and a
// cancel reaches the work's context (the SDK delivers it with a
// heartbeat's answer).
package beat

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// Every records a heartbeat of the activity of ctx every interval until
// stop is called or ctx ends.
func Every(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
