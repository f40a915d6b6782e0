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
	"strings"
	"syscall"
	"time"

	"github.com/toolround/toolround/cache"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/engine"
	"github.com/toolround/toolround/round"
)

const usage = `usage:
  starter round FILE|-                      run a round, print its result as JSON
  starter approve WORKFLOW_ID CALL_ID [--reason TEXT] [--remember] [--pattern P] [--allow-turn]
  starter deny WORKFLOW_ID CALL_ID [--reason TEXT]
  starter pending WORKFLOW_ID               what the round waits for (JSON)
  starter progress WORKFLOW_ID              which calls are queued, running, done (JSON)
  starter answer WORKFLOW_ID CALL_ID ANSWER...   answer an ask_user call
  starter cancel WORKFLOW_ID                cancel a round (every call still gets a result)
  starter result WORKFLOW_ID                wait for a round's result (JSON)
  starter tools --provider P                the provider's tools array and deferred names (JSON)
  starter watch SESSION_ID [--json] [--all] the session's events as they happen
environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TASK_QUEUE, REDIS_URL, TOOLS_WORKDIR`

// exit codes
const (
	exitFailed = 1 // the round failed or a command could not be carried out
	exitUsage  = 2 // bad arguments or unusable input
)

type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starter: "+oneLine(err.Error()))
		var u usageError
		if errors.As(err, &u) {
			os.Exit(exitUsage)
		}
		os.Exit(exitFailed)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	reason := fs.String("reason", "", "why")
	remember := fs.Bool("remember", false, "remember an allow rule")
	pattern := fs.String("pattern", "", "allow rule pattern")
	allowTurn := fs.Bool("allow-turn", false, "approve the rest of the round")
	provider := fs.String("provider", "", "provider")
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "from the start of the stream")
	quiet := fs.Bool("quiet", false, "no hints on stderr")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", cmd, err)}
	}
	need := func(n int, what string) error {
		if len(pos) < n {
			return usageError{fmt.Errorf("%s needs %s\n%s", cmd, what, usage)}
		}
		return nil
	}
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		return usageError{err}
	}

	switch cmd {
	case "tools":
		if *provider == "" {
			return usageError{errors.New("tools needs --provider P (claude-code or any other name)")}
		}
		return printTools(ctx, stdout, cfg, *provider)
	case "watch":
		if err := need(1, "SESSION_ID"); err != nil {
			return err
		}
		return watch(ctx, stdout, cfg, pos[0], *asJSON, *all)
	}

	var in *round.Input
	if cmd == "round" {
		if err := need(1, "FILE or -"); err != nil {
			return err
		}
		if in, err = readInput(pos[0], stdin); err != nil {
			return usageError{err}
		}
	}
	c, closeAll, err := dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeAll()

	switch cmd {
	case "round":
		return runRound(ctx, c, in, stdout, stderr, *quiet)
	case "approve", "deny":
		if err := need(2, "WORKFLOW_ID CALL_ID"); err != nil {
			return err
		}
		o := client.ConfirmOptions{Reason: *reason, Remember: *remember, AllowTurn: *allowTurn, Pattern: *pattern}
		if cmd == "approve" {
			return c.Approve(ctx, pos[0], pos[1], o)
		}
		return c.Deny(ctx, pos[0], pos[1], o)
	case "answer":
		if err := need(3, "WORKFLOW_ID CALL_ID ANSWER..."); err != nil {
			return err
		}
		return c.Answer(ctx, pos[0], pos[1], pos[2:])
	case "pending":
		if err := need(1, "WORKFLOW_ID"); err != nil {
			return err
		}
		p, err := c.Pending(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, p)
	case "progress":
		if err := need(1, "WORKFLOW_ID"); err != nil {
			return err
		}
		p, err := c.Progress(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, p)
	case "cancel":
		if err := need(1, "WORKFLOW_ID"); err != nil {
			return err
		}
		return c.Cancel(ctx, pos[0])
	case "result":
		if err := need(1, "WORKFLOW_ID"); err != nil {
			return err
		}
		res, err := c.Result(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, res)
	default:
		return usageError{fmt.Errorf("unknown command %q\n%s", cmd, usage)}
	}
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

func dial(ctx context.Context, cfg engine.Config) (*client.Client, func(), error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc, err := engine.Dial(cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	opts := client.Options{TaskQueue: cfg.TaskQueue, Prepare: client.SealSecrets(cfg.Secrets)}
	var rc *cache.Client
	if cfg.RedisURL != "" {
		if rc, err = cache.Open(ctx, cache.Options{URL: cfg.RedisURL, Logger: logger}); err == nil {
			opts.Blobs = rc.Blobs()
		}
	}
	closeAll := func() {
		tc.Close()
		if rc != nil {
			_ = rc.Close()
		}
	}
	return client.New(tc, opts), closeAll, nil
}

func runRound(ctx context.Context, c *client.Client, in *round.Input, stdout, stderr io.Writer, quiet bool) error {
	run, err := c.Start(ctx, in)
	if errors.Is(err, client.ErrInputTooLarge) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if !quiet {
		stopHints := hintPending(ctx, c, run.GetID(), stderr)
		defer stopHints()
	}
	res, err := c.Wait(ctx, run)
	if err != nil {
		return err
	}
	return printJSON(stdout, res)
}

// hintPending tells the person at the terminal which calls wait for them and
// how to answer, once per call.
func hintPending(ctx context.Context, c *client.Client, wfID string, stderr io.Writer) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		told := map[string]bool{}
		workers := false
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for tick := 1; ; tick++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// A query needs a worker: without one it would only time out.
			if !workers {
				ok, err := c.HasWorkers(ctx)
				workers = err == nil && ok
				if !workers && tick == 2 {
					fmt.Fprintf(stderr, "no worker polls task queue %q: the round starts when one does (run bin/worker with the same TASK_QUEUE)\n", c.TaskQueue())
				}
				if !workers {
					continue
				}
			}
			qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
			pending, err := c.Pending(qctx, wfID)
			qcancel()
			if err != nil {
				continue
			}
			for _, p := range pending {
				if told[p.CallID] {
					continue
				}
				told[p.CallID] = true
				switch p.Kind {
				case round.KindConfirm:
					fmt.Fprintf(stderr, "waiting for approval: %s %s (%s)\n  starter approve %s %s   |   starter deny %s %s --reason TEXT\n",
						p.Tool, p.Subject, p.Reason, wfID, p.CallID, wfID, p.CallID)
				case round.KindAnswer:
					fmt.Fprintf(stderr, "waiting for an answer: %s\n  starter answer %s %s ANSWER...\n", strings.Join(p.Questions, " | "), wfID, p.CallID)
				default:
					fmt.Fprintf(stderr, "waiting for client tool %s (call %s)\n", p.Tool, p.CallID)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printTools lists the tools a worker with the same configuration offers:
// the built-ins, MCP_CONFIG's servers and TOOLS_CONFIG's tools.
func printTools(ctx context.Context, w io.Writer, cfg engine.Config, provider string) error {
	cfg.RedisURL = "" // listing schemas needs no Redis
	e, err := engine.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	return printJSON(w, e.Registry.ToolsFor(provider, nil))
}

func watch(ctx context.Context, w io.Writer, cfg engine.Config, sessionID string, asJSON, all bool) error {
	if cfg.RedisURL == "" {
		return errors.New("watch needs Redis (REDIS_URL): events are published to a Redis stream per session")
	}
	rc, err := cache.Open(ctx, cache.Options{URL: cfg.RedisURL, OpTimeout: 5 * time.Second})
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
	if e.Detail != "" {
		fmt.Fprintf(&b, "  %s", oneLine(e.Detail))
	}
	return b.String()
}
