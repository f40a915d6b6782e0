package command

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolround/toolround/tools/command/sandbox"
)

// process is one `sh -c` leading its own process group, so that the
// processes it starts can be signalled together.
type process struct {
	cmd     *exec.Cmd
	pgid    int
	started time.Time
	// exited is closed once the shell has been reaped; state is set before.
	exited chan struct{}
	state  *os.ProcessState
	// sandboxed is set when bubblewrap runs the shell; cut says which
	// resource limits cut it, set before exited is closed.
	sandboxed bool
	sp        *sandbox.Proc
	cut       []string
	// sent has bit n set once signal n was sent to the process before the
	// shell was reaped: inside the sandbox, only that tells a shell killed
	// by a signal from one that exited with 128 + n.
	sent atomic.Uint64
	// scope is the scope of the rule that approved the command (T12), ""
	// for a command a person or an exact rule approved.
	scope string
}

// start runs command with both output streams on out and stdin on the null
// device; scope, when set, is the scope of the rule that approved it (T12),
// which the sandbox enforces.
func (t *Tools) start(command string, env []string, scope string, out *os.File) (*process, error) {
	if strings.ContainsRune(command, 0) {
		return nil, errors.New("the command contains a NUL byte")
	}
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("the command is empty")
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	sp, err := t.wrap(cmd, scope)
	if err != nil {
		return nil, err
	}
	if err := sp.Start(); err != nil {
		return nil, fmt.Errorf("start sh: %w", err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, started: time.Now(), exited: make(chan struct{}),
		sandboxed: t.sandbox.Mode() == sandbox.ModeBwrap, sp: sp, scope: scope}
	go func() {
		_ = cmd.Wait() // the outcome is read from ProcessState
		p.state = cmd.ProcessState
		// In the sandbox the command's PID namespace is gone with bubblewrap;
		// Finish also ends what is left in its cgroups.
		p.cut = sp.Finish()
		close(p.exited)
	}()
	return p, nil
}

// wrap prepares cmd, given its program, arguments, environment and
// output, to run as a command of the workdir: started in it, leading a
// process group of its own, in the sandbox with the room its workspace has
// left and scope (T12). readOnly are more paths it sees read-only. The
// oracle of T13 runs its traced commands through it.
func (t *Tools) wrap(cmd *exec.Cmd, scope string, readOnly ...string) (*sandbox.Proc, error) {
	cmd.Dir = t.cfg.Workdir.Dir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// In session mode the command sees only its own workspace (W2).
	ws := ""
	if t.cfg.Workdir.SessionID() != "" {
		ws = t.cfg.Workdir.Dir()
	}
	// No file may grow past the room the workspace has left, nor may
	// what the command writes to its /tmp and home add up past it (W3).
	room, limited, err := t.cfg.Workdir.Room()
	if err != nil {
		return nil, err
	}
	if !limited {
		room = -1
	}
	return t.sandbox.WrapInRoom(cmd, ws, room, scope, readOnly...)
}

func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		if sig > 0 && sig < 64 {
			p.sent.Or(1 << uint(sig))
		}
	}
	// In the sandbox a SIGTERM goes to the command's processes: bubblewrap
	// would pass it on as SIGKILL to them all. SIGKILL ends bubblewrap, and
	// with it the sandbox.
	if sig != syscall.SIGKILL && p.sp.SignalInside(sig) {
		return
	}
	_ = syscall.Kill(-p.pgid, sig)
	// The shell may have left the group (exec setsid ...); until it is
	// reaped its pid is still its own.
	_ = p.cmd.Process.Signal(sig)
}

// stop ends the process group: see killGroup.
func (p *process) stop(grace time.Duration) {
	killGroup(p.pgid, grace, p.exited, p.signal)
}

// killGroup sends SIGTERM, then SIGKILL once the group leader has exited
// (leaderDone is closed) and no live process is left in the group, or when
// grace has passed.
func killGroup(pgid int, grace time.Duration, leaderDone <-chan struct{}, signal func(syscall.Signal)) {
	signal(syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-leaderDone:
			leaderDone = nil
		case <-poll.C:
		case <-deadline.C:
			signal(syscall.SIGKILL)
			return
		}
		if leaderDone == nil && !groupAlive(pgid) {
			signal(syscall.SIGKILL) // a process may have joined since the check
			return
		}
	}
}

// outcome describes how the shell ended: "exit code 3" or "killed by signal
// SIGTERM", with the exit code (-1 after a signal).
func (p *process) outcome() (string, int, string) {
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := signalName(ws.Signal())
		return "killed by signal " + name, -1, name
	}
	code := p.state.ExitCode()
	if p.sandboxed && code > 128 && code < 128+64 && p.killedInside(syscall.Signal(code-128)) {
		// bubblewrap passes on a shell killed by a signal as 128 + the
		// signal; a shell that ran `exit 129` looks the same, so only a
		// signal that was sent (or a limit that cut it) is named.
		name := signalName(syscall.Signal(code - 128))
		return fmt.Sprintf("exit code %d (killed by signal %s inside the sandbox)", code, name), code, ""
	}
	return fmt.Sprintf("exit code %d", code), code, ""
}

// killedInside reports whether sig could have ended the sandboxed shell:
// it was sent to it, or it is SIGKILL and a resource limit cut it.
func (p *process) killedInside(sig syscall.Signal) bool {
	if p.sent.Load()&(1<<uint(sig)) != 0 {
		return true
	}
	return sig == syscall.SIGKILL && len(p.cut) > 0
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d (%s)", int(s), s)
}

// groupAlive reports whether a process of the group is alive. Zombies do not
// count: where nothing reaps orphans they stay in the group forever.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	pids, ok := groupMembers(pgid)
	if !ok {
		return true // without /proc, trust kill(2)
	}
	return len(pids) > 0
}

// groupMembers lists the live (not zombie) processes of a group from /proc;
// ok is false when /proc cannot be read.
func groupMembers(pgid int) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if ok && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

type procStat struct {
	state     byte
	pgrp      int
	startTime uint64 // clock ticks after boot; tells a process from a later one with its pid
}

// readStat parses /proc/<pid>/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold spaces or ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ppid(4) pgrp(5) ... starttime(22).
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], pgrp: pgrp, startTime: start}, true
}

// hangups makes commands start with SIGHUP at its default once per
// process (keepHangups).
var hangups sync.Once

// keepHangups: a worker started with SIGHUP ignored (under nohup) would
// pass that on to every command, which a hangup then could not end. A
// signal this process catches is reset to its default at exec, so it
// catches SIGHUP, and does nothing with it: the worker goes on as its
// starter meant.
func keepHangups() {
	hangups.Do(func() {
		if signal.Ignored(syscall.SIGHUP) {
			signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		}
	})
}
