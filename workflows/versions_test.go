package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"
)

// TestBaselineIsClosed pins the list of changes that changeBaseline1 stands
// for. Executions recorded with its marker replay with exactly these
// versions; a change added to the list later would make them replay with
// behaviour they never had. A new change gets a marker of its own, or a new
// baseline.
func TestBaselineIsClosed(t *testing.T) {
	require.Equal(t, map[string]workflow.Version{
		"inbox-search-attributes": 1,
		"waiting-since-memo":      1,
		"approvals-t1-t5":         1,
		"honest-repeats":          1,
		"operation-ids":           1,
		"key-limits":              1,
		"reconcile-lost-attempts": 1,
		"reconcile-lost-again":    1,
	}, baseline1)
	require.Equal(t, "baseline-2026-11-30", changeBaseline1)
}

// TestBaseline2IsClosed pins changeBaseline2 the same way: baseline1 and the
// changes after it.
func TestBaseline2IsClosed(t *testing.T) {
	want := map[string]workflow.Version{"call-finished": 1, "helpful-hints": 1}
	for k, v := range baseline1 {
		want[k] = v
	}
	require.Equal(t, want, baseline2)
	require.Equal(t, "baseline-2026-12-01", changeBaseline2)
}
