//go:build !linux

package procgroup

// closeOnExec does nothing here: Go opens its own descriptors close-on-exec,
// and there is no portable way to list the others.
func closeOnExec() {}
