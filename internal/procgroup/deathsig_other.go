//go:build unix && !linux

package procgroup

import "syscall"

// setDeathSignal does nothing here: only Linux has a parent-death signal.
func setDeathSignal(*syscall.SysProcAttr) {}
