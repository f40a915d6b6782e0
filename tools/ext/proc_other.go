//go:build !unix

package ext

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// killGroup cannot reach a script's children here; exec.CommandContext
// still kills the script itself.
func killGroup(int) {}
