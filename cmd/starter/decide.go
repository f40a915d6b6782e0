package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// approve, deny and extend: the answers of a person to a waiting call.

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

// extendedLine says what an extension added: the 7-day cap may let in
// less than was asked, down to nothing.
func extendedLine(callID string, asked time.Duration, e round.Extended) string {
	if e.Deadline.IsZero() {
		return fmt.Sprintf("call %s: asked to add %v; this round's build does not say what it added", callID, asked)
	}
	until := e.Deadline.UTC().Format(time.RFC3339)
	added := time.Duration(e.AddedSeconds) * time.Second
	switch {
	case added <= 0:
		return fmt.Sprintf("call %s: nothing added: it waits until %s, 7 days after it began to wait, the most a call waits", callID, until)
	case added < asked:
		return fmt.Sprintf("call %s: added %v, not the %v asked (a call waits at most 7 days); it waits until %s", callID, added, asked, until)
	}
	return fmt.Sprintf("call %s: added %v; it waits until %s", callID, added, until)
}

// parseWait reads extend's DURATION: a Go duration (30m, 2h) or seconds.
func parseWait(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 || n > 7*24*3600 {
			return 0, fmt.Errorf("extend: %s seconds: give 1 second to 7 days", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > 7*24*time.Hour {
		return 0, fmt.Errorf("extend: %q: give a duration from 1s to 168h, e.g. 30m or 2h", s)
	}
	return d, nil
}

// elicitAnswer reports whether answer's flags answer an MCP server's
// request (E1) rather than an ask_user call.
func elicitAnswer(f flags) bool {
	return f.answerJSON != "" || f.declineAnswer || f.cancelAns
}

// checkAnswerFlags refuses what answer cannot mean: two of --json,
// --decline and --cancel, answers beside them, --json that is not an
// object, or an ask_user answer without any answer.
func checkAnswerFlags(f flags, pos []string) error {
	n := 0
	for _, on := range []bool{f.answerJSON != "", f.declineAnswer, f.cancelAns} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("answer: give one of --json, --decline and --cancel")
	case n == 1 && len(pos) > 2:
		return errors.New("answer: --json, --decline and --cancel answer an MCP server's request and take no ANSWER arguments")
	case n == 0 && len(pos) < 3:
		return errors.New("answer needs WORKFLOW_ID CALL_ID ANSWER... (an ask_user call) or --json, --decline or --cancel (an MCP server's request)")
	}
	if f.answerJSON != "" {
		var v map[string]any
		if err := json.Unmarshal([]byte(f.answerJSON), &v); err != nil || v == nil {
			return errors.New("answer --json: give the form's values as a JSON object")
		}
	}
	return nil
}

// answerElicitation sends the answer update for an MCP server's request.
func answerElicitation(ctx context.Context, c *client.Client, workflowID, callID string, f flags) error {
	a := round.ElicitAnswer{CallID: callID, Action: round.ElicitAccept, By: f.as, Via: "cli"}
	if a.By == "" {
		a.By = defaultBy()
	}
	switch {
	case f.declineAnswer:
		a.Action = round.ElicitDecline
	case f.cancelAns:
		a.Action = round.ElicitCancel
	default:
		if err := json.Unmarshal([]byte(f.answerJSON), &a.Content); err != nil {
			return err
		}
	}
	return c.AnswerElicitation(ctx, workflowID, a)
}
