package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
)

// approve and deny: the decisions of a person on a waiting call.

var approveCommand = &command{name: "approve", args: "WORKFLOW_ID CALL_ID", npos: 2,
	summary: "Let a waiting call run: the arguments it runs with are shown on stderr.\n" +
		"Exits non-zero when the call does not wait, its arguments changed meanwhile, or --args fail the tool's schema.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.reason, "reason", "", "why, recorded with the decision")
		fs.BoolVar(&f.remember, "remember", false, "remember an allow rule for the rest of the run")
		fs.StringVar(&f.pattern, "pattern", "", "the allow rule's pattern (with --remember), e.g. 'git *'; default: this call's exact arguments")
		fs.BoolVar(&f.allowTurn, "allow-turn", false, "approve the round's other waiting calls too (never a read of keys or credentials)")
		fs.Func("up-to", "with --remember: the rule approves at most N matching calls of the run, then the next one asks", func(s string) error {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 || n > round.MaxLimit {
				return fmt.Errorf("give a whole number from 1 to %d", round.MaxLimit)
			}
			f.upTo = n
			return nil
		})
		fs.Func("scope", "with --remember: what a command the rule approves may change, read-only (the workspace is read-only to it) or write; "+
			"default: read-only when this call is a read-only form, else write; the protected set (.git, .env*, keys, ...) is read-only under both", func(s string) error {
			scopes := []string{approval.ScopeReadOnly, approval.ScopeWrite}
			if !approval.ValidScope(s) || s == "" {
				if c := text.Closest(s, scopes); c != "" {
					return fmt.Errorf("unknown scope %q; did you mean %q?", s, c)
				}
				return fmt.Errorf("unknown scope %q: give %s or %s", s, scopes[0], scopes[1])
			}
			f.scope = s
			return nil
		})
		fs.StringVar(&f.as, "as", "", "who approves, recorded with the decision; default: your OS user at the host name, user@host")
		fs.StringVar(&f.args, "args", "", "run the call with these arguments (a JSON object) instead of the model's")
		fs.BoolVar(&f.yes, "yes", false, "with --remember --pattern over a program that runs the workspace's code (python3, node, go, npm, make, ...): "+
			"consent without being asked; needed when stdin is not a terminal")
	},
	run: func(ctx context.Context, x *call) error {
		if x.f.args != "" && !json.Valid([]byte(x.f.args)) {
			return usageError{errors.New("approve --args: not JSON; give the arguments as a JSON object"), ""}
		}
		if x.f.scope != "" && !x.f.remember {
			return usageError{errors.New("approve --scope is a remembered rule's: give it with --remember"), ""}
		}
		if x.f.upTo != 0 && !x.f.remember {
			return usageError{errors.New("approve --up-to bounds a remembered rule: give it with --remember"), ""}
		}
		if err := consentToWorkspaceCode(x.f, x.stdin, x.stderr, isTerminal(x.stdin)); err != nil {
			return err
		}
		return runDecide(ctx, x, true)
	}}

// consentToWorkspaceCode says, before a rule is remembered over a program
// that runs the workspace's code, that the rule is consent to run it (T11),
// and asks for that consent: --yes gives it; on a terminal the answer y
// does; without a terminal and --yes nothing is decided (a usage error).
// Any other decision goes on without a word.
func consentToWorkspaceCode(f flags, stdin io.Reader, stderr io.Writer, terminal bool) error {
	if !f.remember || f.pattern == "" {
		return nil
	}
	prog, ok := approval.WorkspaceCodeProgram(f.pattern)
	if !ok || approval.ValidatePattern(approval.KindCommand, "run_command", f.pattern) != nil {
		return nil // the worker refuses a pattern that cannot be a rule, and says why
	}
	fmt.Fprintln(stderr, "starter: "+approval.WorkspaceCodeNotice(prog)+".")
	if f.yes {
		return nil
	}
	if !terminal {
		return usageError{fmt.Errorf("approve --remember --pattern %q: a rule over %s is consent to run the workspace's code; give --yes to remember it (nothing was decided)", f.pattern, prog), ""}
	}
	fmt.Fprint(stderr, "Remember it? [y/N] ")
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("the rule over %s was not remembered, and nothing was decided", prog)
}

// isTerminal reports whether r is a terminal, as a person's stdin is: a
// character device other than /dev/null.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

var denyCommand = &command{name: "deny", args: "WORKFLOW_ID CALL_ID", npos: 2,
	summary: "Skip a waiting call; its result says it was skipped by the user.",
	flags: func(fs *flag.FlagSet, f *flags) {
		fs.StringVar(&f.reason, "reason", "", "why, shown to the model in the call's result")
		fs.StringVar(&f.as, "as", "", "who denies, recorded with the decision; default: your OS user at the host name, user@host")
	},
	run: func(ctx context.Context, x *call) error { return runDecide(ctx, x, false) }}

func runDecide(ctx context.Context, x *call, approve bool) error {
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return decide(ctx, c, approve, x.pos[0], x.pos[1], x.f, x.stderr)
}

// decide approves or denies a waiting call through the confirm update. It
// reads the call's approval_id from the round, so the decision is for the
// arguments it shows on stderr and for nothing else (T1).
func decide(ctx context.Context, c *client.Client, approve bool, workflowID, callID string, f flags, stderr io.Writer) error {
	pending, err := pendingOnceAWorkerRuns(ctx, c, workflowID, stderr)
	if err != nil {
		return err
	}
	var p *client.PendingCall
	for i := range pending {
		if pending[i].CallID == callID && pending[i].NeedsDecision() {
			p = &pending[i]
		}
	}
	if p == nil {
		return fmt.Errorf("call %s of %s does not wait for a decision (starter pending %s lists what waits)", callID, workflowID, workflowID)
	}
	by := f.as
	if by == "" {
		by = defaultBy()
	}
	o := client.ConfirmOptions{ApprovalID: p.ApprovalID, WaitID: p.WaitID, Reason: f.reason, By: by, Via: "cli"}
	verb := "denying"
	if approve {
		verb = "approving"
		o.Remember, o.AllowTurn, o.Pattern, o.UpTo, o.Scope = f.remember, f.allowTurn, f.pattern, f.upTo, f.scope
		if f.args != "" {
			o.Args = json.RawMessage(f.args)
		}
	}
	line := fmt.Sprintf("%s %s %s %s", verb, p.CallID, p.Tool, shortArgs(p.Arguments))
	if p.Kind == client.KindLimit {
		line += " (past a run limit: " + strings.Join(p.Why(), "; ") + ")"
	}
	if o.Args != nil {
		line += " -> edited: " + shortArgs(f.args)
	}
	fmt.Fprintln(stderr, line)
	if approve {
		err = c.Approve(ctx, workflowID, callID, o)
	} else {
		err = c.Deny(ctx, workflowID, callID, o)
	}
	if err == nil && approve && (o.Remember || o.AllowTurn) {
		reportAlsoDecided(ctx, c, workflowID, callID, pending, o, stderr)
	}
	switch {
	case errors.Is(err, client.ErrNotWaiting):
		return fmt.Errorf("call %s of %s no longer waits for a decision: %w", callID, workflowID, err)
	case errors.Is(err, client.ErrStaleApproval):
		return fmt.Errorf("call %s of %s changed while you decided; nothing was decided, run the command again: %w", callID, workflowID, err)
	case errors.Is(err, client.ErrInvalidArgs):
		return fmt.Errorf("--args for call %s: %w", callID, err)
	case errors.Is(err, client.ErrInvalidPattern):
		return fmt.Errorf("--pattern for call %s: %w", callID, err)
	case errors.Is(err, client.ErrStaleWait):
		return fmt.Errorf("call %s of %s waits anew since you read it; nothing was decided, run the command again: %w", callID, workflowID, err)
	case errors.Is(err, client.ErrInvalidDecision):
		return usageError{error: fmt.Errorf("call %s of %s: %w", callID, workflowID, err)}
	}
	return err
}

// reportAlsoDecided says which other calls of the round a remembered rule
// or --allow-turn approved with this one. The confirm update settles them
// before it returns, so every call that waited for a decision before it
// and waits no longer was approved by it.
func reportAlsoDecided(ctx context.Context, c *client.Client, workflowID, callID string, before []client.PendingCall, o client.ConfirmOptions, stderr io.Writer) {
	after, err := c.Pending(ctx, workflowID)
	if err != nil {
		return
	}
	still := map[string]bool{}
	for _, p := range after {
		still[p.CallID] = true
	}
	how := "the remembered rule"
	if o.AllowTurn {
		how = "--allow-turn"
	}
	var also, left []string
	for _, p := range before {
		if p.CallID == callID || !p.NeedsDecision() {
			continue
		}
		if still[p.CallID] {
			left = append(left, p.CallID)
			continue
		}
		also = append(also, p.CallID+" "+p.Tool+" "+shortArgs(p.Arguments))
	}
	if len(also) == 0 {
		fmt.Fprintf(stderr, "%s approved no other waiting call of this round\n", how)
		return
	}
	fmt.Fprintf(stderr, "%s also approved %d other waiting call(s) of this round:\n", how, len(also))
	for _, a := range also {
		fmt.Fprintln(stderr, "  "+a)
	}
	if len(left) > 0 {
		fmt.Fprintf(stderr, "still waiting: %s\n", strings.Join(left, ", "))
	}
}

// pendingOnceAWorkerRuns reads what a round waits for; only a worker
// answers, so while none does (one restarts, say) it waits up to two
// minutes, and says so once.
func pendingOnceAWorkerRuns(ctx context.Context, c *client.Client, workflowID string, stderr io.Writer) ([]client.PendingCall, error) {
	deadline := time.Now().Add(2 * time.Minute)
	told := false
	for {
		pending, err := c.Pending(ctx, workflowID)
		if err == nil || errors.Is(err, client.ErrRoundNotFound) || time.Now().After(deadline) || ctx.Err() != nil {
			return pending, err
		}
		if !told {
			fmt.Fprintln(stderr, "waiting for a worker to answer: "+oneLine(err.Error()))
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// defaultBy is who decides when --as is not given: the OS user at the
// host name.
func defaultBy() string {
	return decider(user.Current, os.Getenv, os.Hostname, os.Getuid())
}

// decider is user@host: the user from the user database, else $USER or
// $LOGNAME, else the uid; the host name when there is one.
func decider(current func() (*user.User, error), getenv func(string) string, hostname func() (string, error), uid int) string {
	name := ""
	if u, err := current(); err == nil {
		name = u.Username
	}
	for _, v := range []string{"USER", "LOGNAME"} {
		if name == "" {
			name = getenv(v)
		}
	}
	if name == "" {
		name = fmt.Sprintf("uid %d", uid)
	}
	host, err := hostname()
	if err != nil || host == "" {
		return name
	}
	return name + "@" + host
}

// shortArgs is a call's arguments on one line, cut at 2000 bytes.
func shortArgs(args string) string {
	s := oneLine(args)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return s
}
