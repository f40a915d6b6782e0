package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cgroup code runs here against fake trees: this machine (cgroup v1
// for pids and memory, an empty cgroup2 mount) would never reach the v2
// files otherwise.

// This machine's files: v1 hierarchies, and the unified one without
// controllers.
const (
	hybridSelfCgroup = `9:name=systemd:/
8:pids:/
7:blkio:/
4:memory:/process_api/c9b0
1:cpu:/
0::/
`
	hybridMountinfo = `30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
)

func TestParseSelfCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, data, controller string
		path                   string
		v2                     bool
		err                    bool
	}{
		{"hybrid, pids in v1", hybridSelfCgroup, "pids", "/", false, false},
		{"hybrid, memory in v1", hybridSelfCgroup, "memory", "/process_api/c9b0", false, false},
		{"hybrid, no v1 hierarchy: the unified one", hybridSelfCgroup, "hugetlb", "/", true, false},
		{"v2 only", "0::/system.slice/toolround.service\n", "pids", "/system.slice/toolround.service", true, false},
		{"v1 only, no such controller", "8:pids:/a\n4:memory:/b\n", "rdma", "", false, true},
		{"v1 only, joint controllers", "3:cpu,cpuacct:/c\n8:pids:/a\n", "cpuacct", "/c", false, false},
		{"the unified line first", "0::/u\n8:pids:/a\n", "pids", "/a", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, v2, err := parseSelfCgroup(tc.data, tc.controller)
			if tc.err {
				require.ErrorIs(t, err, errNoCgroup)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.path, path)
			require.Equal(t, tc.v2, v2)
		})
	}
}

func TestFindCgroupMount(t *testing.T) {
	for _, tc := range []struct {
		name, mountinfo, controller, path string
		v2                                bool
		dir, top                          string
	}{
		{"v1 pids", hybridMountinfo, "pids", "/", false, "/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids"},
		{"v1 memory, below the top", hybridMountinfo, "memory", "/process_api/c9b0", false, "/sys/fs/cgroup/memory/process_api/c9b0", "/sys/fs/cgroup/memory"},
		{"v2 beside v1", hybridMountinfo, "pids", "/", true, "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified"},
		// In a container the mount's root is the container's cgroup.
		{"v2 mounted from a subtree", "25 1 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n", "pids", "/docker/abc/w", true, "/sys/fs/cgroup/w", "/sys/fs/cgroup"},
		{"v2, cgroup outside the mount", "25 1 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "pids", "/other", true, "", ""},
		{"v1, controller not mounted", hybridMountinfo, "rdma", "/", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, top, err := findCgroupMount(strings.NewReader(tc.mountinfo), tc.controller, tc.path, tc.v2)
			if tc.dir == "" {
				require.ErrorIs(t, err, errNoCgroup)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.dir, dir)
			require.Equal(t, tc.top, top)
		})
	}
}

// fakeV2 is a cgroup2 hierarchy in a temp dir: top offers controllers,
// the worker's cgroup /w offers wController.
func fakeV2(t *testing.T, topControllers, wControllers string, root bool) (cgroupHost, string) {
	t.Helper()
	base := t.TempDir()
	top := filepath.Join(base, "cgroup")
	require.NoError(t, os.MkdirAll(filepath.Join(top, "w"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(top, "cgroup.controllers"), []byte(topControllers+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(top, "w", "cgroup.controllers"), []byte(wControllers+"\n"), 0o644))
	self := filepath.Join(base, "self-cgroup")
	require.NoError(t, os.WriteFile(self, []byte("0::/w\n"), 0o644))
	mounts := filepath.Join(base, "mountinfo")
	require.NoError(t, os.WriteFile(mounts, []byte(fmt.Sprintf("25 1 0:26 / %s rw,relatime - cgroup2 cgroup2 rw\n", top)), 0o644))
	return cgroupHost{selfCgroup: self, mountinfo: mounts, root: root, rmdir: fakeRmdir}, top
}

// fakeRmdir removes a cgroup folder as cgroupfs does: with its interface
// files, but not while it holds processes or child cgroups.
func fakeRmdir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			return syscall.EBUSY
		}
	}
	if procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); strings.TrimSpace(string(procs)) != "" {
		return syscall.EBUSY
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestCgroupV2Pids goes through a command's pids cgroup on v2: the
// controller enabled for the worker's folder, the limit written, the
// process added, "max" events read for the result, and cleanup.
func TestCgroupV2Pids(t *testing.T) {
	h, top := fakeV2(t, "cpu memory pids", "memory pids", false)
	c, err := h.controller("pids")
	require.NoError(t, err)
	require.True(t, c.v2)
	require.Equal(t, filepath.Join(top, "w", fmt.Sprintf("toolround-%d", os.Getpid())), c.parent)
	require.Equal(t, "+pids", readFile(t, filepath.Join(c.parent, "cgroup.subtree_control")))
	// The probe made at start is gone.
	require.NoDirExists(t, filepath.Join(c.parent, "c0"))

	cg, err := c.create(7, 64)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(c.parent, "c7"), cg.dir)
	require.Equal(t, "64", readFile(t, filepath.Join(cg.dir, "pids.max")))

	sleep := exec.Command("sleep", "60")
	require.NoError(t, sleep.Start())
	exited := make(chan struct{})
	go func() {
		_ = sleep.Wait() // killed by the removal below
		close(exited)
	}()
	require.NoError(t, cg.add(sleep.Process.Pid))
	require.Equal(t, []int{sleep.Process.Pid}, cg.pids())

	require.Empty(t, cg.cutBy(), "cut without an event")
	require.NoError(t, os.WriteFile(filepath.Join(cg.dir, "pids.events"), []byte("max 0\n"), 0o644))
	require.Empty(t, cg.cutBy())
	require.NoError(t, os.WriteFile(filepath.Join(cg.dir, "pids.events"), []byte("max 37\n"), 0o644))
	require.Equal(t, "cut by the process limit: 37 times a new process or thread was refused past 64 (COMMAND_MAX_PROCS)", cg.cutBy())

	// Removing the cgroup ends what is left in it. cgroupfs empties
	// cgroup.procs when a process dies; the fake needs telling.
	go func() {
		<-exited
		_ = os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), nil, 0o644)
	}()
	cg.remove()
	require.NoDirExists(t, cg.dir)
	require.Error(t, syscall.Kill(sleep.Process.Pid, 0), "the command's process outlived its cgroup")

	c.close()
	require.NoDirExists(t, c.parent)
}

func TestCgroupV2Memory(t *testing.T) {
	h, _ := fakeV2(t, "memory pids", "memory pids", false)
	c, err := h.controller("memory")
	require.NoError(t, err)
	t.Cleanup(c.close)
	cg, err := c.create(1, 256<<20)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(256<<20), readFile(t, filepath.Join(cg.dir, "memory.max")))
	require.Equal(t, "0", readFile(t, filepath.Join(cg.dir, "memory.swap.max")), "swap stretches the limit")
	require.NoFileExists(t, filepath.Join(cg.dir, "memory.limit_in_bytes"), "a v1 file in a v2 cgroup")

	// memory.events has more keys; oom_kill is the one that says a process died.
	require.NoError(t, os.WriteFile(filepath.Join(cg.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\n"), 0o644))
	require.Empty(t, cg.cutBy())
	require.NoError(t, os.WriteFile(filepath.Join(cg.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n"), 0o644))
	require.Equal(t, "cut by the memory limit: 2 processes were killed for using more than 256 MiB together (COMMAND_MEMORY_MB)", cg.cutBy())
	cg.remove()
	require.NoDirExists(t, cg.dir)
}

// TestCgroupV2NotDelegated: a worker whose v2 cgroup does not offer the
// controller uses the top of the hierarchy when it is root, else none.
func TestCgroupV2NotDelegated(t *testing.T) {
	h, top := fakeV2(t, "memory pids", "memory", false)
	_, err := h.controller("pids")
	require.ErrorIs(t, err, errNoCgroup)
	require.ErrorContains(t, err, "pids: not enabled in "+filepath.Join(top, "w"))

	h.root = true
	c, err := h.controller("pids")
	require.NoError(t, err)
	t.Cleanup(c.close)
	require.Equal(t, filepath.Join(top, fmt.Sprintf("toolround-%d", os.Getpid())), c.parent)

	h, _ = fakeV2(t, "memory", "memory", true)
	_, err = h.controller("pids")
	require.ErrorIs(t, err, errNoCgroup, "no hierarchy offers pids")
}

// TestCgroupRemovesStale: the folders of a worker that died are removed
// by the next one; those of a live worker stay.
func TestCgroupRemovesStale(t *testing.T) {
	h, top := fakeV2(t, "pids", "pids", false)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(top, "w", fmt.Sprintf("toolround-%d", dead.Process.Pid))
	live := filepath.Join(top, "w", fmt.Sprintf("toolround-%d", os.Getppid()))
	for _, d := range []string{stale, live} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "c3"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "c3", "pids.max"), []byte("10"), 0o644))
	}
	c, err := h.controller("pids")
	require.NoError(t, err)
	t.Cleanup(c.close)
	require.NoDirExists(t, stale)
	require.DirExists(t, filepath.Join(live, "c3"))
}

// TestCgroupV2SubtreeControlRefused: a folder whose controller cannot be
// enabled is not used, and nothing is left of it.
func TestCgroupV2SubtreeControlRefused(t *testing.T) {
	h, top := fakeV2(t, "pids", "pids", false)
	parent := filepath.Join(top, "w", fmt.Sprintf("toolround-%d", os.Getpid()))
	// A folder where the file should be makes the write fail.
	require.NoError(t, os.MkdirAll(filepath.Join(parent, "cgroup.subtree_control"), 0o755))
	_, err := h.controller("pids")
	require.ErrorContains(t, err, "pids cgroup: enable the controller")
	require.True(t, errors.Is(err, syscall.EISDIR), err)
}
