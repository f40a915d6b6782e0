package procgroup

import (
	"runtime"
	"sync"
)

// starts carries the starts that run on the starter thread.
var (
	starts      = make(chan func())
	startThread sync.Once
)

// Start calls start, which starts processes (exec.Cmd.Start, or an MCP
// transport's Connect), on a thread kept for that alone, after marking every
// descriptor of the worker above 2 close-on-exec. So:
//   - a child gets only its standard streams and the ExtraFiles it is given,
//     never a descriptor the worker inherited from its own parent or a
//     library opened without close-on-exec;
//   - a parent-death signal set on the child (Set does) fires when the worker
//     dies, not when the Go runtime ends whichever thread forked it: the
//     kernel ties that signal to the thread, and this one never exits.
//
// start must not call Start itself.
func Start(start func() error) error {
	startThread.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the worker
			for f := range starts {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	starts <- func() {
		closeOnExec()
		done <- start()
	}
	return <-done
}
