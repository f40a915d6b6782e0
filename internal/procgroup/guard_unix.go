//go:build unix && !linux

package procgroup

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// watchdogScript waits for its stdin to close, which happens when the worker
// closes the pipe or dies however it dies, then kills its process group.
const watchdogScript = `read _; kill -9 0`

// Guard starts a watchdog in the process group led by pid that kills the
// whole group once the returned file is closed or the worker dies, SIGKILL
// included: what the child started dies with the worker too, where a
// parent-death signal reaches the child alone. Close the file when the group
// is to end (Kill ends the watchdog with the rest).
func Guard(pid int) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	// No parent-death signal: it must outlive the worker to do its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pid}
	if err := Start(cmd.Start); err != nil {
		w.Close()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return w, nil
}
