//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in its own process group, so that the
// helpers it spawns (npx starts node, for one) end with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of a server's process group.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
