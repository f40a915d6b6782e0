// Command starter is toolround's command-line client: it submits a round and
// prints its result, answers confirmations, and shows what rounds wait for.
//
// Every command is one entry of commands, defined in its own file
// (round.go, decide.go, ...); main parses the arguments, finds the command
// and reports its error.
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
	"strings"
	"syscall"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/internal/text"
)

// command is one command of starter: its arguments, what it does, its flags
// and what runs it.
type command struct {
	name string
	// args are its arguments as its usage shows them; brief, when set, is
	// the shorter form the list of commands shows.
	args, brief string
	// summary says what it does; its first line goes in the list of
	// commands.
	summary string
	// npos is how many positional arguments it needs at least.
	npos int
	// flags defines its flags on fs, with their values in f.
	flags func(fs *flag.FlagSet, f *flags)
	// flagsInArgs: args name the flags already, so its usage adds no
	// [FLAGS].
	flagsInArgs bool
	// ownArgs: run gets the arguments as given and parses them itself
	// (workspace, whose subcommand comes first); nothing is checked before.
	ownArgs bool
	// run carries it out once its arguments parsed.
	run func(ctx context.Context, x *call) error
}

// call is one run of a command: its positional arguments and flag values,
// where it reads and writes, and its usage for the usage errors it finds.
type call struct {
	pos            []string
	f              flags
	stdin          io.Reader
	stdout, stderr io.Writer
	usage          string
}

// flags holds every command's flag values; each command defines only its
// own.
type flags struct {
	reason, pattern, provider string
	format                    string // tools
	fromWorker                bool   // tools
	as, args                  string
	remember, allowTurn       bool
	asJSON, all, quiet        bool
	events                    bool
	after                     string // round --after FILE
	session                   string // inbox, agent
	upTo                      int64
	scope                     string // approve --scope (T12)
	yes                       bool   // approve --yes (T11)
	// answer: an MCP server's request (E1), answered with --json,
	// --decline or --cancel.
	answerJSON               string
	declineAnswer, cancelAns bool
	// agent
	run                       string
	autoApprove               bool
	maxRounds, confirmTimeout int
	limits                    string
	model                     string // scripted:FILE
	url                       string // mcp --url
}

// commands is every command, in the order the usage lists them.
var commands = []*command{
	roundCommand, approveCommand, denyCommand, extendCommand, pendingCommand, progressCommand,
	answerCommand, cancelCommand, resultCommand, toolsCommand, watchCommand, inboxCommand,
	agentCommand, agentStatusCommand, agentMessageCommand, workspaceCommand, mcpCommand, toolKeyCommand,
}

// find is the command called name, or nil.
func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

const environment = "environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TASK_QUEUE, TEMPORAL_TLS_*, TEMPORAL_API_KEY, REDIS_URL, TOOLROUND_SECRET_KEY"

// usage lists every command.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: starter COMMAND [ARGS] [FLAGS]   (starter COMMAND --help for its flags)\n\ncommands:\n")
	for _, cmd := range commands {
		args := cmd.args
		if cmd.brief != "" {
			args = cmd.brief
		}
		first, _, _ := strings.Cut(cmd.summary, "\n")
		fmt.Fprintf(&b, "  %-40s %s\n", cmd.name+" "+args, first)
	}
	b.WriteString("\n" + environment)
	return b.String()
}

// commandUsage is one command's usage with its flags.
func commandUsage(cmd *command, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: starter %s %s", cmd.name, cmd.args)
	if cmd.flags != nil && !cmd.flagsInArgs {
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

// oneLine is s on one line for a person to read, its hidden characters
// (text.Hidden: escape sequences, bidi overrides, zero-width) written as
// \uXXXX (T14).
func oneLine(s string) string {
	return strings.Join(strings.Fields(text.Visible(s)), " ")
}

// run parses args, finds the command they name and runs it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("no command given"), usage()}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		// help COMMAND is COMMAND --help.
		if len(args) > 1 && find(args[1]) != nil {
			return run(ctx, []string{args[1], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprintln(stdout, usage())
		return nil
	}
	name, args := args[0], args[1:]
	cmd := find(name)
	if cmd == nil {
		return usageError{unknownCommand(name), usage()}
	}
	x := &call{stdin: stdin, stdout: stdout, stderr: stderr}
	if cmd.ownArgs {
		x.pos = args
		return cmd.run(ctx, x)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.flags != nil {
		cmd.flags(fs, &x.f)
	}
	x.usage = commandUsage(cmd, fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		_, err := fmt.Fprintln(stdout, x.usage)
		return err
	}
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", name, flagError(fs, err)), x.usage}
	}
	if len(pos) < cmd.npos {
		return usageError{fmt.Errorf("%s needs %s", name, cmd.args), x.usage}
	}
	x.pos = pos
	return cmd.run(ctx, x)
}

// unknownCommand names the closest command to a mistyped one.
func unknownCommand(name string) error {
	known := []string{"help"}
	for _, c := range commands {
		known = append(known, c.name)
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
