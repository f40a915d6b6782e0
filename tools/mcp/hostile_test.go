//go:build linux

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
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

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/tools"
)

// buildHostileServer compiles the misbehaving stdio server.
func buildHostileServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hostileserver")
	out, err := exec.Command("go", "build", "-o", bin, "./internal/hostileserver").CombinedOutput()
	require.NoError(t, err, "go build hostileserver: %s", out)
	return bin
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}

func requireGone(t *testing.T, what string, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond, "%s (pid %d) still runs", what, pid)
}

// killAtEnd ends pid when the test ends, whatever happened.
func killAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

// TestHungServerIsEndedAtItsTimeout: a call to a server that never answers
// ends at the server's timeout_seconds with a result that says so; the
// server's process group (a child it started included) is killed, and the
// next call starts the server again.
func TestHungServerIsEndedAtItsTimeout(t *testing.T) {
	bin := buildHostileServer(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "h", Command: bin, TimeoutSeconds: 1}}})
	server := status(m, "h").PID
	killAtEnd(t, server)
	out, err := call(t, reg, "mcp_h_child", `{}`)
	require.NoError(t, err)
	child, err := strconv.Atoi(out)
	require.NoError(t, err)
	killAtEnd(t, child)

	def, ok := reg.Lookup("mcp_h_hang")
	require.True(t, ok)
	require.Greater(t, def.Timeout, time.Second, "the activity must outlast the call, or its timeout blames the worker")
	// As the activity would: the call's context ends at the tool's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), def.Timeout)
	defer cancel()
	start := time.Now()
	_, err = def.Handler(ctx, tools.Request{CallID: "c1", Args: json.RawMessage(`{}`)})
	require.Error(t, err)
	require.Less(t, time.Since(start), def.Timeout, "the call ran to the activity's timeout")
	require.Nil(t, ctx.Err(), "the call ran to the activity's timeout")
	require.ErrorContains(t, err, `mcp server "h", tool "hang"`)
	require.ErrorContains(t, err, "timeout_seconds")
	require.ErrorContains(t, err, "1s")
	requireGone(t, "the hung server", server)
	requireGone(t, "the hung server's child", child)

	out, err = call(t, reg, "mcp_h_pid", `{}`)
	require.NoError(t, err, "the next call starts the server again")
	require.NotEqual(t, strconv.Itoa(server), out)
	killAtEnd(t, status(m, "h").PID)
}

// sessionOf is the session id of pid, from /proc.
func sessionOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	sid, err := strconv.Atoi(f[3]) // state ppid pgrp session
	require.NoError(t, err)
	return sid
}

// escape has the server start a process that leaves its session and
// process group (setsid), and returns that process's pid.
func escape(t *testing.T, reg *tools.Registry, server int) int {
	t.Helper()
	out, err := call(t, reg, "mcp_h_escape", `{}`)
	require.NoError(t, err)
	pid, err := strconv.Atoi(out)
	require.NoError(t, err)
	killAtEnd(t, pid)
	// The shell returns once it has forked; setsid follows.
	require.Eventually(t, func() bool { return alive(pid) && sessionOf(t, pid) != sessionOf(t, server) }, 10*time.Second, 5*time.Millisecond,
		"the process did not leave the server's session")
	return pid
}

// TestEscapedProcessesEndWithTheServer (T8): what a stdio server starts
// ends with the server, setsid or not: at a call's timeout, which ends the
// server (the next call starts it again), and when the worker closes it.
func TestEscapedProcessesEndWithTheServer(t *testing.T) {
	bin := buildHostileServer(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "h", Command: bin, TimeoutSeconds: 1}}})
	server := status(m, "h").PID
	killAtEnd(t, server)
	escaped := escape(t, reg, server)

	_, err := call(t, reg, "mcp_h_hang", `{}`)
	require.ErrorContains(t, err, "within its timeout")
	requireGone(t, "a process the timed-out server started in a session of its own", escaped)

	out, err := call(t, reg, "mcp_h_pid", `{}`)
	require.NoError(t, err, "the next call starts the server again")
	require.NotEqual(t, strconv.Itoa(server), out)
	server = status(m, "h").PID
	killAtEnd(t, server)
	escaped = escape(t, reg, server)
	require.NoError(t, m.Close())
	requireGone(t, "a process the closed server started in a session of its own", escaped)
}

// TestServerThatHangsWhenRestartedNamesItsTimeout: a call whose server must
// start again (the last one died) and whose restart never answers the
// handshake ends at the server's timeout_seconds with a result that names
// the server and that timeout, as a hung call does.
func TestServerThatHangsWhenRestartedNamesItsTimeout(t *testing.T) {
	bin := buildHostileServer(t)
	flag := filepath.Join(t.TempDir(), "hang")
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "h", Command: bin, TimeoutSeconds: 1,
		Env: map[string]string{"HOSTILE_HANG_IF": flag}}}})
	server := status(m, "h").PID
	killAtEnd(t, server)
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	require.NoError(t, syscall.Kill(server, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !status(m, "h").Connected }, 10*time.Second, 20*time.Millisecond)

	def, ok := reg.Lookup("mcp_h_pid")
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), def.Timeout)
	defer cancel()
	_, err := def.Handler(ctx, tools.Request{CallID: "c1", Args: json.RawMessage(`{}`)})
	require.Error(t, err)
	require.Nil(t, ctx.Err(), "the call ran to the activity's timeout")
	require.False(t, tools.IsTransient(err), "a server that does not answer within its timeout is not retried at once: %v", err)
	require.ErrorContains(t, err, `mcp server "h", tool "pid"`)
	require.ErrorContains(t, err, "within its timeout of 1s")
	require.ErrorContains(t, err, "timeout_seconds")
}

// TestServersInheritNoDescriptors: a descriptor the worker holds without
// close-on-exec does not reach a stdio server.
func TestServersInheritNoDescriptors(t *testing.T) {
	leaked := testenv.LeakDescriptors(t)
	bin := buildHostileServer(t)
	m, reg := connect(t, Config{Servers: []ServerConfig{{Name: "h", Command: bin}}})
	killAtEnd(t, status(m, "h").PID)
	out, err := call(t, reg, "mcp_h_fds", `{}`)
	require.NoError(t, err)
	require.Contains(t, out, "0 -> ")
	require.NotContains(t, out, leaked, "the server inherited a descriptor of the worker's")
}

// TestServersDieWithTheWorker: a SIGKILL of the worker takes its stdio
// servers along, and the processes they started, one that left the
// server's session (setsid) included (T8).
func TestServersDieWithTheWorker(t *testing.T) {
	if os.Getenv("TOOLROUND_MCP_TEST_WORKER") != "" {
		return // this is the worker, run by workerWithServer
	}
	bin := buildHostileServer(t)
	server, child, escaped, worker := workerWithServer(t, bin)
	require.True(t, alive(server) && alive(child))
	require.Eventually(t, func() bool { return alive(escaped) && sessionOf(t, escaped) != sessionOf(t, server) }, 10*time.Second, 5*time.Millisecond,
		"the process did not leave the server's session")
	require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
	_ = worker.Wait()
	requireGone(t, "the server of a killed worker", server)
	requireGone(t, "the child of the server of a killed worker", child)
	requireGone(t, "a process in a session of its own that the server of a killed worker started", escaped)
}

// workerWithServer runs this test binary as a worker (TestHelperWorker)
// connected to the server bin, whose child and escaped process (setsid) it
// has started, and returns the server's, the child's and that process's pids.
func workerWithServer(t *testing.T, bin string) (server, child, escaped int, worker *exec.Cmd) {
	t.Helper()
	worker = exec.Command(os.Args[0], "-test.run=^TestHelperWorker$", "-test.count=1")
	worker.Env = append(os.Environ(), "TOOLROUND_MCP_TEST_WORKER="+bin)
	worker.Stderr = os.Stderr
	stdout, err := worker.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, worker.Start())
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		_, err := fmt.Sscanf(line, "server %d child %d escaped %d", &server, &child, &escaped)
		require.NoError(t, err, "the worker said %q", line)
	case <-time.After(60 * time.Second):
		t.Fatal("the worker did not start its server")
	}
	killAtEnd(t, server)
	killAtEnd(t, child)
	killAtEnd(t, escaped)
	go func() {
		for range lines {
		}
	}()
	return server, child, escaped, worker
}

// TestHelperWorker is the worker of TestServersDieWithTheWorker: it connects
// to the server, has it start a child, prints both pids and waits to be
// killed. The calls run on goroutines that end, as activities do.
func TestHelperWorker(t *testing.T) {
	bin := os.Getenv("TOOLROUND_MCP_TEST_WORKER")
	if bin == "" {
		t.Skip("run by TestServersDieWithTheWorker")
	}
	done := make(chan struct{})
	var m *Manager
	var reg *tools.Registry
	go func() {
		defer close(done)
		m, reg = connect(t, Config{Servers: []ServerConfig{{Name: "h", Command: bin}}})
	}()
	<-done
	out, err := call(t, reg, "mcp_h_child", `{}`)
	require.NoError(t, err)
	escaped, err := call(t, reg, "mcp_h_escape", `{}`)
	require.NoError(t, err)
	fmt.Printf("server %d child %s escaped %s\n", status(m, "h").PID, out, escaped)
	select {}
}

// TestServersRootedInTheWorkspaceKeepToItsLimit (W3): a stdio server that
// starts in a workspace under WORKSPACE_MAX_BYTES writes no file past the
// room it had left, and a call that leaves the workspace over the limit
// ends workspace_full, the files kept.
func TestServersRootedInTheWorkspaceKeepToItsLimit(t *testing.T) {
	bin := buildHostileServer(t)
	dir := t.TempDir()
	wd, err := tools.OpenWorkdir(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wd.Close() })
	wd.SetMaxBytes(1 << 20)
	m, reg := connect(t, Config{Dir: dir, Quota: wd, Servers: []ServerConfig{{Name: "h", Command: bin}}})
	killAtEnd(t, status(m, "h").PID)

	_, err = call(t, reg, "mcp_h_write", `{"name": "big", "bytes": 2000000}`)
	require.Error(t, err, "a file past the room was written")
	if fi, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		require.LessOrEqual(t, fi.Size(), int64(1<<20), "RLIMIT_FSIZE stopped the file at the room left")
		require.NoError(t, os.Remove(filepath.Join(dir, "big")))
	}

	for _, f := range []string{"f1", "f2"} {
		out, err := call(t, reg, "mcp_h_write", `{"name": "`+f+`", "bytes": 400000}`)
		require.NoError(t, err)
		require.Equal(t, "written", out)
	}
	_, err = call(t, reg, "mcp_h_write", `{"name": "f3", "bytes": 400000}`)
	require.Equal(t, tools.CodeWorkspaceFull, tools.ErrorCode(err), "%v", err)
	require.ErrorContains(t, err, `mcp server "h", tool "write"`)
	require.FileExists(t, filepath.Join(dir, "f3"), "its files stay")
}
