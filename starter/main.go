// Command starter is toolround's command-line client: it submits a round and
// prints its result, answers confirmations, and shows what rounds wait for.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/envconf"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools/ext"
	"github.com/toolround/toolround/tools/mcp"
)

// command is one subcommand: its arguments, what it does, its flags.
type command struct {
	args    string
	summary string
	// npos is how many positional arguments it needs at least.
	npos  int
	flags func(fs *flag.FlagSet, f *flags)
}

// flags holds every subcommand's flag values; each subcommand defines only
// its own.
type flags struct {
	reason, pattern, provider string
	as, args                  string
	remember, allowTurn       bool
	asJSON, all, quiet        bool
	events                    bool
	session                   string // inbox (inbox.go)
}

var commands = map[string]command{
	"round": {args: "FILE|-", npos: 1,
		summary: "Run a round (a JSON file, or - for stdin) and print its result as JSON on stdout.\n" +
			"Calls that wait for approval are listed on stderr with the commands that answer them.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.BoolVar(&f.quiet, "quiet", false, "no hints on stderr")
			fs.BoolVar(&f.events, "events", false, "write the round's events to stderr as JSON lines while it runs (confirmation_requested carries workflow_id, call_id and approval_id); needs Redis")
		}},
	"approve": {args: "WORKFLOW_ID CALL_ID", npos: 2, summary: "Let a waiting call run: the arguments it runs with are shown on stderr.\n" +
		"Exits non-zero when the call does not wait, its arguments changed meanwhile, or --args fail the tool's schema.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.reason, "reason", "", "why, recorded with the decision")
			fs.BoolVar(&f.remember, "remember", false, "remember an allow rule for the rest of the run")
			fs.StringVar(&f.pattern, "pattern", "", "the allow rule's pattern (with --remember), e.g. 'git *'; default: this call's exact arguments")
			fs.BoolVar(&f.allowTurn, "allow-turn", false, "approve the round's other waiting calls too (never a read of keys or credentials)")
			fs.StringVar(&f.as, "as", "", "who approves, recorded with the decision; default $USER@hostname")
			fs.StringVar(&f.args, "args", "", "run the call with these arguments (a JSON object) instead of the model's")
		}},
	"deny": {args: "WORKFLOW_ID CALL_ID", npos: 2, summary: "Skip a waiting call; its result says it was skipped by the user.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.reason, "reason", "", "why, shown to the model in the call's result")
			fs.StringVar(&f.as, "as", "", "who denies, recorded with the decision; default $USER@hostname")
		}},
	"extend": {args: "WORKFLOW_ID CALL_ID DURATION", npos: 3,
		summary: "Add DURATION (e.g. 30m, 2h, or seconds) to a waiting call's deadline; at most 7 days after it started to wait."},
	"pending":  {args: "WORKFLOW_ID", npos: 1, summary: "Print what a round waits for (JSON): calls to approve, questions, client tools."},
	"progress": {args: "WORKFLOW_ID", npos: 1, summary: "Print which calls of a round are queued, running, waiting or done (JSON)."},
	"answer":   {args: "WORKFLOW_ID CALL_ID ANSWER...", npos: 3, summary: "Answer an ask_user call."},
	"cancel":   {args: "WORKFLOW_ID", npos: 1, summary: "Cancel a round; every call still gets a result."},
	"result":   {args: "WORKFLOW_ID", npos: 1, summary: "Wait for a round's result and print it (JSON)."},
	"tools": {args: "--provider P", summary: "Print a provider's tools array, deferred names and turn-context line (JSON): the built-in tools, MCP_CONFIG's and TOOLS_CONFIG's.\n" +
		"claude-code gets every tool; any other provider gets find_tools, run_tool and the always-loaded tools.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.provider, "provider", "", "the session's provider: claude-code, or any other name (required)")
		}},
	"watch": {args: "SESSION_ID", npos: 1, summary: "Print the session's events as they happen; needs Redis.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.BoolVar(&f.asJSON, "json", false, "one JSON object per line")
			fs.BoolVar(&f.all, "all", false, "from the start of the stream, not only new events")
		}},
}

var order = []string{"round", "approve", "deny", "extend", "pending", "progress", "answer", "cancel", "result", "tools", "watch"}

const environment = "environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TASK_QUEUE, TEMPORAL_TLS_*, TEMPORAL_API_KEY, REDIS_URL, TOOLROUND_SECRET_KEY"

// usage lists every subcommand.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: starter COMMAND [ARGS] [FLAGS]   (starter COMMAND --help for its flags)\n\ncommands:\n")
	for _, name := range order {
		cmd := commands[name]
		first, _, _ := strings.Cut(cmd.summary, "\n")
		fmt.Fprintf(&b, "  %-40s %s\n", name+" "+cmd.args, first)
	}
	b.WriteString(agentUsage() + "\n" + environment)
	return b.String()
}

// commandUsage is one subcommand's usage with its flags.
func commandUsage(name string, cmd command, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: starter %s %s", name, cmd.args)
	if cmd.flags != nil && name != "tools" {
		b.WriteString(" [FLAGS]")
	}
	b.WriteString("\n\n" + cmd.summary + "\n")
	if cmd.flags != nil {
		var defaults strings.Builder
		fs.SetOutput(&defaults)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		// The flags take one or two dashes; show the two that GNU tools use.
		b.WriteString("\nflags:\n" + strings.ReplaceAll("\n"+defaults.String(), "\n  -", "\n  --")[1:])
	}
	b.WriteString("\n" + environment)
	return b.String()
}

// exit codes
const (
	exitFailed = 1 // the round failed or a command could not be carried out
	exitUsage  = 2 // bad arguments or unusable input
	// exitInterrupted: Ctrl-C or SIGTERM stopped the command, not what it
	// started (128 + SIGINT, as shells report it).
	exitInterrupted = 130
)

// interrupted is a command stopped by Ctrl-C or SIGTERM while what it
// started goes on.
type interrupted struct{ error }

// usageError is bad arguments or unusable input; Usage, when set, is printed
// after the message.
type usageError struct {
	error
	Usage string
}

func main() {
	// Errors of Redis are said in the command's own line, not the driver's.
	cache.DiscardDriverLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(report(err, os.Stderr))
}

// report prints err for a person and returns the exit code: one line for a
// failure; for bad arguments the message and then the usage.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "starter: "+oneLine(u.error.Error()))
		if u.Usage != "" {
			fmt.Fprintln(stderr, "\n"+u.Usage)
		}
		return exitUsage
	}
	fmt.Fprintln(stderr, "starter: "+oneLine(err.Error()))
	if errors.As(err, new(interrupted)) {
		return exitInterrupted
	}
	return exitFailed
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("no command given"), usage()}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				return printUsage(stdout, args[1], cmd)
			}
		}
		fmt.Fprintln(stdout, usage())
		return nil
	}
	name, args := args[0], args[1:]
	if ok, err := runAgentCommand(ctx, name, args, stdout, stderr); ok {
		return err
	}
	cmd, ok := commands[name]
	if !ok {
		return usageError{fmt.Errorf("unknown command %q", name), usage()}
	}
	var f flags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.flags != nil {
		cmd.flags(fs, &f)
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return printUsage(stdout, name, cmd)
	}
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", name, err), commandUsage(name, cmd, fs)}
	}
	if len(pos) < cmd.npos {
		return usageError{fmt.Errorf("%s needs %s", name, cmd.args), commandUsage(name, cmd, fs)}
	}

	switch name {
	case "tools":
		if f.provider == "" {
			return usageError{errors.New("tools needs --provider P (claude-code or any other name)"), commandUsage(name, cmd, fs)}
		}
		return printTools(ctx, stdout, f.provider)
	case "watch":
		return watch(ctx, stdout, pos[0], f.asJSON, f.all)
	}

	if name == "approve" && f.args != "" && !json.Valid([]byte(f.args)) {
		return usageError{errors.New("approve --args: not JSON; give the arguments as a JSON object"), ""}
	}
	var in *round.Input
	if name == "round" {
		if in, err = readInput(pos[0], stdin); err != nil {
			return usageError{error: err}
		}
	}
	c, err := client.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	switch name {
	case "round":
		if err := redisDown(c, stderr, f.events); err != nil {
			return err
		}
		return runRound(ctx, c, in, stdout, stderr, f)
	case "approve", "deny":
		return decide(ctx, c, name == "approve", pos[0], pos[1], f, stderr)
	case "extend":
		d, err := parseWait(pos[2])
		if err != nil {
			return usageError{error: err}
		}
		return c.Extend(ctx, pos[0], pos[1], d)
	case "answer":
		return c.Answer(ctx, pos[0], pos[1], pos[2:])
	case "pending":
		p, err := c.Pending(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, p)
	case "progress":
		p, err := c.Progress(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, p)
	case "inbox":
		return inbox(ctx, c, stdout, stderr, f)
	case "cancel":
		return c.Cancel(ctx, pos[0])
	default: // result
		res, err := c.Result(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, res)
	}
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
		if pending[i].CallID == callID && pending[i].Kind == client.KindConfirm {
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
	o := client.ConfirmOptions{ApprovalID: p.ApprovalID, Reason: f.reason, By: by, Via: "cli"}
	verb := "denying"
	if approve {
		verb = "approving"
		o.Remember, o.AllowTurn, o.Pattern = f.remember, f.allowTurn, f.pattern
		if f.args != "" {
			o.Args = json.RawMessage(f.args)
		}
	}
	line := fmt.Sprintf("%s %s %s %s", verb, p.CallID, p.Tool, shortArgs(p.Arguments))
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
		if p.CallID == callID || p.Kind != client.KindConfirm {
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

// defaultBy is who decides when --as is not given: $USER@hostname.
func defaultBy() string {
	user := os.Getenv("USER")
	if user == "" {
		user = "unknown"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return user
	}
	return user + "@" + host
}

// shortArgs is a call's arguments on one line, cut at 2000 bytes.
func shortArgs(args string) string {
	s := oneLine(args)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return s
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

func printUsage(w io.Writer, name string, cmd command) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if cmd.flags != nil {
		cmd.flags(fs, &flags{})
	}
	_, err := fmt.Fprintln(w, commandUsage(name, cmd, fs))
	return err
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

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

func runRound(ctx context.Context, c *client.Client, in *round.Input, stdout, stderr io.Writer, f flags) error {
	opts := []client.RunOption{client.WaitForWorker()}
	if f.events {
		ev := &eventWriter{c: c, w: stderr, approvalIDs: map[string]string{}}
		opts = append(opts, client.WithEvents(ev.write), client.WithWaitingHandler(ev.waiting))
	} else if !f.quiet {
		opts = append(opts, client.WithWaitingHandler(func(p client.PendingCall) { hint(stderr, p) }))
	}
	if f.events || !f.quiet {
		stop := tellNoWorker(ctx, c, stderr, f.events)
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

// tellNoWorker says on stderr, once, when no worker polls the task queue two
// seconds after the round was submitted: the round starts when one does.
func tellNoWorker(ctx context.Context, c *client.Client, stderr io.Writer, asJSON bool) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		if ok, err := c.HasWorkers(ctx); err != nil || ok {
			return
		}
		msg := client.NoWorkerError(c.TaskQueue()).Error() + "; the round starts when one does"
		if asJSON {
			b, _ := json.Marshal(map[string]string{"type": "waiting_for_worker", "task_queue": c.TaskQueue(), "detail": msg})
			fmt.Fprintln(stderr, string(b))
			return
		}
		fmt.Fprintln(stderr, msg)
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
	default:
		fmt.Fprintf(stderr, "waiting for client tool %s (call %s)\n", p.Tool, p.CallID)
	}
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

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printTools lists the tools a worker with the same configuration offers:
// the built-ins, MCP_CONFIG's servers and TOOLS_CONFIG's tools. Only MCP
// servers are started (to ask them for their tools); nothing needs Temporal,
// Redis or the workdir.
func printTools(ctx context.Context, w io.Writer, provider string) error {
	reg, err := client.Catalog()
	if err != nil {
		return err
	}
	dir := envconf.Get("TOOLS_WORKDIR", "./workdir")
	if path := envconf.Get(mcp.ConfigEnv, ""); path != "" {
		mc, err := mcp.LoadConfig(path)
		if err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			mc.Dir = dir
		}
		mc.Logger = slog.New(slog.DiscardHandler)
		m, err := mcp.Connect(ctx, mc)
		if err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
		defer m.Close()
		if err := m.Register(reg); err != nil {
			return fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	if path := envconf.Get(ext.ConfigEnv, ""); path != "" {
		tc, err := ext.Load(path)
		if err != nil {
			return fmt.Errorf("TOOLS_CONFIG: %w", err)
		}
		if err := ext.Register(reg, tc, dir); err != nil {
			return fmt.Errorf("TOOLS_CONFIG: %w", err)
		}
	}
	return printJSON(w, reg.ToolsFor(provider, nil))
}

func watch(ctx context.Context, w io.Writer, sessionID string, asJSON, all bool) error {
	url := envconf.RedisURL()
	if url == "" {
		return errors.New("watch needs Redis (REDIS_URL): events are published to a Redis stream per session")
	}
	rc, err := cache.Open(ctx, cache.Options{URL: url, OpTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer rc.Close()
	from := "$"
	if all {
		from = "0"
	}
	return rc.Events().Watch(ctx, sessionID, from, func(e round.Event) error {
		if asJSON {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(w, string(b))
			return err
		}
		_, err := fmt.Fprintln(w, FormatEvent(e))
		return err
	})
}

// FormatEvent is one readable line per event.
func FormatEvent(e round.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s/round %d  %-22s", e.Time.Local().Format("15:04:05.000"), e.RunID, e.Round, e.Type)
	if e.CallID != "" {
		fmt.Fprintf(&b, "  %s %s", e.CallID, e.Tool)
	}
	if e.Status != "" {
		fmt.Fprintf(&b, "  [%s]", e.Status)
	}
	if e.Type == round.EventCallFinished {
		fmt.Fprintf(&b, "  %d ms", e.DurationMS)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, "  %s", oneLine(e.Detail))
	}
	return b.String()
}
