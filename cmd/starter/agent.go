package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// The agent subcommands (A4): start or attach to a durable agent run and
// print its final answer, show a run's conversation, add a user message.

type agentFlags struct {
	session, run, provider string
	autoApprove, events    bool
	maxRounds              int
	confirmTimeout         int
	limits                 string
}

var agentCommands = map[string]struct {
	args, summary string
	npos          int
	flags         func(fs *flag.FlagSet, f *agentFlags)
	run           func(ctx context.Context, c *client.Client, pos []string, f agentFlags, stdout, stderr io.Writer) error
}{
	"agent": {args: "--session S --run R [--provider P] [--auto-approve] [--max-rounds N] [--limits JSON] [--events] TASK...", npos: 1,
		summary: "Start (or attach to) a durable agent run and print the model's final answer on stdout.\n" +
			"Exit 1 with one line when the run stops at --max-rounds or a limit, or fails. Needs a worker with LLM_BASE_URL set.",
		flags: func(fs *flag.FlagSet, f *agentFlags) {
			fs.StringVar(&f.session, "session", "", "the session id (required)")
			fs.StringVar(&f.run, "run", "", "the run id (required); the same session and run attach to the same run")
			fs.StringVar(&f.provider, "provider", "openai", "the session's provider: claude-code, or any other name")
			fs.BoolVar(&f.autoApprove, "auto-approve", false, "run calls that would ask for approval without asking (except C4's always-ask calls)")
			fs.IntVar(&f.maxRounds, "max-rounds", 0, fmt.Sprintf("stop with status round_limit after this many rounds (default %d)", round.DefaultMaxRounds))
			fs.IntVar(&f.confirmTimeout, "confirm-timeout", 0, "seconds a call waits for approval (default: the worker's)")
			fs.StringVar(&f.limits, "limits", "", `the run's limits as JSON, e.g. '{"max_calls": 200, "max_seconds": 3600, "max_model_tokens": 500000}' (max_commands, max_writes too); past one a call waits for a person, and the run ends limit_reached past max_seconds or max_model_tokens`)
			fs.BoolVar(&f.events, "events", false, "write the run's events (model tokens, rounds, approvals) to stderr as JSON lines; needs Redis")
		},
		run: runAgent},
	"agent-status": {args: "WORKFLOW_ID", npos: 1, summary: "Print an agent run's status and conversation so far (JSON).",
		run: func(ctx context.Context, c *client.Client, pos []string, _ agentFlags, stdout, _ io.Writer) error {
			st, err := c.AgentStatus(ctx, pos[0])
			if err != nil {
				return err
			}
			return printJSON(stdout, st)
		}},
	"agent-message": {args: "WORKFLOW_ID TEXT...", npos: 2, summary: "Add a user message to a running agent run; it joins the conversation before the next model call.",
		run: func(ctx context.Context, c *client.Client, pos []string, _ agentFlags, _, _ io.Writer) error {
			return c.SendUserMessage(ctx, pos[0], strings.Join(pos[1:], " "))
		}},
}

// agentUsage lists the agent subcommands for usage().
func agentUsage() string {
	var b strings.Builder
	for _, name := range []string{"agent", "agent-status", "agent-message"} {
		cmd := agentCommands[name]
		first, _, _ := strings.Cut(cmd.summary, "\n")
		args := cmd.args
		if name == "agent" {
			args = "--session S --run R TASK"
		}
		fmt.Fprintf(&b, "  %-40s %s\n", name+" "+args, first)
	}
	return b.String()
}

// runAgentCommand parses an agent subcommand's arguments and runs it; ok is
// false when name is not one.
func runAgentCommand(ctx context.Context, name string, args []string, stdout, stderr io.Writer) (bool, error) {
	cmd, ok := agentCommands[name]
	if !ok {
		return false, nil
	}
	var f agentFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.flags != nil {
		cmd.flags(fs, &f)
	}
	use := func() string {
		var d strings.Builder
		fs.SetOutput(&d)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		u := fmt.Sprintf("usage: starter %s %s\n\n%s\n", name, cmd.args, cmd.summary)
		if d.Len() > 0 {
			u += "\nflags:\n" + strings.ReplaceAll("\n"+d.String(), "\n  -", "\n  --")[1:]
		}
		return u + "\n" + environment
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		_, err := fmt.Fprintln(stdout, use())
		return true, err
	}
	if err != nil {
		return true, usageError{fmt.Errorf("%s: %w", name, flagError(fs, err)), use()}
	}
	if len(pos) < cmd.npos {
		return true, usageError{fmt.Errorf("%s needs %s", name, cmd.args), use()}
	}
	if name == "agent" {
		in, err := agentInput(pos, f)
		if err != nil {
			return true, usageError{fmt.Errorf("agent: %w", err), use()}
		}
		if err := in.Validate(); err != nil {
			return true, usageError{fmt.Errorf("agent: %w", err), use()}
		}
	}
	c, err := client.FromEnv(ctx)
	if err != nil {
		return true, err
	}
	defer c.Close()
	return true, cmd.run(ctx, c, pos, f, stdout, stderr)
}

// agentInput is the agent run the flags and the task ask for.
func agentInput(pos []string, f agentFlags) (round.AgentInput, error) {
	in := round.AgentInput{SessionID: f.session, RunID: f.run, Task: strings.Join(pos, " "), Provider: f.provider,
		AutoApprove: f.autoApprove, MaxRounds: f.maxRounds, ConfirmTimeoutSeconds: f.confirmTimeout}
	if f.limits != "" {
		l, err := round.ParseLimits(f.limits, "--limits")
		if err != nil {
			return in, err
		}
		in.Limits = &l
	}
	return in, nil
}

func runAgent(ctx context.Context, c *client.Client, pos []string, f agentFlags, stdout, stderr io.Writer) error {
	in, err := agentInput(pos, f)
	if err != nil {
		return usageError{error: err}
	}
	if err := c.RedisError(); err != nil {
		// The run's events come through Redis.
		return fmt.Errorf("%w; agent follows the run's events there", err)
	}
	run, err := c.StartAgent(ctx, in)
	if err != nil {
		return err
	}
	stop := tellNoWorker(ctx, c, run.GetID(), stderr, f.events)
	defer stop()
	ectx, cancel := context.WithCancel(ctx)
	ev := &eventWriter{c: c, w: stderr, approvalIDs: map[string]string{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = c.AgentEvents(ectx, in.SessionID, in.RunID, func(e round.Event) {
			if f.events {
				ev.write(e) // as starter round --events writes them, approval_id included
				return
			}
			// The stream is read from its start: a request whose call no
			// longer waits (an earlier round's, long decided) is history.
			if e.Type == round.EventConfirmationRequested && stillWaits(ectx, c, e.WorkflowID, e.CallID) {
				fmt.Fprintf(stderr, "%s waits for approval (%s): starter approve %s %s  |  starter deny %s %s --reason TEXT\n",
					e.CallID, e.Tool, e.WorkflowID, e.CallID, e.WorkflowID, e.CallID)
			}
		})
	}()
	st, err := c.WaitAgent(ctx, run.GetID())
	if err == nil && f.events {
		// Let the last events (up to agent_finished) reach stderr first.
		followed := make(chan struct{})
		go func() { wg.Wait(); close(followed) }()
		select {
		case <-followed:
		case <-time.After(3 * time.Second):
		}
	}
	cancel()
	wg.Wait()
	afresh := fmt.Sprintf("; the same --session and --run attach to this run again: pass another --run (e.g. --run %s-2) to start afresh", in.RunID)
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted{fmt.Errorf("interrupted: agent run %s goes on in the workers; attach again with the same command, or see it with: starter agent-status %s", run.GetID(), run.GetID())}
	case err != nil:
		return fmt.Errorf("%w%s", err, afresh)
	}
	switch st.Status {
	case round.AgentCompleted:
		_, err := fmt.Fprintln(stdout, st.Final)
		return err
	case round.AgentRoundLimit:
		return fmt.Errorf("agent run %s stopped at the round limit after %d rounds without a final answer (status round_limit)%s", st.WorkflowID, st.Round, afresh)
	case round.AgentTruncated, round.AgentRefused, round.AgentContextExceeded:
		return fmt.Errorf("agent run %s ended without a final answer after %d rounds (status %s): %s%s", st.WorkflowID, st.Round, st.Status, st.Reason, afresh)
	case round.AgentLimitReached:
		return fmt.Errorf("agent run %s stopped at a run limit after %d rounds (status limit_reached): %s; its state is kept (starter agent-status %s)", st.WorkflowID, st.Round, st.Reason, st.WorkflowID)
	default:
		return fmt.Errorf("agent run %s ended with status %s after %d rounds%s", st.WorkflowID, st.Status, st.Round, afresh)
	}
}

// stillWaits tells whether the call of round workflowID waits for a
// decision now.
func stillWaits(ctx context.Context, c *client.Client, workflowID, callID string) bool {
	pending, err := c.Pending(ctx, workflowID)
	if err != nil {
		return false
	}
	for _, p := range pending {
		if p.CallID == callID && p.NeedsDecision() {
			return true
		}
	}
	return false
}
