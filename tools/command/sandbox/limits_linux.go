package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

const (
	rlimitCPU   = syscall.RLIMIT_CPU
	rlimitFsize = syscall.RLIMIT_FSIZE
	rlimitAS    = syscall.RLIMIT_AS
	rlimitNproc = 6 // RLIMIT_NPROC, not in package syscall
)

type rlimit struct {
	resource int
	name     string
	value    int64
}

// setupLimits chooses how each limit is enforced: cgroups where this worker
// can make them, else resource limits. Root is not bound by RLIMIT_NPROC,
// so a root worker without a pids cgroup runs commands as an unprivileged
// user (SANDBOX_USER) with the limit; setup checks that this works.
func (s *Sandbox) setupLimits() {
	c := s.cfg
	if c.CPUSeconds > 0 {
		s.rlimits = append(s.rlimits, rlimit{rlimitCPU, "RLIMIT_CPU", c.CPUSeconds})
	}
	if c.FileSizeBytes > 0 {
		s.rlimits = append(s.rlimits, rlimit{rlimitFsize, "RLIMIT_FSIZE", c.FileSizeBytes})
	}
	if c.MaxProcs > 0 {
		err := fmt.Errorf("turned off (%s=1)", EnvNoPidsCgroup)
		var pids *cgroupController
		if !c.NoPidsCgroup {
			pids, err = newCgroupController("pids")
		}
		s.noPids = err
		switch {
		case err == nil:
			s.pids = pids
		case os.Geteuid() != 0:
			s.rlimits = append(s.rlimits, rlimit{rlimitNproc, "RLIMIT_NPROC", c.MaxProcs})
			s.notes = append(s.notes, fmt.Sprintf("no pids cgroup (%v): the process count is bounded with RLIMIT_NPROC, which counts every process of the worker's user", err))
		default:
			uid, gid, uerr := resolveUser(c.User)
			var setpriv string
			if uerr == nil {
				setpriv, uerr = exec.LookPath("setpriv")
			}
			if uerr == nil {
				u := &commandUser{uid: uid, gid: gid, workdir: filepath.Clean(s.workdir), setpriv: setpriv, hidden: map[string]bool{}}
				for _, h := range c.Hide {
					u.hidden[filepath.Clean(h)] = true
				}
				if uerr = u.grant(); uerr == nil {
					s.user = u
					s.rlimits = append(s.rlimits, rlimit{rlimitNproc, "RLIMIT_NPROC", c.MaxProcs})
					break
				}
			}
			s.notes = append(s.notes, notBounded(err, uerr))
		}
	}
	if c.MemoryBytes > 0 {
		mem, err := newCgroupController("memory")
		if err == nil {
			s.memory = mem
		} else {
			s.rlimits = append(s.rlimits, rlimit{rlimitAS, "RLIMIT_AS", c.MemoryBytes})
			s.notes = append(s.notes, fmt.Sprintf("no memory cgroup (%v): memory is bounded per process with RLIMIT_AS", err))
		}
	}
}

// notBounded is the worker log's note when neither a pids cgroup nor an
// unprivileged user can bound the process count of a root worker's commands.
func notBounded(noPids, noUser error) string {
	return fmt.Sprintf("no pids cgroup (%v), and the worker runs as root, whom RLIMIT_NPROC does not bind, "+
		"but commands cannot run as another user (%v): the process count of commands is NOT bounded", noPids, noUser)
}

// prlimit sets the soft and the hard limit of a resource of pid. The CPU
// time limit's hard limit is 5 s past the soft one, so the process gets
// SIGXCPU, which says why it ended, before SIGKILL.
func prlimit(pid, resource int, value int64) error {
	lim := syscall.Rlimit{Cur: uint64(value), Max: uint64(value)}
	if resource == rlimitCPU {
		lim.Max += 5
	}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource),
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// userTasks counts the processes and threads uid runs, which RLIMIT_NPROC
// counts against its limit.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		fi, err := os.Stat("/proc/" + e.Name())
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
			n += max(1, len(tasks))
		}
	}
	return n
}

func setPdeathsig(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}
