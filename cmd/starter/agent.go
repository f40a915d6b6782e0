package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// agent (A4): start or attach to a durable agent run and print its final
// answer. agent-status and agent-message (agent_status.go,
// agent_message.go) show a run's conversation and add a user message.

var agentCommand = &command{name: "agent", args: "--session S --run R [--model scripted:FILE] [--provider P] [--auto-approve] [--max-rounds N] [--limits JSON] [--events] TASK...",
	brief: "--session S --run R TASK", npos: 1, flagsInArgs: true,
	summary: "Start (or attach to) a durable agent run and print the model's final answer on stdout.\n" +
		"Exit 1 with one line when the run stops at --max-rounds or a limit, or fails. Needs a worker with LLM_BASE_URL set,\n" +
		"or --model scripted:FILE, whose model turns are written in FILE (docs/scripted-model.md): offline, no model server.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.session, "session", "", "the session id (required)")
		fs.StringVar(&f.run, "run", "", "the run id (required); the same session and run attach to the same run")
		fs.StringVar(&f.model, "model", "", "scripted:FILE plays the model turns written in FILE in place of the worker's model (docs/scripted-model.md)")
		fs.StringVar(&f.provider, "provider", "openai", "the session's provider: claude-code, or any other name")
		fs.BoolVar(&f.autoApprove, "auto-approve", false, "run calls that would ask for approval without asking (except C4's always-ask calls)")
		fs.IntVar(&f.maxRounds, "max-rounds", 0, fmt.Sprintf("stop with status round_limit after this many rounds (default %d)", round.DefaultMaxRounds))
		fs.IntVar(&f.confirmTimeout, "confirm-timeout", 0, "seconds a call waits for approval (default: the worker's)")
		fs.StringVar(&f.limits, "limits", "", `the run's limits as JSON, e.g. '{"max_calls": 200, "max_seconds": 3600, "max_model_tokens": 500000}' (max_commands, max_writes too); past one a call waits for a person, and the run ends limit_reached past max_seconds or max_model_tokens`)
		fs.BoolVar(&f.events, "events", false, "write the run's events (model tokens, rounds, approvals) to stderr as JSON lines; needs Redis")
	},
	run: func(ctx context.Context, x *call) error {
		in, err := agentInput(x.pos, x.f)
		if err != nil {
			return usageError{fmt.Errorf("agent: %w", err), x.usage}
		}
		if err := in.Validate(); err != nil {
			return usageError{fmt.Errorf("agent: %w", err), x.usage}
		}
		c, err := client.FromEnv(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return runAgent(ctx, c, x.pos, x.f, x.stdout, x.stderr)
	}}

// agentInput is the agent run the flags and the task ask for.
func agentInput(pos []string, f flags) (round.AgentInput, error) {
	in := round.AgentInput{SessionID: f.session, RunID: f.run, Task: strings.Join(pos, " "), Provider: f.provider,
		AutoApprove: f.autoApprove, MaxRounds: f.maxRounds, ConfirmTimeoutSeconds: f.confirmTimeout}
	if f.limits != "" {
		l, err := round.ParseLimits(f.limits, "--limits")
		if err != nil {
			return in, err
		}
		in.Limits = &l
	}
	if f.model != "" {
		s, err := readScript(f.model)
		if err != nil {
			return in, err
		}
		in.Script = s
	}
	return in, nil
}

// readScript reads --model scripted:FILE: the run's model turns.
func readScript(model string) (*round.ModelScript, error) {
	path, ok := strings.CutPrefix(model, round.ScriptModelPrefix)
	if !ok || path == "" {
		return nil, fmt.Errorf("--model %s: want scripted:FILE, a file of model turns (docs/scripted-model.md); the worker's own model is its LLM_MODEL", model)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--model %s: %w", model, err)
	}
	s, err := round.ParseModelScript(b)
	if err != nil {
		return nil, fmt.Errorf("--model %s: %w", model, err)
	}
	return s, nil
}

func runAgent(ctx context.Context, c *client.Client, pos []string, f flags, stdout, stderr io.Writer) error {
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
