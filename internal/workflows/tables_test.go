package workflows_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/workflows"
	"github.com/toolround/toolround/round"
)

// recordedBefore is a catalog whose snapshots read as those recorded
// before the matcher's version was: without one.
type recordedBefore struct{ workflows.Catalog }

func (c recordedBefore) Snapshot(req workflows.SnapshotRequest) workflows.Snapshot {
	s := c.Catalog.Snapshot(req)
	b, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "tables")
	b, _ = json.Marshal(m)
	var old workflows.Snapshot
	_ = json.Unmarshal(b, &old)
	return old
}

// TestRoundsRecordTheirMatcher: a new round records the option tables'
// version in its snapshot and decides with it (T11); a round whose
// snapshot has none decides with the legacy matcher, as it did when it was
// recorded, so its history replays the same.
func TestRoundsRecordTheirMatcher(t *testing.T) {
	h := newHarness(t, 3)
	snap := h.wf.Catalog.Snapshot(workflows.SnapshotRequest{})
	require.Equal(t, approval.TablesCurrent, snap.Tables)
	b, err := json.Marshal(snap)
	require.NoError(t, err)
	require.Contains(t, string(b), fmt.Sprintf(`"tables":%d`, approval.TablesCurrent))

	probe := `{"command":"tar xIf 'sh -c id>PWN_TAR' a.tar"}`
	in := func() round.Input {
		in := input(call("p", "run_command", probe), call("x", "run_command", `{"command":"tar xf a.tar"}`))
		in.ConfirmTimeoutSeconds = 5
		in.State.Allow = []round.AllowRule{signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "tar *"})}
		return in
	}
	res := h.run(t, in())
	require.Equal(t, []round.Status{round.StatusExpired, round.StatusOK}, statuses(res), "T11: the probe asks")

	old := newHarness(t, 3)
	old.wf.Catalog = recordedBefore{old.wf.Catalog}
	require.Zero(t, old.wf.Catalog.Snapshot(workflows.SnapshotRequest{}).Tables)
	res = old.run(t, in())
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(res), "the legacy matcher, as recorded")
}

// TestRememberedPatternNeedsATable: a round with the tables does not
// remember a pattern over a program without one, and says so.
func TestRememberedPatternNeedsATable(t *testing.T) {
	_, err := approval.RememberAt(approval.TablesV2, approval.KindCommand, "run_command", `{"command":"rm x"}`, "rm *")
	require.ErrorContains(t, err, "no option table")
	_, err = approval.RememberAt(0, approval.KindCommand, "run_command", `{"command":"rm x"}`, "rm *")
	require.NoError(t, err, "rounds recorded before remember it as they did")
}

// TestUntestedProgramsAreRecorded: the programs the worker found outside
// their table's tested range reach the round through its snapshot (T11),
// and a pattern over one then matches only the very command; a snapshot
// recorded before has none and decides as it did.
func TestUntestedProgramsAreRecorded(t *testing.T) {
	in := func() round.Input {
		in := input(call("p", "run_command", `{"command":"tar tf a.tar"}`), call("x", "run_command", `{"command":"tar xf a.tar"}`))
		in.ConfirmTimeoutSeconds = 5
		in.State.Allow = []round.AllowRule{
			signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "tar *"}),
			signed("s", "r", approval.Rule{Tool: "run_command", Pattern: "tar xf a.tar"}),
		}
		return in
	}
	h := newHarness(t, 3)
	cat := h.wf.Catalog.(*workflows.RegistryCatalog)
	cat.Options.Untested = []string{"tar"}
	snap := h.wf.Catalog.Snapshot(workflows.SnapshotRequest{})
	require.Equal(t, []string{"tar"}, snap.Untested)
	b, err := json.Marshal(snap)
	require.NoError(t, err)
	require.Contains(t, string(b), `"untested":["tar"]`)
	res := h.run(t, in())
	require.Equal(t, []round.Status{round.StatusExpired, round.StatusOK}, statuses(res), "tar * no longer matches; the very command does")

	h = newHarness(t, 3)
	b, err = json.Marshal(h.wf.Catalog.Snapshot(workflows.SnapshotRequest{}))
	require.NoError(t, err)
	require.NotContains(t, string(b), "untested")
	res = h.run(t, in())
	require.Equal(t, []round.Status{round.StatusOK, round.StatusOK}, statuses(res), "in range, tar * matches")
}
