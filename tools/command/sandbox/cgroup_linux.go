package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupController makes a cgroup per command under a folder of this
// worker, inside the worker's own cgroup, for one controller (pids or
// memory), in a v1 hierarchy or in the unified v2 one.
type cgroupController struct {
	name   string // "pids" or "memory"
	parent string // the worker's folder
	v2     bool
	rmdir  func(string) error
}

// cgroupHost is where the cgroup hierarchies are found: this process's
// /proc files, or a test's fake tree.
type cgroupHost struct {
	selfCgroup string // /proc/self/cgroup
	mountinfo  string // /proc/self/mountinfo
	root       bool   // whether the top of a v2 hierarchy may be used
	// rmdir removes a cgroup folder, which cgroupfs allows with its
	// interface files in it.
	rmdir func(string) error
}

var thisHost = cgroupHost{selfCgroup: "/proc/self/cgroup", mountinfo: "/proc/self/mountinfo", root: os.Geteuid() == 0, rmdir: os.Remove}

// newCgroupController finds the worker's cgroup for the controller and
// makes the worker's folder in it, checking that a command's cgroup can be
// made and limited there.
func newCgroupController(name string) (*cgroupController, error) {
	return thisHost.controller(name)
}

func (h cgroupHost) controller(name string) (*cgroupController, error) {
	dir, v2, top, err := h.ownCgroup(name)
	if err != nil {
		return nil, err
	}
	c, err := h.makeController(name, dir, v2)
	if err != nil && v2 && top != dir && h.root {
		// A v2 cgroup that holds processes cannot give its children
		// controllers (a service's cgroup, say); root may use the top of the
		// hierarchy, which that rule spares.
		if c2, err2 := h.makeController(name, top, v2); err2 == nil {
			return c2, nil
		}
	}
	return c, err
}

func (h cgroupHost) makeController(name, dir string, v2 bool) (*cgroupController, error) {
	if v2 {
		ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if err != nil || !hasWord(string(ctl), name) {
			return nil, fmt.Errorf("%s: not enabled in %s: %w", name, dir, errNoCgroup)
		}
	}
	removeStale(dir, h.rmdir)
	c := &cgroupController{name: name, parent: filepath.Join(dir, fmt.Sprintf("toolround-%d", os.Getpid())), v2: v2, rmdir: h.rmdir}
	if err := os.Mkdir(c.parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s cgroup: %w", name, err)
	}
	if v2 {
		if err := os.WriteFile(filepath.Join(c.parent, "cgroup.subtree_control"), []byte("+"+name), 0o644); err != nil {
			c.close()
			return nil, fmt.Errorf("%s cgroup: enable the controller: %w", name, err)
		}
	}
	probeLimit := int64(1 << 30)
	if name == "pids" {
		probeLimit = 1024
	}
	probe, err := c.create(0, probeLimit)
	if err != nil {
		c.close()
		return nil, err
	}
	probe.remove()
	return c, nil
}

// ownCgroup is the folder of this process's cgroup for the controller, and
// the top of its hierarchy.
func (h cgroupHost) ownCgroup(controller string) (dir string, v2 bool, top string, err error) {
	data, err := os.ReadFile(h.selfCgroup)
	if err != nil {
		return "", false, "", err
	}
	path, v2, err := parseSelfCgroup(string(data), controller)
	if err != nil {
		return "", false, "", err
	}
	mounts, err := os.Open(h.mountinfo)
	if err != nil {
		return "", false, "", err
	}
	defer mounts.Close()
	dir, top, err = findCgroupMount(mounts, controller, path, v2)
	return dir, v2, top, err
}

// parseSelfCgroup reads /proc/self/cgroup: the cgroup of this process for
// the controller in a v1 hierarchy that has it, else in the unified v2 one.
func parseSelfCgroup(data, controller string) (path string, v2 bool, err error) {
	found := false
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == controller {
				path, found = f[2], true
			}
		}
		if f[0] == "0" && f[1] == "" && !found {
			path, v2 = f[2], true
		}
	}
	if found {
		return path, false, nil
	}
	if !v2 {
		return "", false, fmt.Errorf("%s: %w", controller, errNoCgroup)
	}
	return path, true, nil
}

// findCgroupMount finds in mountinfo where the hierarchy holding the
// cgroup path is mounted: the cgroup's folder and the top of the mount.
func findCgroupMount(mountinfo io.Reader, controller, path string, v2 bool) (dir, top string, err error) {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		root, point := f[3], f[4]
		match := false
		if v2 {
			match = g[0] == "cgroup2"
		} else if g[0] == "cgroup" {
			for _, o := range strings.Split(g[2], ",") {
				match = match || o == controller
			}
		}
		if !match {
			continue
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		return filepath.Join(point, rel), point, nil
	}
	return "", "", fmt.Errorf("%s: not mounted: %w", controller, errNoCgroup)
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// removeStale removes the folders of workers that no longer run.
func removeStale(dir string, rmdir func(string) error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.Name(), "toolround-")
		if !ok || !e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil || n == os.Getpid() || syscall.Kill(n, 0) == nil {
			continue
		}
		parent := filepath.Join(dir, e.Name())
		kids, _ := os.ReadDir(parent)
		for _, k := range kids {
			if k.IsDir() {
				cg := &cgroup{dir: filepath.Join(parent, k.Name())}
				cg.kill()
				_ = rmdir(cg.dir) // once: another user's folders stay
			}
		}
		_ = rmdir(parent)
	}
}

func (c *cgroupController) close() {
	kids, _ := os.ReadDir(c.parent)
	for _, k := range kids {
		if k.IsDir() {
			(&cgroup{ctl: c, dir: filepath.Join(c.parent, k.Name())}).remove()
		}
	}
	_ = c.rmdir(c.parent)
}

// cgroup is one command's cgroup.
type cgroup struct {
	ctl   *cgroupController
	dir   string
	limit int64
}

// create makes command n's cgroup with its limit (none when negative).
func (c *cgroupController) create(n uint64, limit int64) (*cgroup, error) {
	cg := &cgroup{ctl: c, dir: filepath.Join(c.parent, fmt.Sprintf("c%d", n)), limit: limit}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s cgroup: %w", c.name, err)
	}
	if limit > 0 {
		var file string
		switch {
		case c.name == "pids":
			file = "pids.max"
		case c.v2:
			file = "memory.max"
		default:
			file = "memory.limit_in_bytes"
		}
		if err := os.WriteFile(filepath.Join(cg.dir, file), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
			cg.remove()
			return nil, fmt.Errorf("%s cgroup: set %s: %w", c.name, file, err)
		}
		if c.name == "memory" {
			// Swap must not stretch the limit; not every kernel accounts it.
			if c.v2 {
				_ = os.WriteFile(filepath.Join(cg.dir, "memory.swap.max"), []byte("0"), 0o644)
			} else {
				_ = os.WriteFile(filepath.Join(cg.dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0o644)
			}
		}
	}
	return cg, nil
}

func (cg *cgroup) add(pid int) error {
	if err := os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("%s cgroup: %w", cg.ctl.name, err)
	}
	return nil
}

// cutBy says how the limit cut the command, or "".
func (cg *cgroup) cutBy() string {
	switch cg.ctl.name {
	case "pids":
		if n := eventCount(filepath.Join(cg.dir, "pids.events"), "max"); n > 0 {
			return fmt.Sprintf("cut by the process limit: %d times a new process or thread was refused past %d (%s)", n, cg.limit, EnvProcs)
		}
	case "memory":
		file := "memory.oom_control"
		if cg.ctl.v2 {
			file = "memory.events"
		}
		if n := eventCount(filepath.Join(cg.dir, file), "oom_kill"); n > 0 {
			return fmt.Sprintf("cut by the memory limit: %d processes were killed for using more than %d MiB together (%s)", n, cg.limit>>20, EnvMemory)
		}
	}
	return ""
}

// eventCount reads the number after key in a flat keyed cgroup file.
func eventCount(file, key string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// pids lists the processes in the cgroup.
func (cg *cgroup) pids() []int {
	data, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// kill sends SIGKILL to every process in the cgroup.
func (cg *cgroup) kill() {
	for _, pid := range cg.pids() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// end kills every process in the cgroup and waits, at most d, until none
// is left: SIGKILL is delivered at once but a process takes a moment to
// exit, and a call's processes must be gone when its result is (T8).
func (cg *cgroup) end(d time.Duration) {
	deadline := time.Now().Add(d)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		cg.kill()
		if len(cg.pids()) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

// remove kills what is left in the cgroup and removes it. A cgroup that
// still holds processes a while later is left for removeStale.
func (cg *cgroup) remove() {
	deadline := time.Now().Add(3 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		cg.kill()
		err := cg.ctl.rmdir(cg.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}
