package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testtools"
	"github.com/toolround/toolround/tools"
)

// TestSnapshotListsOnlyWhatPassOneAsks: the snapshot, recorded in every
// round, names of the provider's loaded and preloaded tools only the
// round's own and run_tool, which are all pass 1 asks about; what it says
// of those is what the whole list says.
func TestSnapshotListsOnlyWhatPassOneAsks(t *testing.T) {
	reg := testtools.Registry(testtools.NewRecorder())
	cat := NewCatalog(reg, CatalogOptions{MaxConcurrent: 3})
	calls := []Unwrapped{{Name: "read_files", Args: `{"paths":["a"]}`}, {Name: "calculate", Args: `{}`, Via: true}, {Name: "nope", Args: `{}`}}
	for _, provider := range []string{tools.ProviderClaudeCode, "openai"} {
		s := cat.Snapshot(SnapshotRequest{Provider: provider, Calls: calls})
		all := tools.LoadedSet(provider, reg.Names(), nil)
		pre := tools.Preloaded(provider, reg.Names(), nil)
		require.Greater(t, len(all), len(s.Loaded), "%s: not the whole list", provider)
		for _, name := range []string{"read_files", "calculate", "nope", tools.RunTool} {
			require.Equal(t, all[name], s.loaded(name), "%s: loaded(%s)", provider, name)
			require.Equal(t, pre[name], s.preloaded(name), "%s: preloaded(%s)", provider, name)
		}
		for _, name := range s.Loaded {
			require.Contains(t, []string{"read_files", "calculate", "nope", tools.RunTool}, name)
		}
	}
}
