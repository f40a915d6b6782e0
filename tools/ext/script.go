package ext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/internal/procgroup"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

const (
	// maxArgsEnv bounds TOOL_ARGS: the kernel refuses a larger variable, so
	// bigger arguments only arrive on stdin.
	maxArgsEnv = 64 << 10
	// pipeDrain is how long output is still read after the process group
	// was killed, for a straggler that left the group with a copy of stdout.
	pipeDrain = 2 * time.Second
	// errorOutput caps the output quoted in a failure message.
	errorOutput = 4 << 10
)

// script is a script_* tool.
type script struct {
	name string
	argv []string
	// base is the worker's environment through run_command's allow-list,
	// taken at registration.
	base     []string
	env      map[string]string
	dir      string
	timeout  time.Duration
	limit    int
	readOnly bool
	// sandbox confines the process; nil runs it unconfined.
	sandbox *sandbox.Sandbox
	// wd is the workdir whose WORKSPACE_MAX_BYTES the script keeps to in
	// shared mode (W3); in session mode, the call's workspace's. nil: none.
	wd *tools.Workdir
}

// run runs the command in its own process group. The group is killed when
// the call ends, whichever way: on timeout or cancellation, and after a
// normal exit, so that no helper outlives the call that started it.
func (s *script) run(ctx context.Context, req tools.Request) (tools.Result, error) {
	args := bytes.TrimSpace(req.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	env, err := s.environ(req, args)
	if err != nil {
		return tools.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	quota, ws := s.wd, ""
	if w := workspaceOf(ctx); w != nil {
		quota, ws = w, w.Dir()
		cmd.Dir = ws // all the sandbox shows it of TOOLS_WORKDIR (W2)
	}
	// No file may grow past the room the workspace has left, nor may its
	// /tmp add up past it, as for run_command (W3).
	room := int64(-1)
	if quota != nil {
		r, limited, err := quota.Room()
		if err != nil {
			return tools.Result{}, err
		}
		if limited {
			room = r
		}
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(args)
	// Under bubblewrap the script's PID namespace ends with it; without,
	// a reaper ends every process the script started, setsid or not (T8),
	// and sets its RLIMIT_FSIZE at the room left (W3).
	var tree *procgroup.Tree
	if s.sandbox == nil || s.sandbox.Mode() != sandbox.ModeBwrap {
		opts := procgroup.TreeOptions{FileSize: room, LimitFileSize: room >= 0}
		if tree, err = procgroup.Contain(cmd, opts); err != nil {
			return tools.Result{}, fmt.Errorf("start %q: %w", s.argv[0], err)
		}
	} else {
		procgroup.Set(cmd)
	}
	cmd.Cancel = func() error {
		tree.End()
		procgroup.Kill(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		return nil
	}
	cmd.WaitDelay = pipeDrain

	stdout, stderr := text.NewWriter(s.limit), text.NewWriter(s.limit)
	outR, outW, err := os.Pipe()
	if err != nil {
		return tools.Result{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return tools.Result{}, err
	}
	// The write ends are files, so Wait does not wait for them: the output is
	// read here and the group is killed as soon as the script itself exits.
	cmd.Stdout, cmd.Stderr = outW, errW
	var startErr error
	// note says which sandbox mode ran the script (when the worker gave it
	// one) and which limits cut it.
	var sp *sandbox.Proc
	var note string
	if s.sandbox != nil {
		label := s.sandbox.Label()
		if req.RuleScope != "" && s.sandbox.Mode() == sandbox.ModeBwrap {
			label += ", scope " + req.RuleScope // T12
		}
		note = "\n[sandbox: " + label + "]"
		var ro []string
		if ws != "" && filepath.IsAbs(s.argv[0]) {
			ro = append(ro, s.argv[0]) // found in the tools file's folder (RegisterIn)
		}
		// A script a rule approved runs with the rule's scope (T12).
		if sp, startErr = s.sandbox.WrapInRoom(cmd, ws, room, req.RuleScope, ro...); startErr == nil {
			startErr = sp.Start()
		}
	} else {
		startErr = procgroup.Start(cmd.Start)
	}
	outW.Close()
	errW.Close()
	if startErr != nil {
		tree.End()
		outR.Close()
		errR.Close()
		return tools.Result{}, fmt.Errorf("start %q: %w", s.argv[0], startErr)
	}
	if tree != nil {
		tree.Started(cmd.Process.Pid)
	}
	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(stdout, outR) })
	readers.Go(func() { _, _ = io.Copy(stderr, errR) })

	waitErr := cmd.Wait()
	tree.End()
	procgroup.Kill(cmd.Process.Pid)
	if sp != nil {
		// What is left in the command's cgroups ends here too.
		for _, c := range sp.Finish() {
			note += "\n[" + c + "]"
		}
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(pipeDrain):
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	// A script that left its workspace over the limit ends workspace_full,
	// whichever way it exited, a test_tool run's included.
	if cmd.ProcessState != nil && ctx.Err() == nil {
		if err := overLimit(quota); err != nil {
			return tools.Result{}, fmt.Errorf("%w\n%s%s%s", err, cmd.ProcessState, quote(stderr, stdout), note)
		}
	}
	// A test_tool call (G4) reports how the script ended, whichever way it
	// exited; a timeout or a cancellation stays a failure.
	if req.Test && cmd.ProcessState != nil && (cmd.ProcessState.Success() || ctx.Err() == nil) {
		return s.report(cmd.ProcessState, stdout, stderr, note), nil
	}
	// The exit status decides first: a script that finished just as its
	// deadline passed has still succeeded.
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				return tools.Result{}, fmt.Errorf("timed out after %s; its process group was killed%s%s", s.timeout, quote(stderr, stdout), note)
			}
			return tools.Result{}, fmt.Errorf("cancelled; its process group was killed: %w%s", ctxErr, note)
		}
		var exit *exec.ExitError
		if errors.As(waitErr, &exit) {
			return tools.Result{}, fmt.Errorf("%s%s%s", exit.ProcessState, quote(stderr, stdout), note)
		}
		return tools.Result{}, fmt.Errorf("%w%s", waitErr, note)
	}
	res := tools.Result{Content: stdout.String()}
	if stderr.Total() > 0 {
		res.Content += "\n[stderr]\n" + stderr.String()
	}
	res.Content += note
	if !s.readOnly {
		// A script may change anything in the workdir.
		res.Touched = []string{"."}
	}
	return res, nil
}

// overLimit is the workspace_full failure of a script that left wd over
// WORKSPACE_MAX_BYTES (W3): its files stay, and later writes are refused
// until the workspace is under the limit again.
func overLimit(wd *tools.Workdir) error {
	if wd == nil || wd.MaxBytes() <= 0 {
		return nil
	}
	used, err := wd.Usage()
	if err != nil || used <= wd.MaxBytes() {
		return nil
	}
	return tools.WithCode(tools.CodeWorkspaceFull, fmt.Errorf("the script left the workspace over its limit: it holds %d bytes and %s is %d; its files stay, and writes are refused until files are removed",
		used, tools.EnvWorkspaceMaxBytes, wd.MaxBytes()))
}

// report is a test_tool call's result: the exit code, then stdout and
// stderr in full up to the output limit.
func (s *script) report(ps *os.ProcessState, stdout, stderr *text.Writer, note string) tools.Result {
	var b strings.Builder
	if code := ps.ExitCode(); code >= 0 {
		fmt.Fprintf(&b, "exit code: %d\n", code)
	} else {
		fmt.Fprintf(&b, "exit code: none (%s)\n", ps)
	}
	fmt.Fprintf(&b, "[stdout]\n%s", stdout.String())
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "[stderr]\n%s", stderr.String())
	b.WriteString(note)
	res := tools.Result{Content: b.String()}
	if !s.readOnly {
		res.Touched = []string{"."}
	}
	return res
}

// environ is the allowed part of the worker's environment (never its
// connections or keys), then the call's variables, then the entry's env.
func (s *script) environ(req tools.Request, args []byte) ([]string, error) {
	env := slices.Clone(s.base)
	argsEnv := string(args)
	if len(argsEnv) > maxArgsEnv {
		argsEnv = ""
	}
	env = append(env,
		"TOOL_NAME="+s.name,
		"TOOL_CALL_ID="+req.CallID,
		"TOOL_ARGS="+argsEnv,
		"TOOLS_WORKDIR="+s.dir,
		round.OperationEnv+"="+req.OperationID,
	)
	keys := make([]string, 0, len(s.env))
	for k := range s.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := expandEnv(s.env[k])
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

// quote is the end of the output a failure message shows: stderr, or stdout
// when stderr is empty.
func quote(stderr, stdout *text.Writer) string {
	out := strings.TrimSpace(stderr.String())
	if out == "" {
		out = strings.TrimSpace(stdout.String())
	}
	if out == "" {
		return ""
	}
	if len(out) > errorOutput {
		out = "..." + strings.ToValidUTF8(text.CutStart(out, errorOutput), "")
	}
	return ": " + out
}
