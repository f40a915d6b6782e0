package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round"
)

// placedHost is one worker of a placement test: its process, its
// TOOLS_WORKDIR and HOST_ID.
type placedHost struct {
	w        *worker
	dir, id  string
	extraEnv []string
}

func (e *env) startHost(h *placedHost) {
	e.t.Helper()
	h.w = e.startWorkerBin(workerBin, append([]string{"TOOLS_WORKDIR=" + h.dir, "HOST_ID=" + h.id}, h.extraEnv...)...)
	require.Contains(e.t, h.w.logs.String(), "host_queue="+e.taskQueue+"@"+h.id)
}

// placedPair starts two workers on one task queue with
// WORKSPACE_PLACEMENT=host, each with its own TOOLS_WORKDIR and HOST_ID:
// two hosts (W4).
func placedPair(t *testing.T, extra ...string) (*env, *placedHost, *placedHost) {
	e := newEnv(t, append([]string{"WORKSPACE_PLACEMENT=host", "WORKSPACE_HOST_TIMEOUT=3s"}, extra...)...)
	a := &placedHost{dir: t.TempDir(), id: "host-a"}
	b := &placedHost{dir: t.TempDir(), id: "host-b"}
	e.startHost(a)
	e.startHost(b)
	return e, a, b
}

// writeRead is round n of the alternating test: odd rounds write vN to
// notes.txt, even ones read it back and must see the last write.
func (e *env) writeRead(t *testing.T, n int, st *round.RunState) round.Result {
	t.Helper()
	var c round.ToolCall
	if n%2 == 1 {
		c = call(fmt.Sprintf("w%d", n), "edit_file", map[string]any{"path": "notes.txt", "new_text": fmt.Sprintf("v%d\n", n)})
	} else {
		c = call(fmt.Sprintf("r%d", n), "read_files", map[string]any{"paths": []string{"notes.txt"}})
	}
	in := e.input(n, "claude-code", st, c, call(fmt.Sprintf("c%d", n), "calculate", map[string]any{"expression": fmt.Sprintf("%d+1", n)}))
	in.AutoApprove = true
	res := e.round(in)
	requireEveryCallOnce(t, in, res)
	for _, r := range res.Results {
		require.Equal(t, round.StatusOK, r.Status, "round %d %s: %s", n, r.CallID, r.Content)
	}
	if n%2 == 0 {
		require.Contains(t, res.Messages[0].Content, fmt.Sprintf("v%d", n-1), "round %d read an older write", n)
	}
	return res
}

// holder is the host whose workdir has notes.txt; the file must be in one
// workdir only.
func holder(t *testing.T, a, b *placedHost) (holds, other *placedHost) {
	t.Helper()
	_, errA := os.Stat(filepath.Join(a.dir, "notes.txt"))
	_, errB := os.Stat(filepath.Join(b.dir, "notes.txt"))
	require.True(t, (errA == nil) != (errB == nil), "notes.txt must be in exactly one workdir (a: %v, b: %v)", errA, errB)
	if errA == nil {
		return a, b
	}
	return b, a
}

// TestPlacementAcrossHosts is W4 with the real binaries: two workers with
// their own workdirs and host ids on one task queue, 20 rounds that
// alternate a write and a read of one session's file. Every read sees the
// last write, whichever worker runs the round, and the file lives in one
// workdir only: the workspace's host's.
func TestPlacementAcrossHosts(t *testing.T) {
	e, a, b := placedPair(t)
	st := &round.RunState{Fetched: allTools}
	for n := 1; n <= 20; n++ {
		st = e.writeRead(t, n, st).State
	}
	holds, _ := holder(t, a, b)
	got, err := os.ReadFile(filepath.Join(holds.dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "v19\n", string(got))
}

// TestPlacementSurvivesTheOtherHost is W4 while the worker that does not
// hold the workspace is killed and started again: every read still sees
// the last write, on the one host that has the file.
func TestPlacementSurvivesTheOtherHost(t *testing.T) {
	e, a, b := placedPair(t)
	st := &round.RunState{Fetched: allTools}
	st = e.writeRead(t, 1, st).State
	holds, other := holder(t, a, b)
	for n := 2; n <= 20; n++ {
		switch n {
		case 6:
			other.w.kill(t)
		case 12:
			e.startHost(other)
		case 16:
			other.w.kill(t)
		}
		st = e.writeRead(t, n, st).State
	}
	got, err := os.ReadFile(filepath.Join(holds.dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "v19\n", string(got))
	require.NoFileExists(t, filepath.Join(other.dir, "notes.txt"))
}

// TestPlacementLostHost is W5: with the bound host's worker killed, a new
// workspace call ends error workspace_unavailable naming the host within
// the host timeout (3 s) while the calculation beside it runs; a move to
// the dead host is refused with host_unavailable; `starter workspace
// move` to the live host rebinds the session and the next round runs
// there.
func TestPlacementLostHost(t *testing.T) {
	e, a, b := placedPair(t)
	st := e.writeRead(t, 1, &round.RunState{Fetched: allTools}).State
	holds, other := holder(t, a, b)
	holds.w.kill(t)

	in := e.input(2, "claude-code", st,
		call("r2", "read_files", map[string]any{"paths": []string{"notes.txt"}}),
		call("c2", "calculate", map[string]any{"expression": "2+2"}))
	start := time.Now()
	res := e.round(in)
	took := time.Since(start)
	requireEveryCallOnce(t, in, res)
	r2 := byID(res)["r2"]
	require.Equal(t, round.StatusError, r2.Status, r2.Content)
	require.Equal(t, round.ErrorCodeWorkspaceUnavailable, r2.ErrorCode)
	require.Contains(t, r2.Content, "host "+holds.id)
	require.Equal(t, round.StatusOK, byID(res)["c2"].Status)
	require.Less(t, took, 30*time.Second, "the lost host is noticed within its timeout, not after a long wait")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mv := e.starter(ctx, "", "workspace", "move", e.session, holds.id)
	require.NotEqual(t, 0, mv.code)
	require.Contains(t, mv.stderr, "host_unavailable")
	mv = e.starter(ctx, "", "workspace", "move", e.session, other.id)
	require.Equal(t, 0, mv.code, mv.stderr)
	require.Contains(t, mv.stdout, "to host "+other.id+" (generation 2)")

	st = res.State
	for n := 3; n <= 4; n++ {
		st = e.writeRead(t, n, st).State
	}
	got, err := os.ReadFile(filepath.Join(other.dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "v3\n", string(got), "after the move the session's files are written on the live host")
}

// TestHostQueueIsUnversioned is V1's rule for host queues: with
// WORKER_DEPLOYMENT set, the worker's task queue is polled as a version of
// the deployment, and its host queue by an unversioned poller, which a
// placed round's workspace calls reach.
func TestHostQueueIsUnversioned(t *testing.T) {
	deployment := "placed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	e := newEnv(t, "WORKSPACE_PLACEMENT=host", "WORKSPACE_HOST_TIMEOUT=3s", "WORKER_DEPLOYMENT="+deployment, "WORKER_BUILD_ID=b1")
	h := &placedHost{dir: t.TempDir(), id: "host-v"}
	e.startHost(h)
	e.writeRead(t, 1, &round.RunState{Fetched: allTools})
	require.FileExists(t, filepath.Join(h.dir, "notes.txt"))

	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := tc.DescribeTaskQueue(ctx, e.taskQueue+"@"+h.id, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	require.NoError(t, err)
	require.NotEmpty(t, resp.GetPollers(), "the host queue has a poller")
	for _, p := range resp.GetPollers() {
		require.Nil(t, p.GetDeploymentOptions(), "host queue poller %s is versioned", p.GetIdentity())
	}
	main, err := tc.DescribeTaskQueue(ctx, e.taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	require.NoError(t, err)
	versioned := false
	for _, p := range main.GetPollers() {
		versioned = versioned || strings.Contains(p.GetDeploymentOptions().GetDeploymentName(), deployment)
	}
	require.True(t, versioned, "the worker's own queue is polled as a version of %s: %v", deployment, main.GetPollers())
}

// TestIdleHostStaysAlive is W5's presence: once the long polls of an idle
// host queue's activity workers are older than WORKSPACE_HOST_TIMEOUT, the
// host's presence polls still show it alive, and a workspace call runs
// there rather than ending workspace_unavailable.
func TestIdleHostStaysAlive(t *testing.T) {
	e := newEnv(t, "WORKSPACE_PLACEMENT=host", "WORKSPACE_HOST_TIMEOUT=3s")
	h := &placedHost{dir: t.TempDir(), id: "host-idle"}
	e.startHost(h)
	tc, err := tclient.Dial(tclient.Options{HostPort: temporalAddress()})
	require.NoError(t, err)
	defer tc.Close()
	q := e.taskQueue + "@" + h.id
	newest := func(typ enumspb.TaskQueueType) time.Time {
		resp, err := tc.DescribeTaskQueue(context.Background(), q, typ)
		require.NoError(t, err)
		var last time.Time
		for _, p := range resp.GetPollers() {
			if at := p.GetLastAccessTime().AsTime(); at.After(last) {
				last = at
			}
		}
		return last
	}
	require.Eventually(t, func() bool {
		last := newest(enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		return !last.IsZero() && time.Since(last) > 3*time.Second
	}, 90*time.Second, 200*time.Millisecond, "the activity pollers' long polls go stale")
	require.Less(t, time.Since(newest(enumspb.TASK_QUEUE_TYPE_WORKFLOW)), 3*time.Second, "the presence polls keep the host alive")
	e.writeRead(t, 1, &round.RunState{Fetched: allTools})
	require.FileExists(t, filepath.Join(h.dir, "notes.txt"))
}
