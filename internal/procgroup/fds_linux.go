package procgroup

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// closeOnExec marks every descriptor above 2 close-on-exec: at once with
// close_range(2) (Linux 5.11), else one by one from /proc/self/fd.
func closeOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
