package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

// backgroundDir holds, for each background process, <id>.log (its output)
// and <id>.json (its status, rewritten when it ends).
const backgroundDir = tools.ReservedDir + "/background"

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// bgStatus is the status file of one background process. It outlives the
// worker, so a later worker can tell what became of the process.
type bgStatus struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// StartTicks is the process start time from /proc: with PID it tells the
	// process apart from a later one that got the same pid.
	StartTicks uint64     `json:"start_ticks,omitempty"`
	Worker     string     `json:"worker"`
	Instance   string     `json:"instance"`
	Ended      *time.Time `json:"ended,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Signal     string     `json:"signal,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	// Sandbox is the sandbox mode that ran it; Cut says which of its
	// limits cut it.
	Sandbox string   `json:"sandbox,omitempty"`
	Cut     []string `json:"cut,omitempty"`
}

// bgProc is a background process started by this worker.
type bgProc struct {
	id   string
	proc *process
	log  *os.File
	done chan struct{} // closed once the final status is written

	mu     sync.Mutex
	st     bgStatus
	reason string // why the worker stopped it, if it did
}

func (b *bgProc) status() bgStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

func (b *bgProc) setReason(r string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reason == "" {
		b.reason = r
	}
}

func (b *bgProc) running() bool {
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

type bgArgs struct {
	Command     *string  `json:"command"`
	ID          *string  `json:"id"`
	Stop        bool     `json:"stop"`
	Offset      *int64   `json:"offset"`
	WaitSeconds *float64 `json:"wait_seconds"`
}

func (t *Tools) backgroundDefinition() tools.Definition {
	return tools.Definition{
		Name: BackgroundCommand,
		Description: fmt.Sprintf("Start a long-running shell command (a server, a watcher, a long build) in the background and manage it. "+
			"With command: starts it with `sh -c` in the workdir and returns its id at once; stdout and stderr go to a log. "+
			"With id: returns its status (running, exited with code N, killed, or lost when the worker that ran it stopped), "+
			"its runtime and the last %d KiB of its output; offset pages through the output. With id and stop: true: stops it "+
			"and every process it started. wait_seconds waits for the process to end before answering. "+
			"At most %d background processes run at once. Stdin is empty; the environment holds nothing secret.",
			t.cfg.OutputLimit/1024, t.cfg.MaxBackground),
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"command": {Description: "Shell command to start in the background, run by `sh -c` in the workdir. Give either command or id.", MinLength: tools.Ptr(1), Type: "string"},
			"id":      {Description: "Id of a process started earlier: returns its status and output, or stops it with stop.", Type: "string"},
			"offset": {
				Description: fmt.Sprintf("With id: read the output from this byte on (at most %d bytes). Default: the last %d bytes.", t.cfg.OutputLimit, t.cfg.OutputLimit),
				Minimum:     tools.Ptr(0.0),
				Type:        "integer",
			},
			"stop": {Description: "With id: stop the process and every process it started.", Type: "boolean"},
			"wait_seconds": {
				Description: fmt.Sprintf("Wait up to this many seconds for the process to end before answering (at most %d).", int64(t.cfg.MaxWait/time.Second)),
				Maximum:     tools.Ptr(t.cfg.MaxWait.Seconds()),
				Minimum:     tools.Ptr(0.0),
				Type:        "number",
			},
		})),
		SideEffect: tools.AtMostOnce,
		Effect:     backgroundEffect,
		Timeout:    t.cfg.MaxWait + 2*t.cfg.KillGrace + time.Minute,
		// Status reads change over time, and a started process may change anything.
		NoDedupe: true,
		Volatile: true,
		Source:   tools.SourceBuiltin,
		Subject:  backgroundSubject,
		Rules:    approval.KindCommand,
		Reason:   "it starts or stops a background command",
		Handler:  tools.Typed(t.backgroundCall),
	}
}

// backgroundEffect makes status reads read-only: they never need a confirmation.
func backgroundEffect(raw json.RawMessage) tools.SideEffect {
	var a bgArgs
	if json.Unmarshal(raw, &a) != nil || a.Command != nil || a.ID == nil {
		return ""
	}
	if a.Stop {
		return tools.Idempotent
	}
	return tools.ReadOnly
}

func backgroundSubject(raw json.RawMessage) string {
	var a bgArgs
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	if a.Command != nil {
		return *a.Command
	}
	if a.ID != nil {
		return *a.ID
	}
	return ""
}

// backgroundCall is backgroundCommand, ending workspace_full when its
// workspace is over WORKSPACE_MAX_BYTES at the end (W3).
func (t *Tools) backgroundCall(ctx context.Context, req tools.Request, a bgArgs) (tools.Result, error) {
	res, err := t.backgroundCommand(ctx, req, a)
	if full := t.overLimit(); full != nil {
		text := res.Content
		if err != nil {
			text = err.Error()
		}
		return tools.Result{}, fmt.Errorf("%w\n%s", full, text)
	}
	return res, err
}

func (t *Tools) backgroundCommand(ctx context.Context, req tools.Request, a bgArgs) (tools.Result, error) {
	var wait time.Duration
	if s := a.WaitSeconds; s != nil {
		if math.IsNaN(*s) || *s < 0 || *s > t.cfg.MaxWait.Seconds() {
			return tools.Result{}, fmt.Errorf("wait_seconds must be between 0 and %d, got %v", int64(t.cfg.MaxWait/time.Second), *s)
		}
		wait = time.Duration(*s * float64(time.Second))
	}
	switch {
	case a.Command != nil && a.ID != nil:
		return tools.Result{}, errors.New("give either command (to start a process) or id (to read or stop one), not both")
	case a.Command != nil:
		if a.Stop || a.Offset != nil {
			return tools.Result{}, errors.New("stop and offset go with id, not with command")
		}
		return t.startBackground(ctx, *a.Command, t.envFor(req.RuleApproved), req.RuleScope, wait)
	case a.ID != nil:
		if !validID.MatchString(*a.ID) {
			return tools.Result{}, fmt.Errorf("unknown id %q; ids come from starting a command, like bg-1a2b3c4d", *a.ID)
		}
		if a.Offset != nil && *a.Offset < 0 {
			return tools.Result{}, fmt.Errorf("offset must be 0 or more, got %d", *a.Offset)
		}
		if a.Stop {
			if a.Offset != nil {
				return tools.Result{}, errors.New("offset does not go with stop")
			}
			return t.stopBackground(ctx, *a.ID)
		}
		return t.readBackground(ctx, *a.ID, a.Offset, wait)
	default:
		return tools.Result{}, errors.New("give command to start a process, or id to read its status and output (add stop: true to stop it)")
	}
}

func logPath(id string) string    { return path.Join(backgroundDir, id+".log") }
func statusPath(id string) string { return path.Join(backgroundDir, id+".json") }

func (t *Tools) startBackground(ctx context.Context, command string, env []string, scope string, wait time.Duration) (tools.Result, error) {
	root := t.cfg.Workdir.Root()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return tools.Result{}, errors.New("the worker is shutting down; try again later")
	}
	if running := t.runningLocked(); len(running) >= t.cfg.MaxBackground {
		t.mu.Unlock()
		return tools.Result{}, fmt.Errorf("%d background processes are running, the limit; stop one first with {\"id\": ..., \"stop\": true}: %s",
			len(running), strings.Join(running, ", "))
	}
	b, err := t.launch(root, command, env, scope)
	if err != nil {
		t.mu.Unlock()
		return tools.Result{}, err
	}
	t.bg[b.id] = b
	t.mu.Unlock()
	go t.watch(b)
	tools.Checkpoint(ctx, BackgroundCommand+":after_start")

	st := b.status()
	head := fmt.Sprintf("started %s (pid %d): %s\n[sandbox: %s]\noutput goes to %s", st.ID, st.PID, command, st.Sandbox, logPath(st.ID))
	if wait == 0 {
		return tools.Text(head + fmt.Sprintf("\nread its status and output with {\"id\": %q}; stop it with {\"id\": %q, \"stop\": true}", st.ID, st.ID)), nil
	}
	t.waitFor(ctx, b, wait)
	report, err := t.report(b.id, nil)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Text(head + "\n" + report), nil
}

// launch starts a process with its log and status files; t.mu is held.
func (t *Tools) launch(root *os.Root, command string, env []string, scope string) (*bgProc, error) {
	if err := root.MkdirAll(backgroundDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", backgroundDir, err)
	}
	var id string
	var log *os.File
	for {
		id = "bg-" + randomHex(4)
		f, err := root.OpenFile(logPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", logPath(id), err)
		}
		log = f
		break
	}
	p, err := t.start(command, env, scope, log)
	if err != nil {
		log.Close()
		_ = root.Remove(logPath(id))
		return nil, err
	}
	st := bgStatus{ID: id, Command: command, PID: p.pgid, Started: p.started, Worker: t.worker, Instance: t.instance,
		Sandbox: t.label(scope)}
	if ps, ok := readStat(p.pgid); ok {
		st.StartTicks = ps.startTime
	}
	if err := t.writeStatus(st); err != nil {
		p.stop(t.cfg.KillGrace)
		<-p.exited
		log.Close()
		return nil, err
	}
	return &bgProc{id: id, proc: p, log: log, done: make(chan struct{}), st: st}, nil
}

func (t *Tools) runningLocked() []string {
	var ids []string
	for id, b := range t.bg {
		if b.running() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// watch waits for a background process to end, stops it when its log grows
// past the limit, and records how it ended.
func (t *Tools) watch(b *bgProc) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	stopping := false
wait:
	for {
		select {
		case <-b.proc.exited:
			break wait
		case <-tick.C:
			if fi, err := b.log.Stat(); err == nil && fi.Size() > t.cfg.BackgroundLogLimit && !stopping {
				stopping = true
				b.setReason(fmt.Sprintf("stopped because its output passed %d bytes", t.cfg.BackgroundLogLimit))
				go b.proc.stop(t.cfg.KillGrace)
			}
		}
	}
	// What the shell left behind in its group ends with it.
	b.proc.stop(t.cfg.KillGrace)
	_, code, sig := b.proc.outcome()
	now := time.Now()
	b.mu.Lock()
	b.st.Ended = &now
	if sig == "" {
		b.st.ExitCode = &code
	}
	b.st.Signal = sig
	b.st.Reason = b.reason
	b.st.Cut = b.proc.cut
	st := b.st
	b.mu.Unlock()
	// A failed write leaves the file saying "running"; a later worker then
	// reports the process as lost, which is as much as it can know.
	_ = t.writeStatus(st)
	b.log.Close()
	close(b.done)
}

func (t *Tools) writeStatus(st bgStatus) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("status of %s: %w", st.ID, err)
	}
	root := t.cfg.Workdir.Root()
	tmp := statusPath(st.ID) + ".tmp"
	if err := root.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := root.Rename(tmp, statusPath(st.ID)); err != nil {
		return fmt.Errorf("write %s: %w", statusPath(st.ID), err)
	}
	return nil
}

// lookup finds a process: this worker's own, else its status file.
func (t *Tools) lookup(id string) (*bgProc, bgStatus, error) {
	t.mu.Lock()
	b := t.bg[id]
	t.mu.Unlock()
	if b != nil {
		return b, b.status(), nil
	}
	data, err := t.cfg.Workdir.Root().ReadFile(statusPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, bgStatus{}, t.unknownID(id)
	}
	if err != nil {
		return nil, bgStatus{}, fmt.Errorf("read %s: %w", statusPath(id), err)
	}
	var st bgStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, bgStatus{}, fmt.Errorf("%s is damaged: %w", statusPath(id), err)
	}
	return nil, st, nil
}

func (t *Tools) unknownID(id string) error {
	var ids []string
	if f, err := t.cfg.Workdir.Root().Open(backgroundDir); err == nil {
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			if strings.HasSuffix(n, ".json") {
				ids = append(ids, strings.TrimSuffix(n, ".json"))
			}
		}
	}
	if len(ids) == 0 {
		return fmt.Errorf("unknown id %q; no background process was started in this workdir", id)
	}
	sort.Strings(ids)
	more := ""
	if len(ids) > 20 {
		more = fmt.Sprintf(" and %d more", len(ids)-20)
		ids = ids[:20]
	}
	return fmt.Errorf("unknown id %q; known ids: %s%s", id, strings.Join(ids, ", "), more)
}

// waitFor waits until b ends, wait passes or ctx is done.
func (t *Tools) waitFor(ctx context.Context, b *bgProc, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	tick := time.NewTicker(t.cfg.ProgressInterval)
	defer tick.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			tools.ReportProgress(ctx, fmt.Sprintf("background_command: waiting for %s, running for %s", b.id, since(b.proc.started)))
		}
	}
}

func (t *Tools) readBackground(ctx context.Context, id string, offset *int64, wait time.Duration) (tools.Result, error) {
	b, _, err := t.lookup(id)
	if err != nil {
		return tools.Result{}, err
	}
	if b != nil && wait > 0 {
		t.waitFor(ctx, b, wait)
	}
	report, err := t.report(id, offset)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Text(report), nil
}

func (t *Tools) stopBackground(ctx context.Context, id string) (tools.Result, error) {
	b, st, err := t.lookup(id)
	if err != nil {
		return tools.Result{}, err
	}
	switch {
	case b != nil && b.running():
		b.setReason("stopped on request")
		b.proc.stop(t.cfg.KillGrace)
		select {
		case <-b.done:
		case <-ctx.Done():
			return tools.Result{}, fmt.Errorf("stop %s: %w", id, context.Cause(ctx))
		}
	case b == nil && st.Ended == nil:
		if alive, known := lostAlive(st); !alive {
			msg := "no longer runs"
			if !known {
				msg = "cannot be checked on this host"
			}
			return tools.Result{}, fmt.Errorf("stop %s: the worker that ran it stopped, and the process %s", id, msg)
		}
		killGroup(st.PID, t.cfg.KillGrace, closedChan(), func(sig syscall.Signal) { _ = syscall.Kill(-st.PID, sig) })
		now := time.Now()
		st.Ended, st.Reason = &now, "stopped on request after the worker that ran it stopped; its exit code is unknown"
		if err := t.writeStatus(st); err != nil {
			return tools.Result{}, fmt.Errorf("stop %s: the process was stopped, but: %w", id, err)
		}
	default:
		report, err := t.report(id, nil)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Text("it had already ended; nothing to stop\n" + report), nil
	}
	report, err := t.report(id, nil)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Text(report), nil
}

func closedChan() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// lostAlive reports whether the process of a lost status still runs, and
// whether that could be checked at all.
func lostAlive(st bgStatus) (alive, known bool) {
	if st.StartTicks == 0 || st.PID <= 0 {
		return false, false
	}
	ps, ok := readStat(st.PID)
	if !ok {
		_, err := os.Stat("/proc/self/stat")
		return false, err == nil
	}
	return ps.startTime == st.StartTicks && ps.pgrp == st.PID && ps.state != 'Z', true
}

// report is the status and output of a process.
func (t *Tools) report(id string, offset *int64) (string, error) {
	b, st, err := t.lookup(id)
	if err != nil {
		return "", err
	}
	var state string
	switch {
	case st.Ended != nil:
		state = describeEnd(st)
	case b != nil:
		state = fmt.Sprintf("running for %s (pid %d)", since(st.Started), st.PID)
	default:
		state = fmt.Sprintf("lost: the worker that ran it stopped (it ran on %s, started %s ago); its exit code is unknown",
			st.Worker, since(st.Started))
		switch alive, known := lostAlive(st); {
		case alive:
			state += fmt.Sprintf("; the process still runs as pid %d: stop it with stop: true", st.PID)
		case known:
			state += "; the process no longer runs"
		}
	}
	out, err := t.readLog(id, offset)
	if err != nil {
		return "", err
	}
	sb := st.Sandbox
	if sb == "" {
		sb = "none"
	}
	sb = "[sandbox: " + sb + "]"
	for _, c := range st.Cut {
		sb += "\n" + c
	}
	return fmt.Sprintf("%s: %s\ncommand: %s\n%s\n%s", id, state, st.Command, sb, out), nil
}

func describeEnd(st bgStatus) string {
	d := st.Ended.Sub(st.Started)
	if d < time.Second {
		d = d.Round(time.Millisecond)
	} else {
		d = d.Round(100 * time.Millisecond)
	}
	var s string
	switch {
	case st.ExitCode != nil:
		s = fmt.Sprintf("exited with code %d after %s", *st.ExitCode, d)
	case st.Signal != "":
		s = fmt.Sprintf("killed by %s after %s", st.Signal, d)
	default:
		s = fmt.Sprintf("ended after %s", d)
	}
	if st.Reason != "" {
		s += " (" + st.Reason + ")"
	}
	return s
}

// readLog renders the output of a process: from offset, or its last
// OutputLimit bytes.
func (t *Tools) readLog(id string, offset *int64) (string, error) {
	f, err := t.cfg.Workdir.Root().Open(logPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return "output: none (its log file is gone)", nil
	}
	if err != nil {
		return "", fmt.Errorf("open %s: %w", logPath(id), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: %w", logPath(id), err)
	}
	size := fi.Size()
	limit := int64(t.cfg.OutputLimit)
	from := max(0, size-limit)
	if offset != nil {
		if *offset > size {
			return "", fmt.Errorf("offset %d is past the end of the output, which has %d bytes so far", *offset, size)
		}
		from = *offset
	}
	if size == 0 {
		return "output: none so far", nil
	}
	buf := make([]byte, min(limit, size-from))
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %s: %w", logPath(id), err)
	}
	buf = buf[:n]
	end := from + int64(n)
	if end < size {
		buf = text.TrimPartialRune(buf)
		end = from + int64(len(buf))
	}
	if from > 0 {
		buf = text.TrimPartialRuneStart(buf)
	}
	var head string
	switch {
	case offset == nil && from == 0:
		head = fmt.Sprintf("output (%d bytes, stdout and stderr combined):", size)
	case offset == nil:
		head = fmt.Sprintf("output: the last %d of %d bytes (read from the start with offset 0):", end-from, size)
	case from == end:
		head = fmt.Sprintf("output: nothing after byte %d", from)
	default:
		head = fmt.Sprintf("output: bytes %d-%d of %d", from, end, size)
		if end < size {
			head += fmt.Sprintf("; read on with offset %d", end)
		}
		head += ":"
	}
	return head + "\n" + string(buf), nil
}

// Close stops the background processes this worker still runs and records
// how they ended.
func (t *Tools) Close() error {
	t.mu.Lock()
	t.closed = true
	var running []*bgProc
	for _, b := range t.bg {
		if b.running() {
			running = append(running, b)
		}
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, b := range running {
		wg.Go(func() {
			b.setReason("stopped because the worker shut down")
			b.proc.stop(t.cfg.KillGrace)
			<-b.done
		})
	}
	wg.Wait()
	return nil
}
