package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// round: submit a round, tell the person at the terminal what it waits for,
// and print its result.

var roundCommand = &command{name: "round", args: "FILE|-", npos: 1,
	summary: "Run a round (a JSON file, or - for stdin) and print its result as JSON on stdout.\n" +
		"Calls that wait for approval are listed on stderr with the commands that answer them.\n" +
		"--after PREV takes the run state from PREV, the previous round's result as starter round printed it.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.after, "after", "", "the `file` of the previous round's result (starter round's output): the round starts from its run state; the round input then has no state of its own")
		fs.BoolVar(&f.quiet, "quiet", false, "no hints on stderr")
		fs.BoolVar(&f.events, "events", false, "write the round's events to stderr as JSON lines while it runs (confirmation_requested carries workflow_id, call_id and approval_id); needs Redis")
	},
	run: func(ctx context.Context, x *call) error {
		in, err := readInput(x.pos[0], x.stdin)
		if err != nil {
			return usageError{error: err}
		}
		if x.f.after != "" {
			if err := stateAfter(in, x.f.after); err != nil {
				return usageError{error: err}
			}
		}
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := redisDown(c, x.stderr, x.f.events); err != nil {
			return err
		}
		return runRound(ctx, c, in, x.stdout, x.stderr, x.f)
	}}

func readInput(name string, stdin io.Reader) (*round.Input, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read round: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read round: %w", err)
	}
	return round.ParseInput(b)
}

// stateAfter gives in the run state of the round result in the file name
// (--after): the result of an earlier round of the same run, as starter
// round, starter result or the console's ?wait=1 print it. A round input
// that carries a state of its own is refused, as is a file that is not a
// round's result.
func stateAfter(in *round.Input, name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("--after: %w", err)
	}
	notResult := func(why string) error {
		return fmt.Errorf("--after %s is not a round's result (the output of starter round): %s", name, why)
	}
	var prev struct {
		WorkflowID *string          `json:"workflow_id"`
		Results    *json.RawMessage `json:"results"`
		State      *round.RunState  `json:"state"`
	}
	if err := json.Unmarshal(b, &prev); err != nil {
		return notResult(err.Error())
	}
	switch {
	case prev.WorkflowID == nil:
		return notResult("it has no workflow_id")
	case prev.Results == nil:
		return notResult("it has no results")
	case prev.State == nil:
		return notResult("it has no state")
	}
	session, run, ok := names.RunOfWorkflowID(*prev.WorkflowID)
	n, err := strconv.Atoi((*prev.WorkflowID)[strings.LastIndex(*prev.WorkflowID, "/")+1:])
	if !ok || err != nil || !strings.HasPrefix(*prev.WorkflowID, names.WorkflowIDPrefix+"/") {
		return notResult(fmt.Sprintf("its workflow_id %q is not a round's", *prev.WorkflowID))
	}
	switch {
	case session != in.SessionID || run != in.RunID:
		return fmt.Errorf("--after %s is a round of session %q run %q, not of this round's run (session %q run %q): a run's state stays in its run",
			name, session, run, in.SessionID, in.RunID)
	case n >= in.Round:
		return fmt.Errorf("--after %s is round %d of the run; this round (%d) must come after it", name, n, in.Round)
	case in.State != nil:
		return fmt.Errorf("the round input has a state of its own and --after %s gives one: leave one out", name)
	}
	in.State = prev.State
	return nil
}

func runRound(ctx context.Context, c *client.Client, in *round.Input, stdout, stderr io.Writer, f flags) error {
	opts := []client.RunOption{client.WaitForWorker()}
	if f.events {
		ev := &eventWriter{c: c, w: stderr, approvalIDs: map[string]string{}}
		opts = append(opts, client.WithEvents(ev.write), client.WithWaitingHandler(ev.waiting))
	} else if !f.quiet {
		opts = append(opts, client.WithWaitingHandler(func(p client.PendingCall) { hint(stderr, p) }))
	}
	if f.events || !f.quiet {
		stop := tellNoWorker(ctx, c, in.WorkflowID(), stderr, f.events)
		defer stop()
	}
	res, err := c.Run(ctx, in, opts...)
	if errors.Is(err, client.ErrInputTooLarge) {
		return usageError{error: err}
	}
	if err != nil {
		return err
	}
	return printJSON(stdout, res)
}

// redisDown says in one line that Redis does not answer: an error when the
// command needs it (needed), else a note on stderr, and nil.
func redisDown(c *client.Client, stderr io.Writer, needed bool) error {
	err := c.RedisError()
	if err == nil {
		return nil
	}
	if needed {
		return fmt.Errorf("%w; --events needs it", err)
	}
	fmt.Fprintln(stderr, "starter: "+oneLine(err.Error())+"; large results stay previews")
	return nil
}

// tellNoWorker says on stderr, once, two seconds after the round (or agent
// run) was submitted, when no worker of the client's task queue runs it: it
// waits on a queue no worker polls, or on another queue (TASK_QUEUE
// differed when it was first submitted); the line names the queue, since
// when, and the ways out.
func tellNoWorker(ctx context.Context, c *client.Client, workflowID string, stderr io.Writer, asJSON bool) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		line := map[string]string{"type": "waiting_for_worker", "workflow_id": workflowID, "task_queue": c.TaskQueue()}
		s, err := c.Stalled(ctx, workflowID)
		switch {
		case err == nil && s == nil:
			return
		case err == nil:
			line["task_queue"], line["since"], line["detail"] = s.TaskQueue, s.Since.UTC().Format(time.RFC3339), s.String()
		default:
			if ok, err := c.HasWorkers(ctx); err != nil || ok {
				return
			}
			line["detail"] = client.NoWorkerError(c.TaskQueue()).Error() + "; the round starts when one does"
		}
		if ctx.Err() != nil {
			return
		}
		if asJSON {
			b, _ := json.Marshal(line)
			fmt.Fprintln(stderr, string(b))
			return
		}
		fmt.Fprintln(stderr, line["detail"])
	}()
	return func() { cancel(); <-done }
}

// hint tells the person at the terminal what a waiting call needs and how to
// answer it.
func hint(stderr io.Writer, p client.PendingCall) {
	switch p.Kind {
	case client.KindConfirm:
		fmt.Fprintf(stderr, "waiting for approval: %s %s (%s)\n  starter approve %s %s   |   starter deny %s %s --reason TEXT\n",
			p.Tool, p.Subject, p.Reason, p.WorkflowID, p.CallID, p.WorkflowID, p.CallID)
	case client.KindAnswer:
		fmt.Fprintf(stderr, "waiting for an answer: %s\n  starter answer %s %s ANSWER...\n", strings.Join(p.Questions, " | "), p.WorkflowID, p.CallID)
	case client.KindElicitation:
		fmt.Fprintf(stderr, "waiting for input: %s\n  starter answer %s %s --json '{...}'   |   --decline   |   --cancel\n",
			elicitSummary(p.Elicitation), p.WorkflowID, p.CallID)
	default:
		fmt.Fprintf(stderr, "waiting for client tool %s (call %s)\n", p.Tool, p.CallID)
	}
}

// elicitSummary is one line of an MCP server's request (E1): the server,
// its message as text, and the form's fields or the URL to open (shown,
// never opened).
func elicitSummary(e *round.Elicitation) string {
	if e == nil {
		return "an MCP server asks for input"
	}
	s := fmt.Sprintf("mcp server %s asks: %s", e.Server, strings.Join(strings.Fields(e.Message), " "))
	if e.Mode == "url" {
		return s + fmt.Sprintf(" (open %s yourself; host %s)", e.URL, e.Host)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(e.RequestedSchema, &schema) == nil && len(schema.Properties) > 0 {
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		s += " (fields: " + strings.Join(names, ", ") + ")"
	}
	return s
}

// eventWriter writes a round's events as JSON lines. A
// confirmation_requested event gains the call's approval_id, when the round
// provides one, from the round's pending calls.
type eventWriter struct {
	c           *client.Client
	w           io.Writer
	mu          sync.Mutex
	approvalIDs map[string]string // call id -> approval id, from the pending calls
}

// eventLine is an event as --events writes it.
type eventLine struct {
	round.Event
	ApprovalID string `json:"approval_id,omitempty"`
}

func (e *eventWriter) waiting(p client.PendingCall) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.approvalIDs[p.CallID] = p.ApprovalID
}

func (e *eventWriter) write(ev round.Event) {
	line := eventLine{Event: ev}
	if ev.Type == round.EventConfirmationRequested {
		line.ApprovalID = e.approvalID(ev)
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintln(e.w, string(b))
}

func (e *eventWriter) approvalID(ev round.Event) string {
	e.mu.Lock()
	id, ok := e.approvalIDs[ev.CallID]
	e.mu.Unlock()
	if ok {
		return id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	pending, err := e.c.Pending(ctx, ev.WorkflowID)
	if err != nil {
		return ""
	}
	for _, p := range pending {
		if p.CallID == ev.CallID {
			return p.ApprovalID
		}
	}
	return ""
}
