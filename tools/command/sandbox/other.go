//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
	"time"
)

// Bubblewrap, cgroups and prlimit are Linux's: elsewhere only mode none works.

const (
	rlimitCPU = iota + 100
	rlimitFsize
	rlimitAS
	rlimitNproc
)

type rlimit struct {
	resource int
	name     string
	value    int64
}

func (s *Sandbox) setupLimits() {}

func prlimit(int, int, int64) error { return errors.New("prlimit needs Linux") }

func userTasks(int) int { return 0 }

func setPdeathsig(*syscall.SysProcAttr) {}

type cgroupController struct{}

func (c *cgroupController) create(uint64, int64) (*cgroup, error) { return nil, errNoCgroup }

func (c *cgroupController) close() {}

type cgroup struct{}

func (cg *cgroup) add(int) error     { return errNoCgroup }
func (cg *cgroup) cutBy() string     { return "" }
func (cg *cgroup) remove()           {}
func (cg *cgroup) kill()             {}
func (cg *cgroup) end(time.Duration) {}

func (cg *cgroup) pids() []int { return nil }

type commandUser struct{ uid, gid uint32 }

func (u *commandUser) String() string       { return "" }
func (u *commandUser) grant() error         { return errors.New("commands run as another user on Linux only") }
func (u *commandUser) switchArgs() []string { return nil }

func notBounded(noPids, noUser error) string { return "" }
