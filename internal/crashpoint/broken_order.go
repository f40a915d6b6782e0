//go:build crashpoints && brokenorder

package crashpoint

import (
	"context"
	"time"

	"go.temporal.io/sdk/interceptor"

	"github.com/toolround/toolround/internal/wire"
)

// recordFirst is a deliberately broken build that the crash matrix (L1,
// CRASH_BUILD_TAGS=brokenorder) must catch: a call's result is recorded
// before its effect, which runs a moment after the attempt answered.
func recordFirst(ctx context.Context, typ string, in *interceptor.ExecuteActivityInput, next interceptor.ActivityInboundInterceptor) (any, bool) {
	if typ != wire.ActivityExecuteTool {
		return nil, false
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = next.ExecuteActivity(context.WithoutCancel(ctx), in)
	}()
	return wire.ExecuteOutput{Content: "done (recorded before its effect)"}, true
}
