package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// LongOptions are the settings of `go run ./cmd/bench long`: one round of many
// calls and one round whose approval waits a long time, against a real
// server, with one bench worker process.
type LongOptions struct {
	Address   string
	Namespace string
	TaskQueue string
	// Parts are the rounds to run: calls (Calls read-only no-ops),
	// atmostonce (Calls at-most-once no-ops), approval (one call that waits
	// ApprovalWait for its approval).
	Parts          []string
	Calls          int
	ApprovalWait   time.Duration
	ConfirmTimeout time.Duration
	// Sample is how often the worker's memory is read during the wait.
	Sample time.Duration
	Out    string
}

var longParts = []string{"calls", "atmostonce", "approval"}

func parseLongOptions(args []string) (LongOptions, error) {
	var o LongOptions
	fs := flag.NewFlagSet("bench long", flag.ContinueOnError)
	fs.StringVar(&o.Address, "address", envStr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (TEMPORAL_ADDRESS)")
	fs.StringVar(&o.Namespace, "namespace", envStr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (TEMPORAL_NAMESPACE)")
	fs.StringVar(&o.TaskQueue, "task-queue", envStr("BENCH_TASK_QUEUE", fmt.Sprintf("bench-long-%d", time.Now().UnixNano())), "task queue, unique per run (BENCH_TASK_QUEUE)")
	parts := fs.String("parts", envStr("BENCH_LONG_PARTS", strings.Join(longParts, ",")), "rounds to run: calls, atmostonce, approval (BENCH_LONG_PARTS)")
	fs.IntVar(&o.Calls, "calls", envInt("BENCH_LONG_CALLS", 500), "calls in the long rounds (BENCH_LONG_CALLS)")
	fs.DurationVar(&o.ApprovalWait, "approval-wait", envDuration("BENCH_APPROVAL_WAIT", 30*time.Minute), "how long the approval waits (BENCH_APPROVAL_WAIT)")
	fs.DurationVar(&o.ConfirmTimeout, "confirm-timeout", envDuration("BENCH_CONFIRM_TIMEOUT", 0), "the round's confirm timeout (BENCH_CONFIRM_TIMEOUT; default the wait plus a fifteenth, so that both reminders fire before the approval)")
	fs.DurationVar(&o.Sample, "sample", envDuration("BENCH_LONG_SAMPLE", 30*time.Second), "how often the worker's memory is read during the wait (BENCH_LONG_SAMPLE)")
	fs.StringVar(&o.Out, "out", envStr("BENCH_OUT", filepath.Join("bench", "results", "long")), "directory for long.json and long.txt (BENCH_OUT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for p := range strings.SplitSeq(*parts, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !contains(longParts, p) {
			return o, fmt.Errorf("no part %q; the parts are %s", p, strings.Join(longParts, ", "))
		}
		o.Parts = append(o.Parts, p)
	}
	if o.ConfirmTimeout == 0 {
		o.ConfirmTimeout = confirmTimeoutFor(o.ApprovalWait)
	}
	switch {
	case o.Calls < 1 || o.Calls > round.MaxCallsPerRound:
		return o, fmt.Errorf("calls %d: want 1 to %d", o.Calls, round.MaxCallsPerRound)
	case o.ApprovalWait <= 0 || o.Sample <= 0:
		return o, errors.New("approval-wait and sample must be positive")
	case o.ConfirmTimeout <= o.ApprovalWait:
		return o, fmt.Errorf("the confirm timeout %s must be longer than the wait %s", o.ConfirmTimeout, o.ApprovalWait)
	case o.ConfirmTimeout > round.MaxConfirmTimeout:
		return o, fmt.Errorf("the confirm timeout %s is above %s", o.ConfirmTimeout, round.MaxConfirmTimeout)
	}
	return o, nil
}

// confirmTimeoutFor is the wait plus a fifteenth, in whole seconds, rounded
// up: 30 min gives 32 min, whose reminders (16 and 28.8 min) both come
// before the approval.
func confirmTimeoutFor(wait time.Duration) time.Duration {
	d := wait + wait/15
	return (d + time.Second - 1).Truncate(time.Second)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// LongReport is what `bench long` measured; long.json holds it.
type LongReport struct {
	Time          time.Time     `json:"time"`
	Address       string        `json:"address"`
	ServerVersion string        `json:"server_version"`
	CPUs          int           `json:"cpus"`
	LoadAvgStart  string        `json:"loadavg_start"`
	LoadAvgEnd    string        `json:"loadavg_end"`
	WorkerStart   Memory        `json:"worker_memory_start"`
	Rounds        []LongRound   `json:"rounds"`
	Approval      *ApprovalWait `json:"approval,omitempty"`
}

// LongRound is one long round: its latency, history and the worker's memory
// before and after it.
type LongRound struct {
	Part          string         `json:"part"`
	Tool          string         `json:"tool"`
	Calls         int            `json:"calls"`
	WorkflowID    string         `json:"workflow_id"`
	LatencyMS     float64        `json:"latency_ms"`
	Events        int            `json:"events"`
	Bytes         int            `json:"bytes"`
	WorkflowTasks int            `json:"workflow_tasks"`
	Activities    int            `json:"activities"`
	Markers       int            `json:"markers"`
	ResultBytes   int            `json:"result_bytes"`
	CountByKind   map[string]int `json:"events_by_kind"`
	BytesByKind   map[string]int `json:"bytes_by_kind"`
	MemoryBefore  Memory         `json:"worker_memory_before"`
	MemoryAfter   Memory         `json:"worker_memory_after"`
}

// ApprovalWait is the round whose one call waited for its approval.
type ApprovalWait struct {
	LongRound
	WaitSeconds           float64 `json:"wait_seconds"`
	ConfirmTimeoutSeconds int     `json:"confirm_timeout_seconds"`
	// UntilWaitingMS is from the start call to the call's waiting in
	// Pending; ApproveMS the confirm update's round trip; ApprovalToResultMS
	// from sending the approval to having the round's result.
	UntilWaitingMS     float64 `json:"until_waiting_ms"`
	ApproveMS          float64 `json:"approve_ms"`
	ApprovalToResultMS float64 `json:"approval_to_result_ms"`
	// MemoryDuring: the highest VmRSS read during the wait, and the last.
	MemoryDuringMaxRSS  float64 `json:"worker_vmrss_during_max_mib"`
	MemoryDuringLastRSS float64 `json:"worker_vmrss_during_last_mib"`
	MemorySamples       int     `json:"worker_memory_samples"`
	Status              string  `json:"status"`
}

func runLong(args []string) error {
	o, err := parseLongOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	rep, err := RunLong(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	return writeReport(o.Out, "long", rep)
}

// RunLong starts one worker and runs the parts of o in order.
func RunLong(ctx context.Context, o LongOptions, progress io.Writer) (*LongReport, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(progress, "==> "+format+"\n", args...) }
	tc, err := dialTemporal(o.Address, o.Namespace, progress)
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	cl := client.New(tc, client.Options{TaskQueue: o.TaskQueue})
	logf("starting the worker on task queue %s (TEMPORAL_ADDRESS=%s)", o.TaskQueue, o.Address)
	w, _, err := startWorker(ctx, o.TaskQueue, []string{"TEMPORAL_ADDRESS=" + o.Address, "TEMPORAL_NAMESPACE=" + o.Namespace})
	if err != nil {
		return nil, err
	}
	defer w.stop()
	pid := w.cmd.Process.Pid
	rep := &LongReport{
		Time: time.Now().UTC(), Address: o.Address, ServerVersion: serverVersion(ctx, tc),
		CPUs: runtime.NumCPU(), LoadAvgStart: loadAvg(), WorkerStart: readMemory(pid),
	}
	session := "bench-" + strings.TrimPrefix(o.TaskQueue, "bench-")
	for _, part := range o.Parts {
		switch part {
		case "calls", "atmostonce":
			tool := ToolNoop
			if part == "atmostonce" {
				tool = ToolWrite
			}
			c := Case{Name: part, Tool: tool, Calls: o.Calls}
			in := longInput(session, part, c)
			logf("%s: one round of %d %s calls", part, o.Calls, tool)
			before := readMemory(pid)
			start := time.Now()
			res, err := cl.Run(ctx, in)
			lat := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s round %s: %w", part, in.WorkflowID(), err)
			}
			if err := checkResult(c, res); err != nil {
				return nil, fmt.Errorf("%s round %s: %w", part, in.WorkflowID(), err)
			}
			lr, err := longRound(ctx, tc, part, c, in.WorkflowID(), lat, before, readMemory(pid))
			if err != nil {
				return nil, err
			}
			rep.Rounds = append(rep.Rounds, lr)
		case "approval":
			aw, err := approvalRound(ctx, o, cl, tc, session, pid, logf)
			if err != nil {
				return nil, err
			}
			rep.Approval = aw
		}
	}
	rep.LoadAvgEnd = loadAvg()
	return rep, nil
}

func longInput(session, run string, c Case) *round.Input {
	calls := make([]round.ToolCall, c.Calls)
	for k := range calls {
		calls[k] = round.ToolCall{ID: fmt.Sprintf("call_%d", k), Type: "function",
			Function: round.FunctionCall{Name: c.Tool, Arguments: round.Arguments(fmt.Sprintf(`{"n":%d}`, k))}}
	}
	return &round.Input{
		SessionID: session, RunID: run, Round: 0, Provider: tools.ProviderClaudeCode, AutoApprove: true,
		Assistant: round.Message{Role: "assistant", ToolCalls: calls},
		State:     &round.RunState{Fetched: []string{c.Tool}},
	}
}

func longRound(ctx context.Context, tc tclient.Client, part string, c Case, id string, lat time.Duration, before, after Memory) (LongRound, error) {
	t, err := fetchTrace(ctx, tc, id)
	if err != nil {
		return LongRound{}, err
	}
	return LongRound{
		Part: part, Tool: c.Tool, Calls: c.Calls, WorkflowID: id, LatencyMS: ms(lat),
		Events: t.Events, Bytes: t.Bytes, WorkflowTasks: t.WorkflowTasks, Activities: t.Activities, Markers: t.Markers,
		ResultBytes: t.ResultBytes, CountByKind: t.CountByKind, BytesByKind: t.BytesByKind,
		MemoryBefore: before, MemoryAfter: after,
	}, nil
}

// approvalRound runs one at-most-once call without auto-approve: it waits
// until the call waits in Pending, sleeps o.ApprovalWait reading the
// worker's memory, approves it with client.Approve (the confirm update) and
// waits for the result.
func approvalRound(ctx context.Context, o LongOptions, cl *client.Client, tc tclient.Client, session string, pid int, logf func(string, ...any)) (*ApprovalWait, error) {
	c := Case{Name: "approval", Tool: ToolWrite, Calls: 1}
	in := longInput(session, "approval", c)
	in.AutoApprove = false
	in.ConfirmTimeoutSeconds = int(o.ConfirmTimeout / time.Second)
	before := readMemory(pid)
	start := time.Now()
	run, err := cl.Start(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("approval round: %w", err)
	}
	id := in.WorkflowID()
	var p client.PendingCall
	for {
		ps, err := cl.Pending(ctx, id)
		if err != nil && !errors.Is(err, client.ErrRoundNotFound) {
			return nil, fmt.Errorf("approval round %s: %w", id, err)
		}
		if len(ps) > 0 {
			p = ps[0]
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	waiting := time.Since(start)
	logf("approval: call %s waits (deadline %s); approving after %s", p.CallID, p.Deadline.Format(time.RFC3339), o.ApprovalWait)
	aw := &ApprovalWait{WaitSeconds: o.ApprovalWait.Seconds(), ConfirmTimeoutSeconds: in.ConfirmTimeoutSeconds, UntilWaitingMS: ms(waiting)}
	until := time.Now().Add(o.ApprovalWait)
	for {
		m := readMemory(pid)
		aw.MemorySamples++
		aw.MemoryDuringLastRSS = m.ResidMiB
		aw.MemoryDuringMaxRSS = max(aw.MemoryDuringMaxRSS, m.ResidMiB)
		left := time.Until(until)
		if left <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(left, o.Sample)):
		}
	}
	t0 := time.Now()
	if err := cl.Approve(ctx, id, p.CallID, client.ConfirmOptions{ApprovalID: p.ApprovalID, By: "bench", Reason: "bench long"}); err != nil {
		return nil, fmt.Errorf("approval round %s: %w", id, err)
	}
	aw.ApproveMS = ms(time.Since(t0))
	res, err := cl.Wait(ctx, run)
	aw.ApprovalToResultMS = ms(time.Since(t0))
	if err != nil {
		return nil, fmt.Errorf("approval round %s: %w", id, err)
	}
	if len(res.Results) == 1 {
		aw.Status = string(res.Results[0].Status)
	}
	lr, err := longRound(ctx, tc, "approval", c, id, time.Since(start), before, readMemory(pid))
	if err != nil {
		return nil, err
	}
	aw.LongRound = lr
	return aw, nil
}

func ms(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }

// Print writes the long rounds as text.
func (r *LongReport) Print(w io.Writer) {
	fmt.Fprintf(w, "toolround bench long %s: server %s at %s, %d CPUs, load %s -> %s\n",
		r.Time.Format(time.RFC3339), r.ServerVersion, r.Address, r.CPUs, r.LoadAvgStart, r.LoadAvgEnd)
	fmt.Fprintf(w, "worker memory at start: VmHWM %.1f MiB, VmRSS %.1f MiB\n", r.WorkerStart.PeakMiB, r.WorkerStart.ResidMiB)
	rounds := r.Rounds
	if r.Approval != nil {
		rounds = append(append([]LongRound(nil), rounds...), r.Approval.LongRound)
	}
	for _, lr := range rounds {
		fmt.Fprintf(w, "\n%s: %d x %s in %.1f ms; history %d events, %d bytes (result %d B), %d workflow tasks, %d activities, %d markers\n",
			lr.Part, lr.Calls, lr.Tool, lr.LatencyMS, lr.Events, lr.Bytes, lr.ResultBytes, lr.WorkflowTasks, lr.Activities, lr.Markers)
		fmt.Fprintf(w, "  worker memory before: VmHWM %.1f MiB, VmRSS %.1f MiB; after: VmHWM %.1f MiB, VmRSS %.1f MiB\n",
			lr.MemoryBefore.PeakMiB, lr.MemoryBefore.ResidMiB, lr.MemoryAfter.PeakMiB, lr.MemoryAfter.ResidMiB)
		kinds := make([]string, 0, len(lr.CountByKind))
		for k := range lr.CountByKind {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			return lr.BytesByKind[kinds[i]] > lr.BytesByKind[kinds[j]] || lr.BytesByKind[kinds[i]] == lr.BytesByKind[kinds[j]] && kinds[i] < kinds[j]
		})
		fmt.Fprintf(w, "  events by kind (count, bytes):")
		for _, k := range kinds {
			fmt.Fprintf(w, " %s %d %dB;", strings.TrimPrefix(k, "EVENT_TYPE_"), lr.CountByKind[k], lr.BytesByKind[k])
		}
		fmt.Fprintln(w)
	}
	if a := r.Approval; a != nil {
		fmt.Fprintf(w, "approval: the call waited %.0f s (confirm timeout %d s), waiting %.1f ms after the start call; approve (confirm update) %.1f ms, approval to result %.1f ms, status %s\n",
			a.WaitSeconds, a.ConfirmTimeoutSeconds, a.UntilWaitingMS, a.ApproveMS, a.ApprovalToResultMS, a.Status)
		fmt.Fprintf(w, "  worker VmRSS during the wait: highest %.1f MiB, last %.1f MiB (%d readings)\n",
			a.MemoryDuringMaxRSS, a.MemoryDuringLastRSS, a.MemorySamples)
	}
}
