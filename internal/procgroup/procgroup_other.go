//go:build !unix

// Package procgroup starts a child process in a process group of its own and
// kills the whole group, so that what the child spawns ends with it.
package procgroup

import (
	"os"
	"os/exec"
)

// Set does nothing here: there are no process groups.
func Set(*exec.Cmd) {}

// Kill cannot reach a child's children here; exec.CommandContext still kills
// the child itself.
func Kill(int) {}

// Guard has nothing to watch here.
func Guard(int) (*os.File, error) { return nil, nil }
