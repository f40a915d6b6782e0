package command

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/command/sandbox"
)

func (t *Tools) runDefinition() tools.Definition {
	maxSec := int64(t.cfg.MaxTimeout / time.Second)
	return tools.Definition{
		Name: RunCommand,
		Description: fmt.Sprintf("Run a shell command with `sh -c` in the workdir and wait for it to end. "+
			"Returns the exit code and the combined stdout and stderr (long output keeps its first and last %d KiB). "+
			"A non-zero exit code is a failure. The command is killed with every process it started when it runs past "+
			"timeout_seconds (default %d, at most %d), and processes it leaves in the background are stopped when it ends: "+
			"start servers and other long-running processes with background_command. Stdin is empty; the environment "+
			"holds PATH, HOME, locale settings and nothing secret.",
			t.cfg.OutputLimit/2/1024, int64(t.cfg.DefaultTimeout/time.Second), maxSec),
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"command": {Description: "Shell command, run by `sh -c` in the workdir. Pipes, redirections and && work.", MinLength: tools.Ptr(1), Type: "string"},
			"timeout_seconds": {
				Description: fmt.Sprintf("Seconds before the command and every process it started are killed. Default %d, at most %d.", int64(t.cfg.DefaultTimeout/time.Second), maxSec),
				Maximum:     tools.Ptr(float64(maxSec)),
				Minimum:     tools.Ptr(1.0),
				Type:        "integer",
			},
		}, "command")),
		SideEffect: tools.AtMostOnce,
		// The handler enforces the command's timeout; the attempt's own
		// timeout only catches a handler that failed to.
		Timeout:  t.cfg.MaxTimeout + 2*t.cfg.KillGrace + time.Minute,
		Volatile: true,
		Source:   tools.SourceBuiltin,
		Subject:  tools.SubjectField("command"),
		Rules:    approval.KindCommand,
		Reason:   "it runs a shell command",
		Handler:  tools.Typed(t.runCommand),
	}
}

type runArgs struct {
	Command        string   `json:"command"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

func (t *Tools) runCommand(ctx context.Context, req tools.Request, args runArgs) (tools.Result, error) {
	timeout := t.cfg.DefaultTimeout
	if s := args.TimeoutSeconds; s != nil {
		if math.IsNaN(*s) || *s <= 0 || *s > t.cfg.MaxTimeout.Seconds() {
			return tools.Result{}, fmt.Errorf("timeout_seconds must be between 1 and %d, got %v; use background_command for longer work",
				int64(t.cfg.MaxTimeout/time.Second), *s)
		}
		timeout = time.Duration(*s * float64(time.Second))
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return tools.Result{}, fmt.Errorf("output pipe: %w", err)
	}
	p, err := t.start(args.Command, t.envFor(req.RuleApproved), req.RuleScope, pw)
	pw.Close() // the command holds its own copy; EOF comes when every holder is gone
	if err != nil {
		pr.Close()
		return tools.Result{}, err
	}
	defer pr.Close()
	tools.Checkpoint(ctx, RunCommand+":after_start")

	out := newCapBuffer(t.cfg.OutputLimit)
	var seen atomic.Int64
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				_, _ = out.Write(buf[:n])
				seen.Add(int64(n))
			}
			if err != nil {
				return
			}
		}
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	ticker := time.NewTicker(t.cfg.ProgressInterval)
	defer ticker.Stop()
	var timedOut, cancelled bool
wait:
	for {
		select {
		case <-p.exited:
			break wait
		case <-timer.C:
			timedOut = true
			break wait
		case <-ctx.Done():
			cancelled = true
			break wait
		case <-ticker.C:
			tools.ReportProgress(ctx, fmt.Sprintf("run_command: running for %s, %d bytes of output", since(p.started), seen.Load()))
		}
	}
	// Whether the shell ended or is ended here, nothing it started outlives the call.
	p.stop(t.cfg.KillGrace)
	<-p.exited
	elapsed := since(p.started)

	// A process that left the group (setsid) may still hold the output open.
	leftOpen := false
	select {
	case <-drained:
	case <-time.After(t.cfg.KillGrace):
		leftOpen = true
		_ = pr.SetReadDeadline(time.Now())
		<-drained
	}
	output := out.section()
	if leftOpen {
		output += "\n(output cut: a process that left the command's process group still holds it open)"
	}

	tools.Checkpoint(ctx, RunCommand+":after_exit")
	note := t.sandboxNote(p)
	switch {
	case cancelled:
		return tools.Result{}, fmt.Errorf("cancelled after %s; the command and every process it started were killed: %w\n%s\n%s",
			elapsed, context.Cause(ctx), note, output)
	case timedOut:
		return tools.Result{}, fmt.Errorf("timed out after %s; the command and every process it started were killed. "+
			"Raise timeout_seconds (at most %d) or start it with background_command.\n%s\n%s",
			timeout, int64(t.cfg.MaxTimeout/time.Second), note, output)
	}
	how, code, _ := p.outcome()
	if err := t.overLimit(); err != nil {
		return tools.Result{}, fmt.Errorf("%w\n%s after %s\n%s\n%s", err, how, elapsed, note, output)
	}
	if code != 0 {
		return tools.Result{}, &ExitError{Code: code, Message: fmt.Sprintf("%s after %s\n%s\n%s", how, elapsed, note, output)}
	}
	return tools.Text(fmt.Sprintf("%s after %s\n%s\n%s", how, elapsed, note, output)), nil
}

// overLimit is the workspace_full failure of a command that left its
// workspace over WORKSPACE_MAX_BYTES (W3): its files stay, and later
// writes are refused until the workspace is under the limit again.
func (t *Tools) overLimit() error {
	wd := t.cfg.Workdir
	if wd.MaxBytes() <= 0 {
		return nil
	}
	used, err := wd.Usage()
	if err != nil || used <= wd.MaxBytes() {
		return nil
	}
	return tools.WithCode(tools.CodeWorkspaceFull, fmt.Errorf("the command left the workspace over its limit: it holds %d bytes and %s is %d; its files stay, and writes are refused until files are removed",
		used, tools.EnvWorkspaceMaxBytes, wd.MaxBytes()))
}

// label names the sandbox mode a command ran in and, for a command a rule
// approved, the rule's scope (T12): "bwrap, network none, scope read-only",
// which the result shows as "[sandbox: bwrap, network none, scope read-only]".
func (t *Tools) label(scope string) string {
	l := t.sandbox.Label()
	if scope != "" && t.sandbox.Mode() == sandbox.ModeBwrap {
		l += ", scope " + scope
	}
	return l
}

// sandboxNote says which sandbox mode ran the command, in brackets, and
// which of its limits cut it, one per line.
func (t *Tools) sandboxNote(p *process) string {
	note := "[sandbox: " + t.label(p.scope) + "]"
	for _, c := range p.cut {
		note += "\n" + c
	}
	return note
}

// ExitError is the failure of a command that ended with a non-zero exit
// code, or with -1 when a signal ended it.
type ExitError struct {
	Code    int
	Message string
}

func (e *ExitError) Error() string { return e.Message }

func since(t time.Time) time.Duration {
	d := time.Since(t)
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
