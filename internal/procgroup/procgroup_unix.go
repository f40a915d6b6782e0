//go:build unix

// Package procgroup starts a child process in a process group of its own and
// kills the whole group, so that what the child spawns ends with it.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Set makes cmd start in its own process group and, on Linux, be killed
// when the worker dies (start it with Start).
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// Kill sends SIGKILL to the process group led by pid.
func Kill(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
