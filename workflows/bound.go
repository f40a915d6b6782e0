package workflows

import "runtime"

// DefaultMaxConcurrent is MAX_CONCURRENT_TOOLS when it is not configured:
// half the worker host's cores, at least 3 (P2.2, v1.3.0).
func DefaultMaxConcurrent() int {
	return max(3, runtime.NumCPU()/2)
}
