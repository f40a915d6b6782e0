package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDefaultBoundFollowsTheHostsCores: the default reads the host's core
// count, which a test host with few cores cannot tell from a constant 3.
func TestDefaultBoundFollowsTheHostsCores(t *testing.T) {
	defer func(f func() int) { numCPU = f }(numCPU)
	for cores, want := range map[int]int{2: 3, 8: 4, 16: 8, 64: 32} {
		numCPU = func() int { return cores }
		require.Equal(t, want, DefaultMaxConcurrent(), "P2.2: %d cores", cores)
	}
}
