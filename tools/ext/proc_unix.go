//go:build unix

package ext

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts a script in its own process group, so that
// everything it spawns can be killed with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills a script's process group.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
