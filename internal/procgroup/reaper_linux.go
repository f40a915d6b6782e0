package procgroup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperName is argv[0] of the worker's own binary run as a reaper.
const reaperName = "toolround-reaper"

// termGrace is how long the reaper lets its command end on SIGTERM before
// it kills the whole tree: less than an MCP client waits before SIGKILL,
// which would leave no one to end the processes that left the command.
const termGrace = 2 * time.Second

func init() {
	// Every binary that can start a reaper imports this package, so the
	// reaper is the worker's own binary, run again (/proc/self/exe).
	if len(os.Args) > 3 && os.Args[0] == reaperName {
		os.Exit(reap(os.Args[1], os.Args[2], os.Args[3:]))
	}
}

// Tree is a command started under a reaper: a child subreaper
// (PR_SET_CHILD_SUBREAPER) that runs the command, so that every process the
// command starts stays its descendant, whatever session or process group it
// moves to (setsid) and even once its parent has exited. The reaper kills
// all of them when the command exits, when End is called, and when the
// worker dies however it dies (its end of a pipe closes).
type Tree struct {
	guardR, guardW *os.File
	// The reaper writes the command's pid to pidW, its descriptor 4.
	pidR, pidW *os.File
	pid        int
	cmdPid     int
}

// TreeOptions are limits the reaper sets on itself before it starts the
// command, which inherits them.
type TreeOptions struct {
	// FileSize, with LimitFileSize, is RLIMIT_FSIZE: no file grows past
	// it (0: the command can write no file).
	FileSize      int64
	LimitFileSize bool
}

// Contain rewrites cmd, already given its program, arguments, folder,
// environment and streams, to run under a reaper, in a process group of its
// own. Start cmd with Start, then call Started; End ends the tree.
// cmd.ExtraFiles must be empty.
func Contain(cmd *exec.Cmd, opts TreeOptions) (*Tree, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	// What the reaper could not start, the caller hears of here.
	prog := cmd.Path
	if !filepath.IsAbs(prog) && cmd.Dir != "" {
		prog = filepath.Join(cmd.Dir, prog)
	}
	if _, err := exec.LookPath(prog); err != nil {
		return nil, err
	}
	if len(cmd.ExtraFiles) > 0 {
		return nil, errors.New("procgroup: a contained command cannot be given more descriptors")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reaper: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("reaper: %w", err)
	}
	fsize := "-"
	if opts.LimitFileSize {
		fsize = strconv.FormatInt(max(0, opts.FileSize), 10)
	}
	argv0 := cmd.Path
	if len(cmd.Args) > 0 {
		argv0 = cmd.Args[0]
	}
	args := []string{reaperName, fsize, cmd.Path, argv0}
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path, cmd.Args = "/proc/self/exe", args
	cmd.ExtraFiles = []*os.File{r, pw}
	// No parent-death signal: the reaper must outlive the worker to end
	// the tree; the closing pipe tells it the worker is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &Tree{guardR: r, guardW: w, pidR: pr, pidW: pw}, nil
}

// Started takes note that the reaper runs as pid, and learns the
// command's pid from it (Pid).
func (t *Tree) Started(pid int) {
	t.pid = pid
	_ = t.guardR.Close()
	_ = t.pidW.Close()
	_ = t.pidR.SetReadDeadline(time.Now().Add(5 * time.Second))
	var n int
	if _, err := fmt.Fscan(t.pidR, &n); err == nil && n > 0 {
		t.cmdPid = n
	}
	_ = t.pidR.Close()
}

// Pid is the command's pid, or the reaper's when the reaper did not say
// (it could not start the command).
func (t *Tree) Pid() int {
	if t.cmdPid > 0 {
		return t.cmdPid
	}
	return t.pid
}

// End has the reaper kill every process of the tree and waits (a few
// seconds at most) until it has, then kills the process group for good
// measure. It may be called more than once.
func (t *Tree) End() {
	if t == nil {
		return
	}
	for _, f := range []*os.File{t.guardR, t.guardW, t.pidR, t.pidW} {
		_ = f.Close()
	}
	if t.pid <= 0 {
		return
	}
	deadline := time.Now().Add(2 * termGrace)
	for running(t.pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	Kill(t.pid)
}

// running reports whether pid runs: a zombie does not.
func running(pid int) bool {
	st, ok := stat(pid)
	return ok && st.state != 'Z' && st.state != 'X'
}

type procStat struct {
	state byte
	ppid  int
}

func stat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid}, true
}

// reap is the reaper: it becomes a child subreaper, runs path with argv,
// reaps whatever is left to it, and kills every descendant when the command
// exits, when descriptor 3 (the worker's pipe) closes, or termGrace after a
// SIGTERM that it passes on. It writes the command's pid to descriptor 4,
// and exits with the command's status.
func reap(fsize, path string, argv []string) int {
	runtime.LockOSThread() // the child's parent-death signal follows this thread
	guard := os.NewFile(3, "guard")
	syscall.CloseOnExec(3)
	pidOut := os.NewFile(4, "pid")
	syscall.CloseOnExec(4)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "%s: no child subreaper (%v): processes that leave the command's tree may outlive it\n", reaperName, err)
	}
	if fsize != "-" {
		n, err := strconv.ParseInt(fsize, 10, 64)
		if err == nil {
			err = unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)})
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: RLIMIT_FSIZE %s: %v\n", reaperName, fsize, err)
			return 126
		}
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: start %s: %v\n", reaperName, path, err)
		return 127
	}
	child := cmd.Process.Pid
	if _, err := fmt.Fprintln(pidOut, child); err != nil {
		fmt.Fprintf(os.Stderr, "%s: tell the server's pid: %v\n", reaperName, err)
	}
	_ = pidOut.Close()

	var once sync.Mutex
	end := func(code int) {
		once.Lock() // never unlocked: the first to end the tree exits
		killDescendants()
		os.Exit(code)
	}
	go func() {
		_, _ = io.Copy(io.Discard, guard)
		end(128 + int(syscall.SIGKILL))
	}()
	go func() {
		for sig := range sigs {
			_ = syscall.Kill(child, sig.(syscall.Signal))
			if sig == syscall.SIGTERM {
				time.AfterFunc(termGrace, func() { end(128 + int(syscall.SIGTERM)) })
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid == child {
			code := ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			if err != nil {
				code = 125
			}
			end(code)
		}
	}
}

// killDescendants kills every descendant of this process, over and over
// until none runs: one may fork while it is killed, and a child subreaper
// inherits the orphans of those it kills.
func killDescendants() {
	self := os.Getpid()
	deadline := time.Now().Add(termGrace)
	for time.Now().Before(deadline) {
		left := false
		for _, pid := range descendants(self) {
			if running(pid) {
				left = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		// Zombies left to the reaper are collected as they come.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if !left {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// descendants lists the processes below root, from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := stat(pid); ok {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
