package procgroup

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}

// startOnDyingThread starts `sleep` with a parent-death signal from a
// goroutine whose thread ends right after (a goroutine that exits locked to
// its thread takes the thread along), through start, and returns the child
// once that thread is gone.
func startOnDyingThread(t *testing.T, start func(*exec.Cmd) error) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	Set(cmd)
	var tid int
	errs := make(chan error, 1)
	run := func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tid = unix.Gettid()
		errs <- start(cmd)
	}
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != os.Getpid() {
			run()
			return
		}
		// The main thread is parked, not ended, by a locked goroutine that
		// exits; holding it makes the next goroutine run on another.
		done := make(chan struct{})
		go func() { defer close(done); run() }()
		<-done
		runtime.UnlockOSThread()
	}()
	require.NoError(t, <-errs)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return os.IsNotExist(err)
	}, 10*time.Second, 5*time.Millisecond, "the thread did not end")
	return cmd
}

// TestStartOutlivesTheCallersThread: a child started through Start keeps
// running when the thread of the goroutine that asked ends, where one
// started on that thread dies with it (the kernel ties the parent-death
// signal to the thread).
func TestStartOutlivesTheCallersThread(t *testing.T) {
	direct := startOnDyingThread(t, (*exec.Cmd).Start)
	require.Eventually(t, func() bool { return !alive(direct.Process.Pid) }, 10*time.Second, 5*time.Millisecond,
		"a child started on the ending thread survived it: the control does not show the hazard")

	kept := startOnDyingThread(t, func(cmd *exec.Cmd) error { return Start(cmd.Start) })
	// The kernel sends the signal as the thread exits, before the thread
	// leaves /proc.
	require.Never(t, func() bool { return !alive(kept.Process.Pid) }, 200*time.Millisecond, 10*time.Millisecond,
		"a child started through Start died with the caller's thread")
}

// TestStartClosesInheritedDescriptors: a descriptor opened without
// close-on-exec does not reach a child started through Start, even one
// numbered like the ExtraFiles the child is given.
func TestStartClosesInheritedDescriptors(t *testing.T) {
	path := t.TempDir() + "/leaked"
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	given, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer given.Close()

	var out strings.Builder
	cmd := exec.Command("sh", "-c", "ls -l /proc/self/fd/")
	cmd.Stdout = &out
	cmd.ExtraFiles = []*os.File{given}
	require.NoError(t, Start(cmd.Start))
	require.NoError(t, cmd.Wait())
	require.NotContains(t, out.String(), path, "the child inherited a descriptor: %s", out.String())
	require.Contains(t, out.String(), " 3 -> /dev/null", "the child lost the descriptor it was given: %s", out.String())
}

// startEscaping starts, under a reaper, a shell that starts a process in a
// session of its own (setsid), prints its pid and then runs script; it
// returns the command, its stdin, its tree and that process's pid.
func startEscaping(t *testing.T, script string) (*exec.Cmd, io.WriteCloser, *Tree, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; "+script)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	tree, err := Contain(cmd, TreeOptions{})
	require.NoError(t, err)
	require.NoError(t, Start(cmd.Start))
	tree.Started(cmd.Process.Pid)
	t.Cleanup(func() { tree.End(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	_, err = fmt.Fscan(out, &pid)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
	require.Eventually(t, func() bool {
		sid, err := unix.Getsid(pid)
		return err == nil && sid == pid
	}, 10*time.Second, 5*time.Millisecond, "the process did not leave the shell's session")
	return cmd, in, tree, pid
}

// TestTreeEndsWhatLeftIt (T8): a process that left the command's session
// and process group (setsid), and whose parent has exited, still ends with
// the command's tree: when End is called, and when the command exits.
func TestTreeEndsWhatLeftIt(t *testing.T) {
	_, _, tree, escaped := startEscaping(t, "exec sleep 1000")
	tree.End()
	require.Eventually(t, func() bool { return !alive(escaped) }, 10*time.Second, 5*time.Millisecond, "End left the process running")

	cmd, in, _, escaped := startEscaping(t, "read _ || exit 3")
	// The shell exits once its stdin closes; its tree ends with it.
	require.NoError(t, in.Close())
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exit)
	require.Equal(t, 3, exit.ExitCode(), "the reaper passes on the command's status")
	require.Eventually(t, func() bool { return !alive(escaped) }, 10*time.Second, 5*time.Millisecond, "the command's exit left the process running")
}
