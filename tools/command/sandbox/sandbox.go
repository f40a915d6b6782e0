package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolround/toolround/internal/procgroup"
)

// reservedDir is the tools' own folder in the workdir (tools.ReservedDir);
// commands see it read-only.
const reservedDir = ".toolround"

// cgroupSeq numbers the commands' cgroups. It is the process's, not a
// Sandbox's: every Sandbox of the process shares the folder
// toolround-<pid>, and the cgroup of one's command may still be being removed
// when another's starts.
var cgroupSeq atomic.Uint64

// Sandbox runs commands in the mode chosen at start. It is safe for
// concurrent use.
type Sandbox struct {
	cfg      Config
	mode     string
	reason   string
	fallback bool
	// unusable is why bubblewrap could not run commands, on a fallback.
	unusable error
	workdir  string
	shell    string
	// base are the bubblewrap options every command shares.
	base []string
	// limits set with prlimit(2) before bubblewrap starts.
	rlimits []rlimit
	pids    *cgroupController
	memory  *cgroupController
	// noPids is why no pids cgroup is used; user, when set, is whom a root
	// worker runs commands as instead, so that RLIMIT_NPROC binds them.
	noPids error
	user   *commandUser
	notes  []string
	// sizedTmp is set when bubblewrap can size a tmpfs (--size): a
	// command with a room (WrapInRoom) gets its /tmp and home there.
	sizedTmp bool
	// removing counts the cgroups still being removed; Close waits for them.
	removing sync.WaitGroup
}

// New chooses the mode: cfg.Mode, with bubblewrap tried out once on workdir.
// It fails only when SANDBOX=bwrap and bubblewrap does not work here; the
// error is one line that says why.
func New(cfg Config, workdir string) (*Sandbox, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Sandbox{cfg: cfg, workdir: workdir}
	if cfg.Mode == ModeNone {
		s.mode, s.reason = ModeNone, "SANDBOX=none: commands run unconfined, as the worker's user"
		return s, nil
	}
	if err := s.setup(); err != nil {
		if cfg.Mode == ModeBwrap {
			s.Close()
			return nil, fmt.Errorf("SANDBOX=bwrap, but bubblewrap cannot run commands here: %v", err)
		}
		s.mode, s.fallback, s.unusable = ModeNone, true, err
		s.reason = fmt.Sprintf("SANDBOX=auto, but bubblewrap cannot run commands here (%v): commands run UNCONFINED, as the worker's user; "+
			"install bubblewrap (Debian: apt-get install bubblewrap) or set SANDBOX=none to say this is intended", err)
		s.Close()
		s.base, s.rlimits, s.pids, s.memory, s.user, s.notes = nil, nil, nil, nil, nil, nil
		return s, nil
	}
	s.mode = ModeBwrap
	s.reason = fmt.Sprintf("SANDBOX=%s: bubblewrap works here; %s", cfg.Mode, s.Describe())
	return s, nil
}

// Mode is the mode commands run in: ModeBwrap or ModeNone.
func (s *Sandbox) Mode() string { return s.mode }

// Reason says why that mode is active, for the worker log.
func (s *Sandbox) Reason() string { return s.reason }

// Fallback reports that SANDBOX=auto found no usable bubblewrap: the worker
// should warn.
func (s *Sandbox) Fallback() bool { return s.fallback }

// Unusable is why SANDBOX=auto found bubblewrap unusable; nil otherwise.
func (s *Sandbox) Unusable() error { return s.unusable }

// Warnings are limits that could not be set up here.
func (s *Sandbox) Warnings() []string { return s.notes }

// Label names the mode in command results: "bwrap, network none" or "none".
func (s *Sandbox) Label() string {
	if s.mode != ModeBwrap {
		return ModeNone
	}
	return "bwrap, network " + s.cfg.Network
}

// Describe lists what the sandbox enforces.
func (s *Sandbox) Describe() string {
	if s.mode == ModeNone && s.base == nil {
		return "no sandbox"
	}
	var parts []string
	parts = append(parts, "network "+s.cfg.Network)
	if s.pids != nil {
		parts = append(parts, fmt.Sprintf("at most %d processes (pids cgroup)", s.cfg.MaxProcs))
	} else if s.user != nil {
		parts = append(parts, fmt.Sprintf("at most %d more processes of the commands' user (RLIMIT_NPROC; no pids cgroup, so commands run as %s)", s.cfg.MaxProcs, s.user))
	} else if s.hasRlimit(rlimitNproc) {
		parts = append(parts, fmt.Sprintf("at most %d more processes of the user (RLIMIT_NPROC)", s.cfg.MaxProcs))
	}
	if s.memory != nil {
		parts = append(parts, fmt.Sprintf("memory %d MiB per command (memory cgroup)", s.cfg.MemoryBytes>>20))
	} else if s.hasRlimit(rlimitAS) {
		parts = append(parts, fmt.Sprintf("address space %d MiB per process (RLIMIT_AS)", s.cfg.MemoryBytes>>20))
	}
	if s.hasRlimit(rlimitCPU) {
		parts = append(parts, fmt.Sprintf("CPU time %d s per process", s.cfg.CPUSeconds))
	}
	if s.hasRlimit(rlimitFsize) {
		parts = append(parts, fmt.Sprintf("files up to %d MiB", s.cfg.FileSizeBytes>>20))
	}
	return strings.Join(parts, ", ")
}

func (s *Sandbox) hasRlimit(res int) bool {
	for _, r := range s.rlimits {
		if r.resource == res {
			return true
		}
	}
	return false
}

// Close removes what New made (the worker's cgroup folders).
func (s *Sandbox) Close() {
	s.removing.Wait()
	for _, c := range []*cgroupController{s.pids, s.memory} {
		if c != nil {
			c.close()
		}
	}
}

// setup finds bubblewrap, builds the shared options, makes the cgroups and
// tries a command.
func (s *Sandbox) setup() error {
	bwrap, err := exec.LookPath(s.cfg.Bwrap)
	if err != nil {
		return fmt.Errorf("%s not found: %w", s.cfg.Bwrap, err)
	}
	if s.shell, err = exec.LookPath("/bin/sh"); err != nil {
		return fmt.Errorf("/bin/sh: %w", err)
	}
	if !filepath.IsAbs(s.workdir) {
		return fmt.Errorf("workdir %q is not an absolute path", s.workdir)
	}
	// The reserved folder is mounted read-only, so it must exist.
	if err := os.MkdirAll(filepath.Join(s.workdir, reservedDir), 0o755); err != nil {
		return err
	}
	s.base = append([]string{bwrap}, s.baseArgs()...)
	s.setupLimits()
	if help, herr := exec.Command(bwrap, "--help").CombinedOutput(); herr == nil && bytes.Contains(help, []byte("--size")) {
		s.sizedTmp = true
	}
	err = s.probe()
	if err != nil && s.sizedTmp {
		// An older kernel or bubblewrap may refuse the sized tmpfs.
		s.sizedTmp = false
		if err = s.probe(); err == nil {
			s.notes = append(s.notes, noSizedTmp)
		}
	} else if err == nil && !s.sizedTmp {
		s.notes = append(s.notes, noSizedTmp)
	}
	if err != nil && s.user != nil {
		// The user may lack search access to a folder above the workdir, or
		// user namespaces may be off: commands then run as the worker.
		s.notes = append(s.notes, notBounded(s.noPids, fmt.Errorf("as %s: %w", s.user, err)))
		s.user = nil
		s.dropRlimit(rlimitNproc)
		err = s.probe()
	} else if err == nil && s.user != nil {
		s.notes = append(s.notes, fmt.Sprintf("no pids cgroup (%v): commands run as %s, whose processes RLIMIT_NPROC bounds", s.noPids, s.user))
	}
	if err == nil {
		if note := gitFenceNote(); note != "" {
			s.notes = append(s.notes, note)
		}
	}
	return err
}

// noSizedTmp is the worker log's note when a command's /tmp cannot be a
// tmpfs of the room its workspace has left.
const noSizedTmp = "bubblewrap cannot size a tmpfs here (--size, bubblewrap 0.7 or later): a command's /tmp and home are folders on disk that WORKSPACE_MAX_BYTES does not count (RLIMIT_FSIZE still bounds each file)"

func (s *Sandbox) dropRlimit(res int) {
	kept := s.rlimits[:0]
	for _, r := range s.rlimits {
		if r.resource != res {
			kept = append(kept, r)
		}
	}
	s.rlimits = kept
}

// probe runs a command in the sandbox.
func (s *Sandbox) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The probe checks the parts every command relies on: the workdir is
	// writable, the reserved folder is not, /proc is the sandbox's own.
	probe := "test -w . || { echo the workdir is not writable; exit 1; }; ! test -w " + reservedDir + " || { echo " + reservedDir + " is writable; exit 1; }"
	if pid := os.Getpid(); pid > 100 {
		probe += fmt.Sprintf("; test ! -e /proc/%d || { echo the worker is in /proc; exit 1; }", pid)
	}
	if s.user != nil {
		probe += fmt.Sprintf("; test \"$(id -u)\" = %d || { echo runs as uid $(id -u); exit 1; }", s.user.uid)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", probe)
	cmd.Dir = s.workdir
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	// With a room, as a command of a workspace under WORKSPACE_MAX_BYTES
	// runs: its /tmp is then a sized tmpfs.
	room := int64(-1)
	if s.sizedTmp {
		room = 1 << 20
	}
	p, err := s.WrapInRoom(cmd, "", room, "")
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	err = cmd.Wait()
	p.Finish()
	if err != nil {
		msg := strings.TrimSpace(strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0])
		if msg == "" {
			msg = "the test command failed"
		}
		return fmt.Errorf("%s (%v)", msg, err)
	}
	return nil
}

// baseArgs are the bubblewrap options of every command.
func (s *Sandbox) baseArgs() []string {
	a := []string{"--die-with-parent", "--new-session", "--unshare-all"}
	if s.cfg.Network == NetworkHost {
		a = append(a, "--share-net")
	}
	if os.Geteuid() == 0 {
		// bubblewrap run by root keeps root's capabilities unless told not to:
		// with them a command could mount or make device nodes.
		a = append(a, "--cap-drop", "ALL")
	}
	a = append(a, "--ro-bind", "/usr", "/usr")
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--ro-bind", "/etc", "/etc")
	for _, p := range s.cfg.ReadOnly {
		a = append(a, "--ro-bind-try", p, p)
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/run", "--dir", "/var", "--symlink", "../run", "/var/run")
	if s.cfg.Network == NetworkHost {
		// resolv.conf often points here.
		a = append(a, "--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve")
	}
	// What other users could not read stays hidden from commands too.
	a = append(a, hideArgs(unreadable("/etc"))...)
	return a
}

// unreadable lists the files and folders under root that other users cannot
// read, without descending into the folders it lists.
func unreadable(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 || p == root {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		perm := fi.Mode().Perm()
		switch {
		case d.IsDir() && perm&0o005 != 0o005:
			out = append(out, p)
			return filepath.SkipDir
		case !d.IsDir() && perm&0o004 == 0:
			out = append(out, p)
		}
		return nil
	})
	return out
}

// hideArgs masks each path: an empty folder over a folder, the null device
// over anything else.
func hideArgs(paths []string) []string {
	var a []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			a = append(a, "--tmpfs", p, "--remount-ro", p)
		default:
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	return a
}

// visible reports whether p lies in a folder commands see.
func (s *Sandbox) visible(p string) bool {
	roots := append([]string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", s.workdir}, s.cfg.ReadOnly...)
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Proc is one command prepared by Wrap: start it with Start, and after
// cmd.Wait call Finish.
type Proc struct {
	s    *Sandbox
	cmd  *exec.Cmd
	tmp  string
	gate *os.File
	// gitDir holds the sanitised copies of the git configs that a command
	// a rule approved sees (gitFence).
	gitDir string

	// fsize, when fsizeOn, is the command's RLIMIT_FSIZE if it is
	// lower than COMMAND_FILE_SIZE_MB's: the room left in its workspace
	// (WORKSPACE_MAX_BYTES, W3).
	fsize   int64
	fsizeOn bool

	// protected is, under ScopeWrite, the protected set the command
	// started with: Finish removes what it added to it.
	protected *protectedScan

	mu      sync.Mutex // guards cgroups and done against SignalInside
	cgroups []*cgroup
	done    bool
	cut     []string
}

// Wrap prepares cmd, already given its program, arguments, folder,
// environment and output, to run in the sandbox. In mode none it is left as
// it is. cmd.SysProcAttr is kept (a process group of its own, say) and the
// process is killed when the worker dies.
func (s *Sandbox) Wrap(cmd *exec.Cmd) (*Proc, error) {
	return s.WrapIn(cmd, "")
}

// WrapIn is Wrap for a command of one session's workspace (W2), a folder
// inside the workdir: the command sees the workdir as an empty tmpfs that
// holds only workspace, bound writable, and its .toolround read-only. ""
// or the workdir itself is Wrap. readOnly are more paths the command sees
// read-only (a script's program, found outside the workdir).
func (s *Sandbox) WrapIn(cmd *exec.Cmd, workspace string, readOnly ...string) (*Proc, error) {
	return s.WrapInRoom(cmd, workspace, -1, "", readOnly...)
}

// minTmp is the size of the /tmp of a command whose workspace has no room
// left: a tmpfs of size 0 would have no limit.
const minTmp = 4096

// Scopes of a command a remembered rule approved (T12): ScopeReadOnly sees
// its workspace read-only, ScopeWrite writable; under both the protected set
// (scanProtected) is read-only.
const (
	ScopeReadOnly = "read-only"
	ScopeWrite    = "write"
)

// WrapScoped is WrapIn for a command a remembered rule approved, run with
// the rule's scope (T12): "" is WrapIn; ScopeReadOnly binds the workspace,
// and so its protected set, read-only; ScopeWrite binds the protected set
// the workspace holds when the command starts read-only. Under both, git
// runs over sanitised copies of the configs of the repositories the
// workspace holds then, and uses no other repository (gitFence). Any other
// scope is refused. In mode none it is left as it is, as Wrap leaves it.
func (s *Sandbox) WrapScoped(cmd *exec.Cmd, workspace, scope string, readOnly ...string) (*Proc, error) {
	return s.WrapInRoom(cmd, workspace, -1, scope, readOnly...)
}

// WrapInRoom is WrapScoped for a command whose workspace has room bytes
// left under WORKSPACE_MAX_BYTES (W3); a negative room is no limit. No file
// the command writes grows past room (RLIMIT_FSIZE, below
// COMMAND_FILE_SIZE_MB when that is larger: a write past it fails, the
// process gets SIGXFSZ), and its private /tmp and home are one tmpfs of
// that size (at least a page), so that what it writes there counts towards
// the same room. In mode none none of this applies.
func (s *Sandbox) WrapInRoom(cmd *exec.Cmd, workspace string, room int64, scope string, readOnly ...string) (*Proc, error) {
	p := &Proc{s: s, cmd: cmd}
	if scope != "" && scope != ScopeReadOnly && scope != ScopeWrite {
		return nil, fmt.Errorf("sandbox: unknown scope %q", scope)
	}
	if room >= 0 {
		p.fsize, p.fsizeOn = room, true
	}
	if s.base == nil {
		return p, nil
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	binds, err := s.workspaceArgs(workspace, scope == ScopeReadOnly)
	if err != nil {
		return nil, err
	}
	root := s.workdir
	if workspace != "" {
		root = filepath.Clean(workspace)
	}
	var fence *gitFence
	if scope != "" {
		fence = scanGit(root)
		if scope == ScopeWrite {
			binds = append(binds, fence.pinArgs()...)
		}
	}
	if scope == ScopeWrite {
		// Under ScopeReadOnly the whole workspace, the set included, is
		// read-only already.
		ps := scanProtected(root)
		a, err := ps.args()
		if err != nil {
			return nil, err
		}
		binds = append(binds, a...)
		p.protected = ps
	}
	if fence != nil {
		a, err := p.gitConfigs(fence)
		if err != nil {
			return nil, err
		}
		binds = append(binds, a...)
		cmd.Env = append(cmd.Env, fence.env()...)
	}
	for _, p := range readOnly {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: read-only path %q is not absolute", p)
		}
		binds = append(binds, "--ro-bind", p, p)
	}
	dir := cmd.Dir
	if dir == "" {
		dir = s.workdir
	}
	args := append([]string(nil), s.base...)
	home := envValue(cmd.Env, "HOME")
	if home == "/" || !filepath.IsAbs(home) {
		home = ""
	}
	if home != "" {
		home = filepath.Clean(home)
	}
	if s.user != nil {
		// Files the worker's tools wrote since the last command become
		// writable for the command's user; its /tmp and home are its own.
		if err := s.user.grant(); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if p.fsizeOn && s.sizedTmp {
		args = append(args, "--perms", "01777", "--size", strconv.FormatInt(max(p.fsize, minTmp), 10), "--tmpfs", "/tmp")
		switch {
		case home == "":
		case home == "/tmp" || strings.HasPrefix(home, "/tmp/"):
			args = append(args, "--perms", "0700", "--dir", home)
		case !s.visible(home):
			// The home lies in the same tmpfs, so that both share the room.
			args = append(args, "--perms", "0700", "--dir", "/tmp/.home", "--symlink", "/tmp/.home", home)
		default:
			// A link cannot replace a folder the command sees: a tmpfs
			// of its own, of the same size.
			args = append(args, "--perms", "0700", "--size", strconv.FormatInt(max(p.fsize, minTmp), 10), "--tmpfs", home)
		}
		return p.finishWrap(cmd, args, binds, dir)
	}
	tmp, err := os.MkdirTemp("", "toolround-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private /tmp: %w", err)
	}
	p.tmp = tmp
	if s.user != nil {
		if err := os.Lchown(tmp, int(s.user.uid), int(s.user.gid)); err != nil {
			p.cleanup()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	args = append(args, "--bind", tmp, "/tmp")
	if home != "" {
		if err := os.Mkdir(filepath.Join(tmp, ".home"), 0o700); err != nil {
			p.cleanup()
			return nil, fmt.Errorf("sandbox: empty home: %w", err)
		}
		if s.user != nil {
			if err := os.Lchown(filepath.Join(tmp, ".home"), int(s.user.uid), int(s.user.gid)); err != nil {
				p.cleanup()
				return nil, fmt.Errorf("sandbox: empty home: %w", err)
			}
		}
		args = append(args, "--bind", filepath.Join(tmp, ".home"), home)
	}
	return p.finishWrap(cmd, args, binds, dir)
}

// finishWrap adds the workspace's binds, the hidden paths and the command
// to bubblewrap's args, and puts the gate shell in front.
func (p *Proc) finishWrap(cmd *exec.Cmd, args, binds []string, dir string) (*Proc, error) {
	s := p.s
	args = append(args, binds...)
	var hide []string
	for _, h := range s.cfg.Hide {
		if h != "" && filepath.IsAbs(h) && s.visible(filepath.Clean(h)) {
			hide = append(hide, filepath.Clean(h))
		}
	}
	args = append(args, hideArgs(hide)...)
	args = append(args, "--chdir", dir, "--", cmd.Path)
	if s.user != nil {
		// The shell at the gate runs as the worker, so the worker may set
		// its limits (without CAP_SYS_RESOURCE, a root worker cannot set
		// those of another user's process); past the gate it becomes the
		// user, keeping them, and then bubblewrap.
		args = append(s.user.switchArgs(), args...)
	}
	args = append(args, cmd.Args[1:]...)

	gateR, gateW, err := os.Pipe()
	if err != nil {
		p.cleanup()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.gate = gateW
	// The shell waits until the process is in its cgroups and has its limits,
	// then becomes bubblewrap; nothing it starts escapes either.
	const gateScript = `read go <&3 && [ "$go" = go ] || exit 125; exec 3<&-; exec "$@"`
	cmd.Path = s.shell
	cmd.Args = append([]string{"sh", "-c", gateScript, "toolround-sandbox"}, args...)
	cmd.ExtraFiles = append([]*os.File{gateR}, cmd.ExtraFiles...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setPdeathsig(cmd.SysProcAttr)
	return p, nil
}

// workspaceArgs bind the folder a command may change: the workdir, or only
// one workspace inside it over an empty tmpfs; the reserved folder
// read-only in either.
func (s *Sandbox) workspaceArgs(workspace string, readOnly bool) ([]string, error) {
	bind := "--bind"
	if readOnly {
		bind = "--ro-bind"
	}
	if workspace == "" || filepath.Clean(workspace) == s.workdir {
		return []string{bind, s.workdir, s.workdir,
			"--ro-bind", filepath.Join(s.workdir, reservedDir), filepath.Join(s.workdir, reservedDir)}, nil
	}
	ws := filepath.Clean(workspace)
	if !filepath.IsAbs(ws) || !strings.HasPrefix(ws, s.workdir+"/") {
		return nil, fmt.Errorf("sandbox: workspace %s is not inside the workdir %s", workspace, s.workdir)
	}
	// bubblewrap follows links in what it binds: both must be folders.
	for _, d := range []string{ws, filepath.Join(ws, reservedDir)} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("sandbox: workspace %s: %s is not a folder", workspace, d)
		}
	}
	return []string{"--tmpfs", s.workdir, bind, ws, ws,
		"--ro-bind", filepath.Join(ws, reservedDir), filepath.Join(ws, reservedDir)}, nil
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Start starts the command, puts it in its cgroups, sets its limits and
// lets it run. In either mode the command gets no descriptor of the worker's
// beyond its standard streams (procgroup.Start).
func (p *Proc) Start() error {
	if p.gate == nil {
		return procgroup.Start(p.cmd.Start)
	}
	gateR := p.cmd.ExtraFiles[0]
	err := procgroup.Start(p.cmd.Start)
	gateR.Close()
	if err != nil {
		p.gate.Close()
		p.cleanup()
		return err
	}
	if err := p.confine(p.cmd.Process.Pid); err != nil {
		p.gate.Close() // the shell exits without running anything
		p.abort()
		return fmt.Errorf("sandbox: %w", err)
	}
	_, err = p.gate.Write([]byte("go\n"))
	p.gate.Close()
	if err != nil {
		p.abort()
		return fmt.Errorf("sandbox: start: %w", err)
	}
	return nil
}

// abort ends a command that failed to start and removes what was made for it.
func (p *Proc) abort() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.Finish()
}

// confine puts pid in fresh cgroups and sets its resource limits.
func (p *Proc) confine(pid int) error {
	s := p.s
	n := cgroupSeq.Add(1)
	if s.pids != nil {
		cg, err := s.pids.create(n, s.cfg.MaxProcs)
		if err != nil {
			return err
		}
		p.cgroups = append(p.cgroups, cg)
	}
	if s.memory != nil {
		cg, err := s.memory.create(n, s.cfg.MemoryBytes)
		if err != nil {
			return err
		}
		p.cgroups = append(p.cgroups, cg)
	}
	for _, cg := range p.cgroups {
		if err := cg.add(pid); err != nil {
			return err
		}
	}
	fsizeSet := false
	for _, r := range s.rlimits {
		v := r.value
		if r.resource == rlimitFsize {
			fsizeSet = true
			if p.fsizeOn && p.fsize < v {
				v = p.fsize
			}
		}
		if r.resource == rlimitNproc {
			uid := os.Geteuid()
			if s.user != nil {
				uid = int(s.user.uid)
			}
			v += int64(userTasks(uid))
		}
		if err := prlimit(pid, r.resource, v); err != nil {
			return fmt.Errorf("limit %s: %w", r.name, err)
		}
	}
	if p.fsizeOn && !fsizeSet {
		if err := prlimit(pid, rlimitFsize, p.fsize); err != nil {
			return fmt.Errorf("limit RLIMIT_FSIZE: %w", err)
		}
	}
	return nil
}

// Finish ends what is left of the command (everything in its cgroups),
// removes its private /tmp and cgroups, and returns what limits cut it,
// as sentences for the result. Call it once the command has been waited for.
func (p *Proc) Finish() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.cut
	}
	p.done = true
	for _, cg := range p.cgroups {
		if msg := cg.cutBy(); msg != "" {
			p.cut = append(p.cut, msg)
		}
	}
	if st := p.cmd.ProcessState; st != nil {
		p.cut = append(p.cut, p.signalCut(st.ExitCode())...)
	}
	p.cleanup()
	if p.protected != nil {
		// Nothing of the command runs any more: what it created in the
		// protected set goes before anything else can read it.
		p.cut = append(p.cut, p.protected.sweep()...)
	}
	return p.cut
}

func (p *Proc) cleanup() {
	for _, cg := range p.cgroups {
		// Nothing of the command may run on, so what is left is killed now
		// and gone before the result; the kernel takes a few milliseconds
		// more to let go of the cgroup, which the result need not wait for.
		cg.end(2 * time.Second)
		p.s.removing.Go(cg.remove)
	}
	p.cgroups = nil
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
		p.tmp = ""
	}
	if p.gitDir != "" {
		_ = os.RemoveAll(p.gitDir)
		p.gitDir = ""
	}
}

// gitConfigs writes the fence's sanitised configs in a folder of the
// command's own, which only it (its user, when it runs as one) can read:
// a config may hold a remote's URL with a password.
func (p *Proc) gitConfigs(g *gitFence) ([]string, error) {
	if len(g.configs) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "toolround-git-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: git configs: %w", err)
	}
	p.gitDir = dir
	a, err := g.configArgs(dir)
	if err == nil && p.s.user != nil {
		err = filepath.WalkDir(dir, func(f string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(f, int(p.s.user.uid), int(p.s.user.gid))
		})
	}
	if err != nil {
		p.cleanup()
		return nil, fmt.Errorf("sandbox: git configs: %w", err)
	}
	return a, nil
}

// SignalInside sends sig to the command's own processes rather than to
// bubblewrap, which would end them all at once with SIGKILL: a stopped
// server gets its SIGTERM. It reports false when it cannot (mode none, no
// cgroup that lists the processes, the command has ended); the caller then
// signals the process group.
func (p *Proc) SignalInside(sig syscall.Signal) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil || p.done || len(p.cgroups) == 0 {
		return false
	}
	for _, pid := range p.cgroups[0].pids() {
		if !isBwrap(pid) {
			_ = syscall.Kill(pid, sig)
		}
	}
	return true
}

// isBwrap reports whether pid is bubblewrap (the gate shell became it),
// by the command name the kernel keeps for it.
func isBwrap(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(b)) == "bwrap"
}

// signalCut explains the exit codes bubblewrap gives a command that a
// resource limit killed: 128 plus the signal.
func (p *Proc) signalCut(code int) []string {
	s := p.s
	switch {
	case code == 128+int(syscall.SIGXFSZ) && p.fsizeOn && (!s.hasRlimit(rlimitFsize) || p.fsize < s.cfg.FileSizeBytes):
		return []string{fmt.Sprintf("cut by the workspace's limit: a process got SIGXFSZ writing a file past %d bytes, the room its workspace had left (WORKSPACE_MAX_BYTES)", p.fsize)}
	case code == 128+int(syscall.SIGXCPU) && s.hasRlimit(rlimitCPU):
		return []string{fmt.Sprintf("cut by the CPU time limit: a process got SIGXCPU after %d s of CPU time (%s)", s.cfg.CPUSeconds, EnvCPU)}
	case code == 128+int(syscall.SIGXFSZ) && s.hasRlimit(rlimitFsize):
		return []string{fmt.Sprintf("cut by the file size limit: a process got SIGXFSZ writing past %d MiB (%s)", s.cfg.FileSizeBytes>>20, EnvFileSize)}
	}
	return nil
}

// errNoCgroup is why a controller is not used.
var errNoCgroup = errors.New("no writable cgroup")
