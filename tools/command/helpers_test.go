package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// newTools returns tools over a fresh workdir, with short grace and progress
// intervals; edit adjusts the config before New.
func newTools(t *testing.T, edit func(*Config)) (*Tools, *tools.Workdir) {
	t.Helper()
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	cfg := Config{Workdir: wd, KillGrace: 300 * time.Millisecond, ProgressInterval: 20 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	tl, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, tl.Close())
		require.NoError(t, wd.Close())
	})
	return tl, wd
}

func call(ctx context.Context, h tools.Handler, args string) (tools.Result, error) {
	return h(ctx, tools.Request{CallID: "call_1", Args: json.RawMessage(args)})
}

func cmdArgs(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	require.NoError(t, err)
	return string(b)
}

// waitPID waits for a command to write its shell's pid (= its process group)
// to name in the workdir.
func waitPID(t *testing.T, wd *tools.Workdir, name string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(wd.Dir(), name))
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "no pid in %s", name)
	return pid
}

// requireGroupGone fails unless every process of the group ends soon.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	require.Eventually(t, func() bool {
		pids, ok := groupMembers(pgid)
		require.True(t, ok, "/proc is needed to check process groups")
		return len(pids) == 0
	}, 5*time.Second, 10*time.Millisecond, "process group %d still has live processes", pgid)
}

// requireGone fails unless the group and the child, which was started in
// it, end soon.
func requireGone(t *testing.T, pgid, child int) {
	t.Helper()
	requireGroupGone(t, pgid)
	require.Eventually(t, func() bool { return !processAlive(child) }, 5*time.Second, 10*time.Millisecond, "child %d still runs", child)
}

func processAlive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z' && st.state != 'X'
}
