//go:build !linux

package procgroup

import (
	"os"
	"os/exec"
)

// Tree is a command in a process group of its own, with a watchdog that
// kills the group when the worker dies. Without Linux's child subreapers a
// process that leaves the group (setsid) is out of reach.
type Tree struct {
	pid   int
	guard *os.File
}

// TreeOptions are limits the command runs with; only Linux sets them.
type TreeOptions struct {
	FileSize      int64
	LimitFileSize bool
}

// Contain makes cmd start in a process group of its own; start it with
// Start, then call Started.
func Contain(cmd *exec.Cmd, _ TreeOptions) (*Tree, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	Set(cmd)
	return &Tree{}, nil
}

// Started starts the watchdog of the group pid leads.
func (t *Tree) Started(pid int) {
	t.pid = pid
	t.guard, _ = Guard(pid)
}

// Pid is the command's pid.
func (t *Tree) Pid() int { return t.pid }

// End kills the process group and its watchdog.
func (t *Tree) End() {
	if t == nil {
		return
	}
	Kill(t.pid)
	if t.guard != nil {
		_ = t.guard.Close()
	}
}
