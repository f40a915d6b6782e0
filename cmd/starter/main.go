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
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round"
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
	format                    string // tools
	fromWorker                bool   // tools
	as, args                  string
	remember, allowTurn       bool
	asJSON, all, quiet        bool
	events                    bool
	session                   string // inbox (inbox.go)
	upTo                      int64
	scope                     string // approve --scope (T12)
	// answer: an MCP server's request (E1), answered with --json,
	// --decline or --cancel.
	answerJSON               string
	declineAnswer, cancelAns bool
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
		}},
	"deny": {args: "WORKFLOW_ID CALL_ID", npos: 2, summary: "Skip a waiting call; its result says it was skipped by the user.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.reason, "reason", "", "why, shown to the model in the call's result")
			fs.StringVar(&f.as, "as", "", "who denies, recorded with the decision; default: your OS user at the host name, user@host")
		}},
	"extend": {args: "WORKFLOW_ID CALL_ID DURATION", npos: 3,
		summary: "Add DURATION (e.g. 30m, 2h, or seconds) to a waiting call's deadline; at most 7 days after it started to wait."},
	"pending":  {args: "WORKFLOW_ID", npos: 1, summary: "Print what a round waits for (JSON): calls to approve, questions, client tools."},
	"progress": {args: "WORKFLOW_ID", npos: 1, summary: "Print which calls of a round are queued, running, waiting or done (JSON)."},
	"answer": {args: "WORKFLOW_ID CALL_ID ANSWER... | WORKFLOW_ID CALL_ID --json J | --decline | --cancel", npos: 2,
		summary: "Answer an ask_user call (its answers, in order), or a call whose MCP server asks for input:\n" +
			"--json gives the requested form's values (checked against its schema), --decline or --cancel refuses.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.answerJSON, "json", "", "accept an MCP server's request with these values (a JSON object)")
			fs.BoolVar(&f.declineAnswer, "decline", false, "decline an MCP server's request")
			fs.BoolVar(&f.cancelAns, "cancel", false, "cancel an MCP server's request (dismiss it without a choice)")
			fs.StringVar(&f.as, "as", "", "who answers, recorded with the answer; default: your OS user at the host name, user@host")
		}},
	"cancel": {args: "WORKFLOW_ID", npos: 1, summary: "Cancel a round; every call still gets a result."},
	"result": {args: "WORKFLOW_ID", npos: 1, summary: "Wait for a round's result and print it (JSON)."},
	"tools": {args: "--provider P [--format openai|anthropic|responses] [--worker]", summary: "Print a provider's tools array, deferred names and turn-context line (JSON): the built-in tools, MCP_CONFIG's and TOOLS_CONFIG's.\n" +
		"claude-code gets every tool; any other provider gets find_tools, run_tool and the always-loaded tools.\n" +
		"MCP tools are the worker's: --worker asks a running worker of TASK_QUEUE for its own list instead.",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.StringVar(&f.provider, "provider", "", "the session's provider: claude-code, or any other name (required)")
			fs.StringVar(&f.format, "format", "", "the tools array's wire format: openai (chat completions, the default), anthropic (Messages API) or responses (Responses API)")
			fs.BoolVar(&f.fromWorker, "worker", false, "ask a worker of TASK_QUEUE for the tools it offers (its MCP servers' included) instead of reading MCP_CONFIG and TOOLS_CONFIG here; needs Temporal")
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
	b.WriteString(agentUsage())
	fmt.Fprintf(&b, "  %-40s %s\n", "workspace ls|du|rm|move [SESSION [HOST]]", "List, measure or remove the sessions' workspaces (WORKSPACE=session).")
	b.WriteString("\n" + environment)
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
	if name == "workspace" {
		return runWorkspace(ctx, args, stdout)
	}
	if ok, err := runAgentCommand(ctx, name, args, stdout, stderr); ok {
		return err
	}
	cmd, ok := commands[name]
	if !ok {
		return usageError{unknownCommand(name), usage()}
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
		return usageError{fmt.Errorf("%s: %w", name, flagError(fs, err)), commandUsage(name, cmd, fs)}
	}
	if len(pos) < cmd.npos {
		return usageError{fmt.Errorf("%s needs %s", name, cmd.args), commandUsage(name, cmd, fs)}
	}

	switch name {
	case "tools":
		if f.provider == "" {
			return usageError{errors.New("tools needs --provider P (claude-code or any other name)"), commandUsage(name, cmd, fs)}
		}
		if err := round.CheckProvider(f.provider); err != nil {
			return usageError{error: err}
		}
		if f.fromWorker {
			return printWorkerTools(ctx, stdout, stderr, f.provider, f.format)
		}
		return printTools(ctx, stdout, stderr, f.provider, f.format)
	case "watch":
		return watch(ctx, stdout, pos[0], f.asJSON, f.all)
	}

	if name == "approve" && f.args != "" && !json.Valid([]byte(f.args)) {
		return usageError{errors.New("approve --args: not JSON; give the arguments as a JSON object"), ""}
	}
	if name == "answer" {
		if err := checkAnswerFlags(f, pos); err != nil {
			return usageError{err, commandUsage(name, cmd, fs)}
		}
	}
	if name == "approve" && f.scope != "" && !f.remember {
		return usageError{errors.New("approve --scope is a remembered rule's: give it with --remember"), ""}
	}
	if name == "approve" && f.upTo != 0 && !f.remember {
		return usageError{errors.New("approve --up-to bounds a remembered rule: give it with --remember"), ""}
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
		res, err := c.ExtendDeadline(ctx, pos[0], pos[1], d)
		if err != nil {
			return err
		}
		fmt.Fprintln(stderr, extendedLine(pos[1], d, res))
		return nil
	case "answer":
		if elicitAnswer(f) {
			return answerElicitation(ctx, c, pos[0], pos[1], f)
		}
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

func printUsage(w io.Writer, name string, cmd command) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if cmd.flags != nil {
		cmd.flags(fs, &flags{})
	}
	_, err := fmt.Fprintln(w, commandUsage(name, cmd, fs))
	return err
}

// unknownCommand names the closest command to a mistyped one.
func unknownCommand(name string) error {
	known := []string{"workspace", "help"}
	for n := range commands {
		known = append(known, n)
	}
	for n := range agentCommands {
		known = append(known, n)
	}
	sort.Strings(known)
	if c := text.Closest(name, known); c != "" {
		return fmt.Errorf("unknown command %q; did you mean %q?", name, c)
	}
	return fmt.Errorf("unknown command %q", name)
}

// flagError adds the closest flag of fs to the flag package's error for a
// flag it does not define.
func flagError(fs *flag.FlagSet, err error) error {
	const undefined = "flag provided but not defined: "
	given, ok := strings.CutPrefix(err.Error(), undefined)
	if !ok {
		return err
	}
	given = strings.TrimLeft(given, "-")
	var known []string
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	if c := text.Closest(given, known); c != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, c)
	}
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

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
