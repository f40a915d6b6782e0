package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// parentEnv carries the command TestHelperSandboxParent runs.
const parentEnv = "TOOLROUND_SANDBOX_TEST_PARENT"

// TestBwrapCommandDiesWithItsParent: when the process that started a
// sandboxed command dies (a worker killed with SIGKILL), the command dies
// within seconds: bubblewrap's --die-with-parent and the parent-death signal
// of its first process. Whatever the outcome, the test leaves nothing
// running. (Without --die-with-parent the command runs on in its namespace.)
func TestBwrapCommandDiesWithItsParent(t *testing.T) {
	newBwrap(t, Config{}) // skips (or fails in CI) without bubblewrap
	args := fmt.Sprintf("sleep %d", 300000+os.Getpid()%100000)
	t.Cleanup(func() {
		for _, pid := range pidsByArgs(args) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	tmp := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperSandboxParent$", "-test.count=1")
	parent.Env = append(os.Environ(), parentEnv+"="+args, "TMPDIR="+tmp)
	parent.Dir = tmp
	var out strings.Builder
	parent.Stdout, parent.Stderr = &out, &out
	require.NoError(t, parent.Start())
	exited := make(chan struct{})
	go func() { _ = parent.Wait(); close(exited) }()
	t.Cleanup(func() { _ = parent.Process.Kill(); <-exited })

	parentGone := func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}
	require.Eventually(t, func() bool { return parentGone() || len(pidsByArgs(args)) == 1 }, 30*time.Second, 10*time.Millisecond,
		"the sandboxed command did not start")
	require.False(t, parentGone(), "the parent exited before its command ran: %s", &out)
	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	<-exited
	require.Eventually(t, func() bool { return len(pidsByArgs(args)) == 0 }, 5*time.Second, 10*time.Millisecond,
		"the sandboxed command outlived the process that started it")
}

// TestHelperSandboxParent is the parent of TestBwrapCommandDiesWithItsParent:
// it starts the command in the sandbox and waits to be killed.
func TestHelperSandboxParent(t *testing.T) {
	args := os.Getenv(parentEnv)
	if args == "" {
		t.Skip("run by TestBwrapCommandDiesWithItsParent")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	// No cgroups: what ends the command must be bubblewrap and the signal,
	// not a later worker that removes the cgroups of dead ones.
	s, err := New(Config{Mode: ModeBwrap, MaxProcs: -1, MemoryBytes: -1}, wd)
	require.NoError(t, err)
	cmd := exec.Command("/bin/sh", "-c", "exec "+args)
	cmd.Dir = wd
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := s.Wrap(cmd)
	require.NoError(t, err)
	require.NoError(t, p.Start())
	select {}
}

// pidsByArgs lists the live processes whose command line is args.
func pidsByArgs(args string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") != args {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			s := string(st)
			if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 && s[i+2] != 'Z' {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
