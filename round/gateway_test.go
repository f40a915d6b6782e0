package round

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMergeRoundKeepsOverlappingRoundsChangesZ2: two gateway rounds start
// from one state and end in either order; the run keeps what each added,
// drops what one dropped unless the other wrote it since, and counts the
// usage of both once.
func TestMergeRoundKeepsOverlappingRoundsChangesZ2(t *testing.T) {
	base := &RunState{Dedupe: map[string]DedupeEntry{
		"old":  {Tool: "read_files", CallID: "c0", Round: 1, Seq: 1},
		"gone": {Tool: "read_files", CallID: "c1", Round: 1, Seq: 2},
	}, Seq: 2, Usage: &Usage{Calls: 2, Rules: map[string]int64{"r": 1}, MAC: "m", Round: 1}}
	base.MarkFetched("read_files")

	// Round A edits a file: it drops "gone" and adds "a".
	a := base.Clone()
	delete(a.Dedupe, "gone")
	a.Dedupe["a"] = DedupeEntry{Tool: "edit_file", CallID: "ca", Round: 2, Seq: 3}
	a.Seq = 3
	a.Usage.Calls, a.Usage.Writes, a.Usage.Rules["r"] = 3, 1, 2
	a.AddRule(AllowRule{Tool: "edit_file", Pattern: "*.md", MAC: "x"})
	// Round B reads: adds "b".
	b := base.Clone()
	b.Dedupe["b"] = DedupeEntry{Tool: "read_files", CallID: "cb", Round: 3, Seq: 3}
	b.Seq = 3
	b.Usage.Calls = 3
	b.MarkFetched("edit_file")

	for _, order := range [][2]*RunState{{a, b}, {b, a}} {
		cur := base.Clone()
		cur.MergeRound(base, order[0])
		cur.MergeRound(base, order[1])
		require.ElementsMatch(t, []string{"old", "a", "b"}, dedupeKeys(cur.Dedupe))
		require.Equal(t, int64(4), cur.Usage.Calls, "each round's one call counted once")
		require.Equal(t, int64(1), cur.Usage.Writes)
		require.Equal(t, int64(2), cur.Usage.Rules["r"])
		require.Empty(t, cur.Usage.MAC, "the next round's usage is signed by who starts it")
		require.Len(t, cur.Allow, 1)
		require.True(t, cur.HasFetched("edit_file") && cur.HasFetched("read_files"))
		require.Equal(t, int64(3), cur.Seq)
	}

	// An entry one round dropped but another rewrote since stays.
	cur := base.Clone()
	rewritten := cur.Clone()
	rewritten.Dedupe["gone"] = DedupeEntry{Tool: "read_files", CallID: "c9", Round: 4, Seq: 4}
	cur.MergeRound(base, rewritten)
	cur.MergeRound(base, a)
	require.Equal(t, "c9", cur.Dedupe["gone"].CallID)
}

func dedupeKeys(m map[string]DedupeEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestGatewayCallValidate(t *testing.T) {
	require.NoError(t, GatewayCall{Tool: "read_files", Args: `{}`}.Validate())
	for _, bad := range []GatewayCall{{Tool: "", Args: `{}`}, {Tool: "x", Args: `[]`}, {Tool: "x", Args: `null`}, {Tool: "x", Args: `{`}} {
		require.Error(t, bad.Validate(), "%+v", bad)
	}
}
