//go:build !(crashpoints && brokenorder)

package crashpoint

import (
	"context"

	"go.temporal.io/sdk/interceptor"
)

// recordFirst is off: an activity's result is what its handler returned.
func recordFirst(context.Context, string, *interceptor.ExecuteActivityInput, interceptor.ActivityInboundInterceptor) (any, bool) {
	return nil, false
}
